import datetime
from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.usage_list import UsageList
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    agent: str | Unset = UNSET,
    thread_key: str | Unset = UNSET,
    tenant: str | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_from_: str | Unset = UNSET
    if not isinstance(from_, Unset):
        json_from_ = from_.isoformat()
    params["from"] = json_from_

    json_to: str | Unset = UNSET
    if not isinstance(to, Unset):
        json_to = to.isoformat()
    params["to"] = json_to

    params["agent"] = agent

    params["thread_key"] = thread_key

    params["tenant"] = tenant

    params["after"] = after

    params["limit"] = limit

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/usage",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | UsageList | None:
    if response.status_code == 200:
        response_200 = UsageList.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = ErrorBody.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = ErrorBody.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ErrorBody.from_dict(response.json())

        return response_403

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
) -> Response[ErrorBody | UsageList]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    agent: str | Unset = UNSET,
    thread_key: str | Unset = UNSET,
    tenant: str | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Response[ErrorBody | UsageList]:
    """Metered usage

     Tokens, estimated cost, CLI wall and CPU time per tenant, agent and thread over a time range,
    cursor-paged; an operator key reads every tenant's usage.

    Args:
        from_ (datetime.datetime | Unset):
        to (datetime.datetime | Unset):
        agent (str | Unset):
        thread_key (str | Unset):
        tenant (str | Unset):
        after (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | UsageList]
    """

    kwargs = _get_kwargs(
        from_=from_,
        to=to,
        agent=agent,
        thread_key=thread_key,
        tenant=tenant,
        after=after,
        limit=limit,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    agent: str | Unset = UNSET,
    thread_key: str | Unset = UNSET,
    tenant: str | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> ErrorBody | UsageList | None:
    """Metered usage

     Tokens, estimated cost, CLI wall and CPU time per tenant, agent and thread over a time range,
    cursor-paged; an operator key reads every tenant's usage.

    Args:
        from_ (datetime.datetime | Unset):
        to (datetime.datetime | Unset):
        agent (str | Unset):
        thread_key (str | Unset):
        tenant (str | Unset):
        after (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | UsageList
    """

    return sync_detailed(
        client=client,
        from_=from_,
        to=to,
        agent=agent,
        thread_key=thread_key,
        tenant=tenant,
        after=after,
        limit=limit,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    agent: str | Unset = UNSET,
    thread_key: str | Unset = UNSET,
    tenant: str | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Response[ErrorBody | UsageList]:
    """Metered usage

     Tokens, estimated cost, CLI wall and CPU time per tenant, agent and thread over a time range,
    cursor-paged; an operator key reads every tenant's usage.

    Args:
        from_ (datetime.datetime | Unset):
        to (datetime.datetime | Unset):
        agent (str | Unset):
        thread_key (str | Unset):
        tenant (str | Unset):
        after (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | UsageList]
    """

    kwargs = _get_kwargs(
        from_=from_,
        to=to,
        agent=agent,
        thread_key=thread_key,
        tenant=tenant,
        after=after,
        limit=limit,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    agent: str | Unset = UNSET,
    thread_key: str | Unset = UNSET,
    tenant: str | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> ErrorBody | UsageList | None:
    """Metered usage

     Tokens, estimated cost, CLI wall and CPU time per tenant, agent and thread over a time range,
    cursor-paged; an operator key reads every tenant's usage.

    Args:
        from_ (datetime.datetime | Unset):
        to (datetime.datetime | Unset):
        agent (str | Unset):
        thread_key (str | Unset):
        tenant (str | Unset):
        after (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | UsageList
    """

    return (
        await asyncio_detailed(
            client=client,
            from_=from_,
            to=to,
            agent=agent,
            thread_key=thread_key,
            tenant=tenant,
            after=after,
            limit=limit,
        )
    ).parsed
