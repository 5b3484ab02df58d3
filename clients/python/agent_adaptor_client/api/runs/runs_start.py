from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.run_view import RunView
from ...models.start_run_body import StartRunBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    agent: str,
    *,
    body: StartRunBody,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/agents/{agent}/runs".format(
            agent=quote(str(agent), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | RunView | None:
    if response.status_code == 201:
        response_201 = RunView.from_dict(response.json())

        return response_201

    if response.status_code == 400:
        response_400 = ErrorBody.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = ErrorBody.from_dict(response.json())

        return response_401

    if response.status_code == 402:
        response_402 = ErrorBody.from_dict(response.json())

        return response_402

    if response.status_code == 403:
        response_403 = ErrorBody.from_dict(response.json())

        return response_403

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

    if response.status_code == 503:
        response_503 = ErrorBody.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ErrorBody | RunView]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    agent: str,
    *,
    client: AuthenticatedClient,
    body: StartRunBody,
    idempotency_key: str | Unset = UNSET,
) -> Response[ErrorBody | RunView]:
    """Start a stateless run

     Starts a run with no thread; its events are kept and replayable like any run's.

    Args:
        agent (str):
        idempotency_key (str | Unset):
        body (StartRunBody): The body of a run start.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | RunView]
    """

    kwargs = _get_kwargs(
        agent=agent,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    agent: str,
    *,
    client: AuthenticatedClient,
    body: StartRunBody,
    idempotency_key: str | Unset = UNSET,
) -> ErrorBody | RunView | None:
    """Start a stateless run

     Starts a run with no thread; its events are kept and replayable like any run's.

    Args:
        agent (str):
        idempotency_key (str | Unset):
        body (StartRunBody): The body of a run start.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | RunView
    """

    return sync_detailed(
        agent=agent,
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    agent: str,
    *,
    client: AuthenticatedClient,
    body: StartRunBody,
    idempotency_key: str | Unset = UNSET,
) -> Response[ErrorBody | RunView]:
    """Start a stateless run

     Starts a run with no thread; its events are kept and replayable like any run's.

    Args:
        agent (str):
        idempotency_key (str | Unset):
        body (StartRunBody): The body of a run start.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | RunView]
    """

    kwargs = _get_kwargs(
        agent=agent,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    agent: str,
    *,
    client: AuthenticatedClient,
    body: StartRunBody,
    idempotency_key: str | Unset = UNSET,
) -> ErrorBody | RunView | None:
    """Start a stateless run

     Starts a run with no thread; its events are kept and replayable like any run's.

    Args:
        agent (str):
        idempotency_key (str | Unset):
        body (StartRunBody): The body of a run start.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | RunView
    """

    return (
        await asyncio_detailed(
            agent=agent,
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
