from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.standby_view import StandbyView
from ...types import Response


def _get_kwargs(
    agent: str,
    key: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/agents/{agent}/threads/{key}/standby".format(
            agent=quote(str(agent), safe=""),
            key=quote(str(key), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | StandbyView | None:
    if response.status_code == 200:
        response_200 = StandbyView.from_dict(response.json())

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
) -> Response[ErrorBody | StandbyView]:
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
) -> Response[ErrorBody | StandbyView]:
    """Get a Standby

     The thread's live Standby.

    Args:
        agent (str):
        key (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | StandbyView]
    """

    kwargs = _get_kwargs(
        agent=agent,
        key=key,
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
) -> ErrorBody | StandbyView | None:
    """Get a Standby

     The thread's live Standby.

    Args:
        agent (str):
        key (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | StandbyView
    """

    return sync_detailed(
        agent=agent,
        key=key,
        client=client,
    ).parsed


async def asyncio_detailed(
    agent: str,
    key: str,
    *,
    client: AuthenticatedClient,
) -> Response[ErrorBody | StandbyView]:
    """Get a Standby

     The thread's live Standby.

    Args:
        agent (str):
        key (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | StandbyView]
    """

    kwargs = _get_kwargs(
        agent=agent,
        key=key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    agent: str,
    key: str,
    *,
    client: AuthenticatedClient,
) -> ErrorBody | StandbyView | None:
    """Get a Standby

     The thread's live Standby.

    Args:
        agent (str):
        key (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | StandbyView
    """

    return (
        await asyncio_detailed(
            agent=agent,
            key=key,
            client=client,
        )
    ).parsed
