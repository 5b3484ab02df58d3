from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.decision_accepted import DecisionAccepted
from ...models.decision_body import DecisionBody
from ...models.error_body import ErrorBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    run_id: str,
    id: str,
    *,
    body: DecisionBody,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/runs/{run_id}/approvals/{id}".format(
            run_id=quote(str(run_id), safe=""),
            id=quote(str(id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> DecisionAccepted | ErrorBody | None:
    if response.status_code == 200:
        response_200 = DecisionAccepted.from_dict(response.json())

        return response_200

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

    if response.status_code == 410:
        response_410 = ErrorBody.from_dict(response.json())

        return response_410

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
) -> Response[DecisionAccepted | ErrorBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    run_id: str,
    id: str,
    *,
    client: AuthenticatedClient,
    body: DecisionBody,
    idempotency_key: str | Unset = UNSET,
) -> Response[DecisionAccepted | ErrorBody]:
    """Answer an approval

     Approves, denies or answers a request exactly once: 409 when already resolved, 410 when expired, 422
    for the wrong kind of answer.

    Args:
        run_id (str):
        id (str):
        idempotency_key (str | Unset):
        body (DecisionBody): The body of an approval answer.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DecisionAccepted | ErrorBody]
    """

    kwargs = _get_kwargs(
        run_id=run_id,
        id=id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    run_id: str,
    id: str,
    *,
    client: AuthenticatedClient,
    body: DecisionBody,
    idempotency_key: str | Unset = UNSET,
) -> DecisionAccepted | ErrorBody | None:
    """Answer an approval

     Approves, denies or answers a request exactly once: 409 when already resolved, 410 when expired, 422
    for the wrong kind of answer.

    Args:
        run_id (str):
        id (str):
        idempotency_key (str | Unset):
        body (DecisionBody): The body of an approval answer.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DecisionAccepted | ErrorBody
    """

    return sync_detailed(
        run_id=run_id,
        id=id,
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    run_id: str,
    id: str,
    *,
    client: AuthenticatedClient,
    body: DecisionBody,
    idempotency_key: str | Unset = UNSET,
) -> Response[DecisionAccepted | ErrorBody]:
    """Answer an approval

     Approves, denies or answers a request exactly once: 409 when already resolved, 410 when expired, 422
    for the wrong kind of answer.

    Args:
        run_id (str):
        id (str):
        idempotency_key (str | Unset):
        body (DecisionBody): The body of an approval answer.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DecisionAccepted | ErrorBody]
    """

    kwargs = _get_kwargs(
        run_id=run_id,
        id=id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    run_id: str,
    id: str,
    *,
    client: AuthenticatedClient,
    body: DecisionBody,
    idempotency_key: str | Unset = UNSET,
) -> DecisionAccepted | ErrorBody | None:
    """Answer an approval

     Approves, denies or answers a request exactly once: 409 when already resolved, 410 when expired, 422
    for the wrong kind of answer.

    Args:
        run_id (str):
        id (str):
        idempotency_key (str | Unset):
        body (DecisionBody): The body of an approval answer.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DecisionAccepted | ErrorBody
    """

    return (
        await asyncio_detailed(
            run_id=run_id,
            id=id,
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
