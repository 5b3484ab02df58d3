from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    agent: str,
    *,
    acp_connection_id: str,
    acp_session_id: None | str | Unset = UNSET,
    last_event_id: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    headers["Acp-Connection-Id"] = acp_connection_id

    if not isinstance(acp_session_id, Unset):
        headers["Acp-Session-Id"] = acp_session_id

    if not isinstance(last_event_id, Unset):
        headers["Last-Event-ID"] = last_event_id

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/agents/{agent}/acp".format(
            agent=quote(str(agent), safe=""),
        ),
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | str | None:
    if response.status_code == 200:
        response_200 = response.text
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

    if response.status_code == 406:
        response_406 = ErrorBody.from_dict(response.json())

        return response_406

    if response.status_code == 409:
        response_409 = ErrorBody.from_dict(response.json())

        return response_409

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
) -> Response[ErrorBody | str]:
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
    acp_connection_id: str,
    acp_session_id: None | str | Unset = UNSET,
    last_event_id: None | str | Unset = UNSET,
) -> Response[ErrorBody | str]:
    """Follow an ACP stream

     The connection's stream, or with Acp-Session-Id a session's: JSON-RPC messages over SSE, each with
    an id; Last-Event-ID resumes with nothing missed while the stream still holds it.

    Args:
        agent (str):
        acp_connection_id (str):
        acp_session_id (None | str | Unset):
        last_event_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | str]
    """

    kwargs = _get_kwargs(
        agent=agent,
        acp_connection_id=acp_connection_id,
        acp_session_id=acp_session_id,
        last_event_id=last_event_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    agent: str,
    *,
    client: AuthenticatedClient,
    acp_connection_id: str,
    acp_session_id: None | str | Unset = UNSET,
    last_event_id: None | str | Unset = UNSET,
) -> ErrorBody | str | None:
    """Follow an ACP stream

     The connection's stream, or with Acp-Session-Id a session's: JSON-RPC messages over SSE, each with
    an id; Last-Event-ID resumes with nothing missed while the stream still holds it.

    Args:
        agent (str):
        acp_connection_id (str):
        acp_session_id (None | str | Unset):
        last_event_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | str
    """

    return sync_detailed(
        agent=agent,
        client=client,
        acp_connection_id=acp_connection_id,
        acp_session_id=acp_session_id,
        last_event_id=last_event_id,
    ).parsed


async def asyncio_detailed(
    agent: str,
    *,
    client: AuthenticatedClient,
    acp_connection_id: str,
    acp_session_id: None | str | Unset = UNSET,
    last_event_id: None | str | Unset = UNSET,
) -> Response[ErrorBody | str]:
    """Follow an ACP stream

     The connection's stream, or with Acp-Session-Id a session's: JSON-RPC messages over SSE, each with
    an id; Last-Event-ID resumes with nothing missed while the stream still holds it.

    Args:
        agent (str):
        acp_connection_id (str):
        acp_session_id (None | str | Unset):
        last_event_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | str]
    """

    kwargs = _get_kwargs(
        agent=agent,
        acp_connection_id=acp_connection_id,
        acp_session_id=acp_session_id,
        last_event_id=last_event_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    agent: str,
    *,
    client: AuthenticatedClient,
    acp_connection_id: str,
    acp_session_id: None | str | Unset = UNSET,
    last_event_id: None | str | Unset = UNSET,
) -> ErrorBody | str | None:
    """Follow an ACP stream

     The connection's stream, or with Acp-Session-Id a session's: JSON-RPC messages over SSE, each with
    an id; Last-Event-ID resumes with nothing missed while the stream still holds it.

    Args:
        agent (str):
        acp_connection_id (str):
        acp_session_id (None | str | Unset):
        last_event_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | str
    """

    return (
        await asyncio_detailed(
            agent=agent,
            client=client,
            acp_connection_id=acp_connection_id,
            acp_session_id=acp_session_id,
            last_event_id=last_event_id,
        )
    ).parsed
