from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="ResourcesView")


@_attrs_define
class ResourcesView:
    """An agent's resources as a client may see them: names and keys, never URLs, headers or paths.

    Attributes:
        host_tools (bool): The agent has host tools (served over its loopback MCP server).
        instructions (bool): Whether the agent adds instructions of its own to every run.
        mcp (list[str]): The MCP servers every run gets, as `name:transport`.
        request_mcp (bool): A run request may add HTTP/SSE MCP servers.
        request_services (bool): A run request may name services from the catalog.
        request_workspace (bool): A run request may choose its workspace spec.
        service_catalog (list[str]): The services a run request may name (`"services": [name]`, with
            `request_services`).
        services (list[str]): The runtime services every run gets, by name.
        skill_library (list[str]): The skills a run request may add (`"skills": [key]`).
        skills (list[str]): The skills every run gets, by key.
        workspace (str): The workspace provisioning (`shared`, `git_worktree`, `driver_managed`).
    """

    host_tools: bool
    instructions: bool
    mcp: list[str]
    request_mcp: bool
    request_services: bool
    request_workspace: bool
    service_catalog: list[str]
    services: list[str]
    skill_library: list[str]
    skills: list[str]
    workspace: str

    def to_dict(self) -> dict[str, Any]:
        host_tools = self.host_tools

        instructions = self.instructions

        mcp = self.mcp

        request_mcp = self.request_mcp

        request_services = self.request_services

        request_workspace = self.request_workspace

        service_catalog = self.service_catalog

        services = self.services

        skill_library = self.skill_library

        skills = self.skills

        workspace = self.workspace

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "host_tools": host_tools,
                "instructions": instructions,
                "mcp": mcp,
                "request_mcp": request_mcp,
                "request_services": request_services,
                "request_workspace": request_workspace,
                "service_catalog": service_catalog,
                "services": services,
                "skill_library": skill_library,
                "skills": skills,
                "workspace": workspace,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        host_tools = d.pop("host_tools")

        instructions = d.pop("instructions")

        mcp = cast(list[str], d.pop("mcp"))

        request_mcp = d.pop("request_mcp")

        request_services = d.pop("request_services")

        request_workspace = d.pop("request_workspace")

        service_catalog = cast(list[str], d.pop("service_catalog"))

        services = cast(list[str], d.pop("services"))

        skill_library = cast(list[str], d.pop("skill_library"))

        skills = cast(list[str], d.pop("skills"))

        workspace = d.pop("workspace")

        resources_view = cls(
            host_tools=host_tools,
            instructions=instructions,
            mcp=mcp,
            request_mcp=request_mcp,
            request_services=request_services,
            request_workspace=request_workspace,
            service_catalog=service_catalog,
            services=services,
            skill_library=skill_library,
            skills=skills,
            workspace=workspace,
        )

        return resources_view
