from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.agent_view_descriptor import AgentViewDescriptor
    from ..models.resources_view import ResourcesView


T = TypeVar("T", bound="AgentView")


@_attrs_define
class AgentView:
    """An agent.

    Attributes:
        descriptor (AgentViewDescriptor): The driver descriptor (capabilities; `docs/capabilities.md`).
        name (str): The agent's name.
        provider (str): The provider driving it (`claude`, `codex`, `codebuddy`, ...).
        resources (ResourcesView): An agent's resources as a client may see them: names and keys, never URLs, headers or
            paths.
    """

    descriptor: AgentViewDescriptor
    name: str
    provider: str
    resources: ResourcesView

    def to_dict(self) -> dict[str, Any]:
        descriptor = self.descriptor.to_dict()

        name = self.name

        provider = self.provider

        resources = self.resources.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "descriptor": descriptor,
                "name": name,
                "provider": provider,
                "resources": resources,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.agent_view_descriptor import AgentViewDescriptor
        from ..models.resources_view import ResourcesView

        d = dict(src_dict)
        descriptor = AgentViewDescriptor.from_dict(d.pop("descriptor"))

        name = d.pop("name")

        provider = d.pop("provider")

        resources = ResourcesView.from_dict(d.pop("resources"))

        agent_view = cls(
            descriptor=descriptor,
            name=name,
            provider=provider,
            resources=resources,
        )

        return agent_view
