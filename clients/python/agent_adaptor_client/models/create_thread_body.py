from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.approvals_body import ApprovalsBody
    from ..models.create_thread_body_metadata import CreateThreadBodyMetadata


T = TypeVar("T", bound="CreateThreadBody")


@_attrs_define
class CreateThreadBody:
    """The body of `POST /v1/agents/{agent}/threads`.

    Attributes:
        approvals (ApprovalsBody | None | Unset):
        key (None | str | Unset): The thread key (1 to 512 bytes); generated (`thr-<uuid>`) when absent.
        metadata (CreateThreadBodyMetadata | Unset): Metadata merged under each run's own.
        model (None | str | Unset): The model of the thread's runs (a run's own `model` wins).
    """

    approvals: ApprovalsBody | None | Unset = UNSET
    key: None | str | Unset = UNSET
    metadata: CreateThreadBodyMetadata | Unset = UNSET
    model: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.approvals_body import ApprovalsBody

        approvals: dict[str, Any] | None | Unset
        if isinstance(self.approvals, Unset):
            approvals = UNSET
        elif isinstance(self.approvals, ApprovalsBody):
            approvals = self.approvals.to_dict()
        else:
            approvals = self.approvals

        key: None | str | Unset
        if isinstance(self.key, Unset):
            key = UNSET
        else:
            key = self.key

        metadata: dict[str, Any] | Unset = UNSET
        if not isinstance(self.metadata, Unset):
            metadata = self.metadata.to_dict()

        model: None | str | Unset
        if isinstance(self.model, Unset):
            model = UNSET
        else:
            model = self.model

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if approvals is not UNSET:
            field_dict["approvals"] = approvals
        if key is not UNSET:
            field_dict["key"] = key
        if metadata is not UNSET:
            field_dict["metadata"] = metadata
        if model is not UNSET:
            field_dict["model"] = model

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.approvals_body import ApprovalsBody
        from ..models.create_thread_body_metadata import CreateThreadBodyMetadata

        d = dict(src_dict)

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

        def _parse_key(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        key = _parse_key(d.pop("key", UNSET))

        _metadata = d.pop("metadata", UNSET)
        metadata: CreateThreadBodyMetadata | Unset
        if isinstance(_metadata, Unset):
            metadata = UNSET
        else:
            metadata = CreateThreadBodyMetadata.from_dict(_metadata)

        def _parse_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model = _parse_model(d.pop("model", UNSET))

        create_thread_body = cls(
            approvals=approvals,
            key=key,
            metadata=metadata,
            model=model,
        )

        return create_thread_body
