from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.create_webhook_body import CreateWebhookBody
from ...models.error_body import ErrorBody
from ...models.webhook_created import WebhookCreated
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: CreateWebhookBody,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/webhooks",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | WebhookCreated | None:
    if response.status_code == 201:
        response_201 = WebhookCreated.from_dict(response.json())

        return response_201

    if response.status_code == 400:
        response_400 = ErrorBody.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = ErrorBody.from_dict(response.json())

        return response_401

    if response.status_code == 408:
        response_408 = ErrorBody.from_dict(response.json())

        return response_408

    if response.status_code == 409:
        response_409 = ErrorBody.from_dict(response.json())

        return response_409

    if response.status_code == 413:
        response_413 = ErrorBody.from_dict(response.json())

        return response_413

    if response.status_code == 415:
        response_415 = ErrorBody.from_dict(response.json())

        return response_415

    if response.status_code == 422:
        response_422 = ErrorBody.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = ErrorBody.from_dict(response.json())

        return response_429

    if response.status_code == 503:
        response_503 = ErrorBody.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ErrorBody | WebhookCreated]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: CreateWebhookBody,
    idempotency_key: str | Unset = UNSET,
) -> Response[ErrorBody | WebhookCreated]:
    """Create a webhook

     Subscribes a URL to the tenant's events (run.finished, run.failed, approval.requested,
    message.failed). The answer carries the signing secret, shown only this once: every delivery is
    signed per the Standard Webhooks specification (webhook-id, webhook-timestamp, webhook-signature
    headers; docs/webhooks.md).

    Args:
        idempotency_key (str | Unset):
        body (CreateWebhookBody): The body of `POST /v1/webhooks`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | WebhookCreated]
    """

    kwargs = _get_kwargs(
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: CreateWebhookBody,
    idempotency_key: str | Unset = UNSET,
) -> ErrorBody | WebhookCreated | None:
    """Create a webhook

     Subscribes a URL to the tenant's events (run.finished, run.failed, approval.requested,
    message.failed). The answer carries the signing secret, shown only this once: every delivery is
    signed per the Standard Webhooks specification (webhook-id, webhook-timestamp, webhook-signature
    headers; docs/webhooks.md).

    Args:
        idempotency_key (str | Unset):
        body (CreateWebhookBody): The body of `POST /v1/webhooks`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | WebhookCreated
    """

    return sync_detailed(
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: CreateWebhookBody,
    idempotency_key: str | Unset = UNSET,
) -> Response[ErrorBody | WebhookCreated]:
    """Create a webhook

     Subscribes a URL to the tenant's events (run.finished, run.failed, approval.requested,
    message.failed). The answer carries the signing secret, shown only this once: every delivery is
    signed per the Standard Webhooks specification (webhook-id, webhook-timestamp, webhook-signature
    headers; docs/webhooks.md).

    Args:
        idempotency_key (str | Unset):
        body (CreateWebhookBody): The body of `POST /v1/webhooks`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | WebhookCreated]
    """

    kwargs = _get_kwargs(
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: CreateWebhookBody,
    idempotency_key: str | Unset = UNSET,
) -> ErrorBody | WebhookCreated | None:
    """Create a webhook

     Subscribes a URL to the tenant's events (run.finished, run.failed, approval.requested,
    message.failed). The answer carries the signing secret, shown only this once: every delivery is
    signed per the Standard Webhooks specification (webhook-id, webhook-timestamp, webhook-signature
    headers; docs/webhooks.md).

    Args:
        idempotency_key (str | Unset):
        body (CreateWebhookBody): The body of `POST /v1/webhooks`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | WebhookCreated
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
