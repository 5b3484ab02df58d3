from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.delivery_view import DeliveryView
from ...models.error_body import ErrorBody
from ...types import Response


def _get_kwargs(
    id: str,
    delivery: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/webhooks/{id}/deliveries/{delivery}/retry".format(
            id=quote(str(id), safe=""),
            delivery=quote(str(delivery), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> DeliveryView | ErrorBody | None:
    if response.status_code == 202:
        response_202 = DeliveryView.from_dict(response.json())

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
) -> Response[DeliveryView | ErrorBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    id: str,
    delivery: str,
    *,
    client: AuthenticatedClient,
) -> Response[DeliveryView | ErrorBody]:
    """Retry a delivery

     Makes a delivered or failed delivery due now; it keeps its attempt count, so one that used every
    attempt gets one more. A pending delivery is left as it is.

    Args:
        id (str):
        delivery (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeliveryView | ErrorBody]
    """

    kwargs = _get_kwargs(
        id=id,
        delivery=delivery,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: str,
    delivery: str,
    *,
    client: AuthenticatedClient,
) -> DeliveryView | ErrorBody | None:
    """Retry a delivery

     Makes a delivered or failed delivery due now; it keeps its attempt count, so one that used every
    attempt gets one more. A pending delivery is left as it is.

    Args:
        id (str):
        delivery (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeliveryView | ErrorBody
    """

    return sync_detailed(
        id=id,
        delivery=delivery,
        client=client,
    ).parsed


async def asyncio_detailed(
    id: str,
    delivery: str,
    *,
    client: AuthenticatedClient,
) -> Response[DeliveryView | ErrorBody]:
    """Retry a delivery

     Makes a delivered or failed delivery due now; it keeps its attempt count, so one that used every
    attempt gets one more. A pending delivery is left as it is.

    Args:
        id (str):
        delivery (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeliveryView | ErrorBody]
    """

    kwargs = _get_kwargs(
        id=id,
        delivery=delivery,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: str,
    delivery: str,
    *,
    client: AuthenticatedClient,
) -> DeliveryView | ErrorBody | None:
    """Retry a delivery

     Makes a delivered or failed delivery due now; it keeps its attempt count, so one that used every
    attempt gets one more. A pending delivery is left as it is.

    Args:
        id (str):
        delivery (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeliveryView | ErrorBody
    """

    return (
        await asyncio_detailed(
            id=id,
            delivery=delivery,
            client=client,
        )
    ).parsed
