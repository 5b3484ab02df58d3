from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.inspect_view_config_schema_type_0 import InspectViewConfigSchemaType0
    from ..models.inspect_view_environment_type_0 import InspectViewEnvironmentType0
    from ..models.inspect_view_models_type_0_item import InspectViewModelsType0Item
    from ..models.inspect_view_profile_type_0 import InspectViewProfileType0
    from ..models.inspect_view_quota_type_0 import InspectViewQuotaType0
    from ..models.inspect_view_skills_type_0 import InspectViewSkillsType0
    from ..models.probe_error import ProbeError


T = TypeVar("T", bound="InspectView")


@_attrs_define
class InspectView:
    """`GET /v1/agents/{agent}/inspect`: the driver's inspection report. Each probe runs with the service's
    inspect timeout; a probe that did not answer is `null` and listed in `errors`.

        Attributes:
            agent (str): The agent.
            errors (list[ProbeError]): The probes that did not answer.
            provider (str): The provider.
            config_schema (InspectViewConfigSchemaType0 | None | Unset): The driver's configuration schema.
            environment (InspectViewEnvironmentType0 | None | Unset): Environment health: checks, detected version,
                effective message capability.
            models (list[InspectViewModelsType0Item] | None | Unset): The models the provider offers.
            profile (InspectViewProfileType0 | None | Unset): The profile state (observe only; no server path: the dir and
                source fields are left out, also from
                the selection, and warnings name paths only by placeholders such as `<profile dir>`).
            quota (InspectViewQuotaType0 | None | Unset): Quota windows.
            skills (InspectViewSkillsType0 | None | Unset): The skills report: driver support, the agent's skills (key,
                source kind, `SKILL.md` name and
                description, or an error code per skill), the selection, the profile's skills, the catalogue.
    """

    agent: str
    errors: list[ProbeError]
    provider: str
    config_schema: InspectViewConfigSchemaType0 | None | Unset = UNSET
    environment: InspectViewEnvironmentType0 | None | Unset = UNSET
    models: list[InspectViewModelsType0Item] | None | Unset = UNSET
    profile: InspectViewProfileType0 | None | Unset = UNSET
    quota: InspectViewQuotaType0 | None | Unset = UNSET
    skills: InspectViewSkillsType0 | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.inspect_view_config_schema_type_0 import (
            InspectViewConfigSchemaType0,
        )
        from ..models.inspect_view_environment_type_0 import InspectViewEnvironmentType0
        from ..models.inspect_view_profile_type_0 import InspectViewProfileType0
        from ..models.inspect_view_quota_type_0 import InspectViewQuotaType0
        from ..models.inspect_view_skills_type_0 import InspectViewSkillsType0

        agent = self.agent

        errors = []
        for errors_item_data in self.errors:
            errors_item = errors_item_data.to_dict()
            errors.append(errors_item)

        provider = self.provider

        config_schema: dict[str, Any] | None | Unset
        if isinstance(self.config_schema, Unset):
            config_schema = UNSET
        elif isinstance(self.config_schema, InspectViewConfigSchemaType0):
            config_schema = self.config_schema.to_dict()
        else:
            config_schema = self.config_schema

        environment: dict[str, Any] | None | Unset
        if isinstance(self.environment, Unset):
            environment = UNSET
        elif isinstance(self.environment, InspectViewEnvironmentType0):
            environment = self.environment.to_dict()
        else:
            environment = self.environment

        models: list[dict[str, Any]] | None | Unset
        if isinstance(self.models, Unset):
            models = UNSET
        elif isinstance(self.models, list):
            models = []
            for models_type_0_item_data in self.models:
                models_type_0_item = models_type_0_item_data.to_dict()
                models.append(models_type_0_item)

        else:
            models = self.models

        profile: dict[str, Any] | None | Unset
        if isinstance(self.profile, Unset):
            profile = UNSET
        elif isinstance(self.profile, InspectViewProfileType0):
            profile = self.profile.to_dict()
        else:
            profile = self.profile

        quota: dict[str, Any] | None | Unset
        if isinstance(self.quota, Unset):
            quota = UNSET
        elif isinstance(self.quota, InspectViewQuotaType0):
            quota = self.quota.to_dict()
        else:
            quota = self.quota

        skills: dict[str, Any] | None | Unset
        if isinstance(self.skills, Unset):
            skills = UNSET
        elif isinstance(self.skills, InspectViewSkillsType0):
            skills = self.skills.to_dict()
        else:
            skills = self.skills

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "agent": agent,
                "errors": errors,
                "provider": provider,
            }
        )
        if config_schema is not UNSET:
            field_dict["config_schema"] = config_schema
        if environment is not UNSET:
            field_dict["environment"] = environment
        if models is not UNSET:
            field_dict["models"] = models
        if profile is not UNSET:
            field_dict["profile"] = profile
        if quota is not UNSET:
            field_dict["quota"] = quota
        if skills is not UNSET:
            field_dict["skills"] = skills

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.inspect_view_config_schema_type_0 import (
            InspectViewConfigSchemaType0,
        )
        from ..models.inspect_view_environment_type_0 import InspectViewEnvironmentType0
        from ..models.inspect_view_models_type_0_item import InspectViewModelsType0Item
        from ..models.inspect_view_profile_type_0 import InspectViewProfileType0
        from ..models.inspect_view_quota_type_0 import InspectViewQuotaType0
        from ..models.inspect_view_skills_type_0 import InspectViewSkillsType0
        from ..models.probe_error import ProbeError

        d = dict(src_dict)
        agent = d.pop("agent")

        errors = []
        _errors = d.pop("errors")
        for errors_item_data in _errors:
            errors_item = ProbeError.from_dict(errors_item_data)

            errors.append(errors_item)

        provider = d.pop("provider")

        def _parse_config_schema(
            data: object,
        ) -> InspectViewConfigSchemaType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                config_schema_type_0 = InspectViewConfigSchemaType0.from_dict(data)

                return config_schema_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(InspectViewConfigSchemaType0 | None | Unset, data)

        config_schema = _parse_config_schema(d.pop("config_schema", UNSET))

        def _parse_environment(
            data: object,
        ) -> InspectViewEnvironmentType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                environment_type_0 = InspectViewEnvironmentType0.from_dict(data)

                return environment_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(InspectViewEnvironmentType0 | None | Unset, data)

        environment = _parse_environment(d.pop("environment", UNSET))

        def _parse_models(
            data: object,
        ) -> list[InspectViewModelsType0Item] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                models_type_0 = []
                _models_type_0 = data
                for models_type_0_item_data in _models_type_0:
                    models_type_0_item = InspectViewModelsType0Item.from_dict(
                        models_type_0_item_data
                    )

                    models_type_0.append(models_type_0_item)

                return models_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[InspectViewModelsType0Item] | None | Unset, data)

        models = _parse_models(d.pop("models", UNSET))

        def _parse_profile(data: object) -> InspectViewProfileType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                profile_type_0 = InspectViewProfileType0.from_dict(data)

                return profile_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(InspectViewProfileType0 | None | Unset, data)

        profile = _parse_profile(d.pop("profile", UNSET))

        def _parse_quota(data: object) -> InspectViewQuotaType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                quota_type_0 = InspectViewQuotaType0.from_dict(data)

                return quota_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(InspectViewQuotaType0 | None | Unset, data)

        quota = _parse_quota(d.pop("quota", UNSET))

        def _parse_skills(data: object) -> InspectViewSkillsType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                skills_type_0 = InspectViewSkillsType0.from_dict(data)

                return skills_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(InspectViewSkillsType0 | None | Unset, data)

        skills = _parse_skills(d.pop("skills", UNSET))

        inspect_view = cls(
            agent=agent,
            errors=errors,
            provider=provider,
            config_schema=config_schema,
            environment=environment,
            models=models,
            profile=profile,
            quota=quota,
            skills=skills,
        )

        return inspect_view
