from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.acp_post_body import AcpPostBody
from ...models.acp_post_response_200 import AcpPostResponse200
from ...models.error_body import ErrorBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    agent: str,
    *,
    body: AcpPostBody,
    acp_connection_id: None | str | Unset = UNSET,
    acp_session_id: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(acp_connection_id, Unset):
        headers["Acp-Connection-Id"] = acp_connection_id

    if not isinstance(acp_session_id, Unset):
        headers["Acp-Session-Id"] = acp_session_id

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/agents/{agent}/acp".format(
            agent=quote(str(agent), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> AcpPostResponse200 | Any | ErrorBody | None:
    if response.status_code == 200:
        response_200 = AcpPostResponse200.from_dict(response.json())

        return response_200

    if response.status_code == 202:
        response_202 = cast(Any, None)
        return response_202

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
) -> Response[AcpPostResponse200 | Any | ErrorBody]:
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
    body: AcpPostBody,
    acp_connection_id: None | str | Unset = UNSET,
    acp_session_id: None | str | Unset = UNSET,
) -> Response[AcpPostResponse200 | Any | ErrorBody]:
    """Send an ACP message

     ACP over Streamable HTTP: the initialize request opens a connection (its answer carries Acp-
    Connection-Id); later messages name it and are answered 202, their responses coming on the session's
    or the connection's stream.

    Args:
        agent (str):
        acp_connection_id (None | str | Unset):
        acp_session_id (None | str | Unset):
        body (AcpPostBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AcpPostResponse200 | Any | ErrorBody]
    """

    kwargs = _get_kwargs(
        agent=agent,
        body=body,
        acp_connection_id=acp_connection_id,
        acp_session_id=acp_session_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    agent: str,
    *,
    client: AuthenticatedClient,
    body: AcpPostBody,
    acp_connection_id: None | str | Unset = UNSET,
    acp_session_id: None | str | Unset = UNSET,
) -> AcpPostResponse200 | Any | ErrorBody | None:
    """Send an ACP message

     ACP over Streamable HTTP: the initialize request opens a connection (its answer carries Acp-
    Connection-Id); later messages name it and are answered 202, their responses coming on the session's
    or the connection's stream.

    Args:
        agent (str):
        acp_connection_id (None | str | Unset):
        acp_session_id (None | str | Unset):
        body (AcpPostBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AcpPostResponse200 | Any | ErrorBody
    """

    return sync_detailed(
        agent=agent,
        client=client,
        body=body,
        acp_connection_id=acp_connection_id,
        acp_session_id=acp_session_id,
    ).parsed


async def asyncio_detailed(
    agent: str,
    *,
    client: AuthenticatedClient,
    body: AcpPostBody,
    acp_connection_id: None | str | Unset = UNSET,
    acp_session_id: None | str | Unset = UNSET,
) -> Response[AcpPostResponse200 | Any | ErrorBody]:
    """Send an ACP message

     ACP over Streamable HTTP: the initialize request opens a connection (its answer carries Acp-
    Connection-Id); later messages name it and are answered 202, their responses coming on the session's
    or the connection's stream.

    Args:
        agent (str):
        acp_connection_id (None | str | Unset):
        acp_session_id (None | str | Unset):
        body (AcpPostBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AcpPostResponse200 | Any | ErrorBody]
    """

    kwargs = _get_kwargs(
        agent=agent,
        body=body,
        acp_connection_id=acp_connection_id,
        acp_session_id=acp_session_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    agent: str,
    *,
    client: AuthenticatedClient,
    body: AcpPostBody,
    acp_connection_id: None | str | Unset = UNSET,
    acp_session_id: None | str | Unset = UNSET,
) -> AcpPostResponse200 | Any | ErrorBody | None:
    """Send an ACP message

     ACP over Streamable HTTP: the initialize request opens a connection (its answer carries Acp-
    Connection-Id); later messages name it and are answered 202, their responses coming on the session's
    or the connection's stream.

    Args:
        agent (str):
        acp_connection_id (None | str | Unset):
        acp_session_id (None | str | Unset):
        body (AcpPostBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AcpPostResponse200 | Any | ErrorBody
    """

    return (
        await asyncio_detailed(
            agent=agent,
            client=client,
            body=body,
            acp_connection_id=acp_connection_id,
            acp_session_id=acp_session_id,
        )
    ).parsed
