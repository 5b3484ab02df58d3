from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.inspect_view import InspectView
from ...types import UNSET, Response, Unset


def _get_kwargs(
    agent: str,
    *,
    timeout_ms: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["timeout_ms"] = timeout_ms

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/agents/{agent}/inspect".format(
            agent=quote(str(agent), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | InspectView | None:
    if response.status_code == 200:
        response_200 = InspectView.from_dict(response.json())

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
) -> Response[ErrorBody | InspectView]:
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
    timeout_ms: int | Unset = UNSET,
) -> Response[ErrorBody | InspectView]:
    """Inspect an agent

     Runs the agent's probes (environment, models, quota, config schema, skills, profile) concurrently,
    each under the timeout; a probe that does not answer is null and listed in errors.

    Args:
        agent (str):
        timeout_ms (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | InspectView]
    """

    kwargs = _get_kwargs(
        agent=agent,
        timeout_ms=timeout_ms,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    agent: str,
    *,
    client: AuthenticatedClient,
    timeout_ms: int | Unset = UNSET,
) -> ErrorBody | InspectView | None:
    """Inspect an agent

     Runs the agent's probes (environment, models, quota, config schema, skills, profile) concurrently,
    each under the timeout; a probe that does not answer is null and listed in errors.

    Args:
        agent (str):
        timeout_ms (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | InspectView
    """

    return sync_detailed(
        agent=agent,
        client=client,
        timeout_ms=timeout_ms,
    ).parsed


async def asyncio_detailed(
    agent: str,
    *,
    client: AuthenticatedClient,
    timeout_ms: int | Unset = UNSET,
) -> Response[ErrorBody | InspectView]:
    """Inspect an agent

     Runs the agent's probes (environment, models, quota, config schema, skills, profile) concurrently,
    each under the timeout; a probe that does not answer is null and listed in errors.

    Args:
        agent (str):
        timeout_ms (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | InspectView]
    """

    kwargs = _get_kwargs(
        agent=agent,
        timeout_ms=timeout_ms,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    agent: str,
    *,
    client: AuthenticatedClient,
    timeout_ms: int | Unset = UNSET,
) -> ErrorBody | InspectView | None:
    """Inspect an agent

     Runs the agent's probes (environment, models, quota, config schema, skills, profile) concurrently,
    each under the timeout; a probe that does not answer is null and listed in errors.

    Args:
        agent (str):
        timeout_ms (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | InspectView
    """

    return (
        await asyncio_detailed(
            agent=agent,
            client=client,
            timeout_ms=timeout_ms,
        )
    ).parsed
