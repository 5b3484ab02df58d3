from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.approvals_body import ApprovalsBody
    from ..models.request_mcp_server import RequestMcpServer
    from ..models.start_run_body_metadata import StartRunBodyMetadata
    from ..models.start_run_body_schema_type_0 import StartRunBodySchemaType0
    from ..models.start_run_body_workspace_type_0 import StartRunBodyWorkspaceType0


T = TypeVar("T", bound="StartRunBody")


@_attrs_define
class StartRunBody:
    """The body of a run start.

    Attributes:
        prompt (str): The prompt (not empty or only whitespace).
        approvals (ApprovalsBody | None | Unset):
        instructions (None | str | Unset): Instructions for this run, after the agent's own.
        mcp (list[RequestMcpServer] | Unset): HTTP or SSE MCP servers added to the agent's (only where the agent's
            `allow_request.mcp` is set).
        metadata (StartRunBodyMetadata | Unset): Caller metadata.
        model (None | str | Unset): Model override.
        schema (None | StartRunBodySchemaType0 | Unset): A JSON Schema the final answer must satisfy.
        services (list[str] | Unset): Runtime services from the agent's `service_catalog`, by name (only where the
            agent's
            `allow_request.services` is set), added to the agent's declared services.
        skills (list[str] | Unset): Skills from the agent's skill library, by key.
        spawn (bool | Unset): Force a fresh provider process (no reuse of a thread's persistent process).
        timeout_ms (int | None | Unset): Execution timeout in milliseconds, 1 to 604800000 (7 days).
        workspace (None | StartRunBodyWorkspaceType0 | Unset): The workspace spec (only where the agent's
            `allow_request.workspace` is set): `{"type":"shared"}`,
            `{"type":"driver_managed"}` or `{"type":"git_worktree","base_ref":"main","branch_template":"run/{short}"}`.
    """

    prompt: str
    approvals: ApprovalsBody | None | Unset = UNSET
    instructions: None | str | Unset = UNSET
    mcp: list[RequestMcpServer] | Unset = UNSET
    metadata: StartRunBodyMetadata | Unset = UNSET
    model: None | str | Unset = UNSET
    schema: None | StartRunBodySchemaType0 | Unset = UNSET
    services: list[str] | Unset = UNSET
    skills: list[str] | Unset = UNSET
    spawn: bool | Unset = UNSET
    timeout_ms: int | None | Unset = UNSET
    workspace: None | StartRunBodyWorkspaceType0 | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.approvals_body import ApprovalsBody
        from ..models.start_run_body_schema_type_0 import StartRunBodySchemaType0
        from ..models.start_run_body_workspace_type_0 import StartRunBodyWorkspaceType0

        prompt = self.prompt

        approvals: dict[str, Any] | None | Unset
        if isinstance(self.approvals, Unset):
            approvals = UNSET
        elif isinstance(self.approvals, ApprovalsBody):
            approvals = self.approvals.to_dict()
        else:
            approvals = self.approvals

        instructions: None | str | Unset
        if isinstance(self.instructions, Unset):
            instructions = UNSET
        else:
            instructions = self.instructions

        mcp: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.mcp, Unset):
            mcp = []
            for mcp_item_data in self.mcp:
                mcp_item = mcp_item_data.to_dict()
                mcp.append(mcp_item)

        metadata: dict[str, Any] | Unset = UNSET
        if not isinstance(self.metadata, Unset):
            metadata = self.metadata.to_dict()

        model: None | str | Unset
        if isinstance(self.model, Unset):
            model = UNSET
        else:
            model = self.model

        schema: dict[str, Any] | None | Unset
        if isinstance(self.schema, Unset):
            schema = UNSET
        elif isinstance(self.schema, StartRunBodySchemaType0):
            schema = self.schema.to_dict()
        else:
            schema = self.schema

        services: list[str] | Unset = UNSET
        if not isinstance(self.services, Unset):
            services = self.services

        skills: list[str] | Unset = UNSET
        if not isinstance(self.skills, Unset):
            skills = self.skills

        spawn = self.spawn

        timeout_ms: int | None | Unset
        if isinstance(self.timeout_ms, Unset):
            timeout_ms = UNSET
        else:
            timeout_ms = self.timeout_ms

        workspace: dict[str, Any] | None | Unset
        if isinstance(self.workspace, Unset):
            workspace = UNSET
        elif isinstance(self.workspace, StartRunBodyWorkspaceType0):
            workspace = self.workspace.to_dict()
        else:
            workspace = self.workspace

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "prompt": prompt,
            }
        )
        if approvals is not UNSET:
            field_dict["approvals"] = approvals
        if instructions is not UNSET:
            field_dict["instructions"] = instructions
        if mcp is not UNSET:
            field_dict["mcp"] = mcp
        if metadata is not UNSET:
            field_dict["metadata"] = metadata
        if model is not UNSET:
            field_dict["model"] = model
        if schema is not UNSET:
            field_dict["schema"] = schema
        if services is not UNSET:
            field_dict["services"] = services
        if skills is not UNSET:
            field_dict["skills"] = skills
        if spawn is not UNSET:
            field_dict["spawn"] = spawn
        if timeout_ms is not UNSET:
            field_dict["timeout_ms"] = timeout_ms
        if workspace is not UNSET:
            field_dict["workspace"] = workspace

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.approvals_body import ApprovalsBody
        from ..models.request_mcp_server import RequestMcpServer
        from ..models.start_run_body_metadata import StartRunBodyMetadata
        from ..models.start_run_body_schema_type_0 import StartRunBodySchemaType0
        from ..models.start_run_body_workspace_type_0 import StartRunBodyWorkspaceType0

        d = dict(src_dict)
        prompt = d.pop("prompt")

        def _parse_approvals(data: object) -> ApprovalsBody | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                approvals_type_0 = ApprovalsBody.from_dict(data)

                return approvals_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ApprovalsBody | None | Unset, data)

        approvals = _parse_approvals(d.pop("approvals", UNSET))

        def _parse_instructions(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        instructions = _parse_instructions(d.pop("instructions", UNSET))

        _mcp = d.pop("mcp", UNSET)
        mcp: list[RequestMcpServer] | Unset = UNSET
        if _mcp is not UNSET:
            mcp = []
            for mcp_item_data in _mcp:
                mcp_item = RequestMcpServer.from_dict(mcp_item_data)

                mcp.append(mcp_item)

        _metadata = d.pop("metadata", UNSET)
        metadata: StartRunBodyMetadata | Unset
        if isinstance(_metadata, Unset):
            metadata = UNSET
        else:
            metadata = StartRunBodyMetadata.from_dict(_metadata)

        def _parse_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model = _parse_model(d.pop("model", UNSET))

        def _parse_schema(data: object) -> None | StartRunBodySchemaType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                schema_type_0 = StartRunBodySchemaType0.from_dict(data)

                return schema_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | StartRunBodySchemaType0 | Unset, data)

        schema = _parse_schema(d.pop("schema", UNSET))

        services = cast(list[str], d.pop("services", UNSET))

        skills = cast(list[str], d.pop("skills", UNSET))

        spawn = d.pop("spawn", UNSET)

        def _parse_timeout_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        timeout_ms = _parse_timeout_ms(d.pop("timeout_ms", UNSET))

        def _parse_workspace(data: object) -> None | StartRunBodyWorkspaceType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                workspace_type_0 = StartRunBodyWorkspaceType0.from_dict(data)

                return workspace_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | StartRunBodyWorkspaceType0 | Unset, data)

        workspace = _parse_workspace(d.pop("workspace", UNSET))

        start_run_body = cls(
            prompt=prompt,
            approvals=approvals,
            instructions=instructions,
            mcp=mcp,
            metadata=metadata,
            model=model,
            schema=schema,
            services=services,
            skills=skills,
            spawn=spawn,
            timeout_ms=timeout_ms,
            workspace=workspace,
        )

        return start_run_body
