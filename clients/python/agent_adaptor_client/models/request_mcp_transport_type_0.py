from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.request_mcp_transport_type_0_type import RequestMcpTransportType0Type
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.mcp_headers import McpHeaders


T = TypeVar("T", bound="RequestMcpTransportType0")


@_attrs_define
class RequestMcpTransportType0:
    """Streamable HTTP.

    Attributes:
        type_ (RequestMcpTransportType0Type):
        url (str): URL.
        bearer_token_env (None | str | Unset): Name of an environment variable of the service holding a bearer token.
        headers (McpHeaders | Unset): The headers sent to a remote MCP server, by name (one named schema, so client
            generators make one
            type for both transports).
    """

    type_: RequestMcpTransportType0Type
    url: str
    bearer_token_env: None | str | Unset = UNSET
    headers: McpHeaders | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_.value

        url = self.url

        bearer_token_env: None | str | Unset
        if isinstance(self.bearer_token_env, Unset):
            bearer_token_env = UNSET
        else:
            bearer_token_env = self.bearer_token_env

        headers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.headers, Unset):
            headers = self.headers.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "url": url,
            }
        )
        if bearer_token_env is not UNSET:
            field_dict["bearer_token_env"] = bearer_token_env
        if headers is not UNSET:
            field_dict["headers"] = headers

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mcp_headers import McpHeaders

        d = dict(src_dict)
        type_ = RequestMcpTransportType0Type(d.pop("type"))

        url = d.pop("url")

        def _parse_bearer_token_env(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        bearer_token_env = _parse_bearer_token_env(d.pop("bearer_token_env", UNSET))

        _headers = d.pop("headers", UNSET)
        headers: McpHeaders | Unset
        if isinstance(_headers, Unset):
            headers = UNSET
        else:
            headers = McpHeaders.from_dict(_headers)

        request_mcp_transport_type_0 = cls(
            type_=type_,
            url=url,
            bearer_token_env=bearer_token_env,
            headers=headers,
        )

        request_mcp_transport_type_0.additional_properties = d
        return request_mcp_transport_type_0

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
