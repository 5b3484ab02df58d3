from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.request_mcp_transport_type_0 import RequestMcpTransportType0
    from ..models.request_mcp_transport_type_1 import RequestMcpTransportType1


T = TypeVar("T", bound="RequestMcpServer")


@_attrs_define
class RequestMcpServer:
    """An MCP server a run request adds to the agent's (where the agent's `allow_request.mcp` is set).

    Attributes:
        name (str): Server name, unique per run.
        transport (RequestMcpTransportType0 | RequestMcpTransportType1): The transport of a [`RequestMcpServer`].
        required (bool | Unset): Fail the launch when it cannot be configured.
    """

    name: str
    transport: RequestMcpTransportType0 | RequestMcpTransportType1
    required: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.request_mcp_transport_type_0 import RequestMcpTransportType0

        name = self.name

        transport: dict[str, Any]
        if isinstance(self.transport, RequestMcpTransportType0):
            transport = self.transport.to_dict()
        else:
            transport = self.transport.to_dict()

        required = self.required

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "transport": transport,
            }
        )
        if required is not UNSET:
            field_dict["required"] = required

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.request_mcp_transport_type_0 import RequestMcpTransportType0
        from ..models.request_mcp_transport_type_1 import RequestMcpTransportType1

        d = dict(src_dict)
        name = d.pop("name")

        def _parse_transport(
            data: object,
        ) -> RequestMcpTransportType0 | RequestMcpTransportType1:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_request_mcp_transport_type_0 = (
                    RequestMcpTransportType0.from_dict(data)
                )

                return componentsschemas_request_mcp_transport_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_request_mcp_transport_type_1 = (
                RequestMcpTransportType1.from_dict(data)
            )

            return componentsschemas_request_mcp_transport_type_1

        transport = _parse_transport(d.pop("transport"))

        required = d.pop("required", UNSET)

        request_mcp_server = cls(
            name=name,
            transport=transport,
            required=required,
        )

        return request_mcp_server
