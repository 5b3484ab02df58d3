from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.fork_body import ForkBody
from ...models.thread_view import ThreadView
from ...types import UNSET, Response, Unset


def _get_kwargs(
    agent: str,
    key: str,
    *,
    body: ForkBody,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/agents/{agent}/threads/{key}/fork".format(
            agent=quote(str(agent), safe=""),
            key=quote(str(key), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | ThreadView | None:
    if response.status_code == 201:
        response_201 = ThreadView.from_dict(response.json())

        return response_201

    if response.status_code == 400:
        response_400 = ErrorBody.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = ErrorBody.from_dict(response.json())

        return response_401

    if response.status_code == 404:
        response_404 = ErrorBody.from_dict(response.json())

        return response_404

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

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ErrorBody | ThreadView]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    agent: str,
    key: str,
    *,
    client: AuthenticatedClient,
    body: ForkBody,
    idempotency_key: str | Unset = UNSET,
) -> Response[ErrorBody | ThreadView]:
    """Fork a thread

     Declares a new thread whose first run starts from this thread's checkpoint.

    Args:
        agent (str):
        key (str):
        idempotency_key (str | Unset):
        body (ForkBody): The body of a fork.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | ThreadView]
    """

    kwargs = _get_kwargs(
        agent=agent,
        key=key,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    agent: str,
    key: str,
    *,
    client: AuthenticatedClient,
    body: ForkBody,
    idempotency_key: str | Unset = UNSET,
) -> ErrorBody | ThreadView | None:
    """Fork a thread

     Declares a new thread whose first run starts from this thread's checkpoint.

    Args:
        agent (str):
        key (str):
        idempotency_key (str | Unset):
        body (ForkBody): The body of a fork.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | ThreadView
    """

    return sync_detailed(
        agent=agent,
        key=key,
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    agent: str,
    key: str,
    *,
    client: AuthenticatedClient,
    body: ForkBody,
    idempotency_key: str | Unset = UNSET,
) -> Response[ErrorBody | ThreadView]:
    """Fork a thread

     Declares a new thread whose first run starts from this thread's checkpoint.

    Args:
        agent (str):
        key (str):
        idempotency_key (str | Unset):
        body (ForkBody): The body of a fork.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | ThreadView]
    """

    kwargs = _get_kwargs(
        agent=agent,
        key=key,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    agent: str,
    key: str,
    *,
    client: AuthenticatedClient,
    body: ForkBody,
    idempotency_key: str | Unset = UNSET,
) -> ErrorBody | ThreadView | None:
    """Fork a thread

     Declares a new thread whose first run starts from this thread's checkpoint.

    Args:
        agent (str):
        key (str):
        idempotency_key (str | Unset):
        body (ForkBody): The body of a fork.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | ThreadView
    """

    return (
        await asyncio_detailed(
            agent=agent,
            key=key,
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
