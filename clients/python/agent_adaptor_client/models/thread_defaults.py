from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.approvals_body import ApprovalsBody
    from ..models.thread_defaults_metadata import ThreadDefaultsMetadata


T = TypeVar("T", bound="ThreadDefaults")


@_attrs_define
class ThreadDefaults:
    """The defaults a created thread applies to its runs (a run's own fields win).

    Attributes:
        approvals (ApprovalsBody | None | Unset):
        metadata (ThreadDefaultsMetadata | Unset): Caller metadata (merged under each run's).
        model (None | str | Unset): Model.
    """

    approvals: ApprovalsBody | None | Unset = UNSET
    metadata: ThreadDefaultsMetadata | Unset = UNSET
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
        if metadata is not UNSET:
            field_dict["metadata"] = metadata
        if model is not UNSET:
            field_dict["model"] = model

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.approvals_body import ApprovalsBody
        from ..models.thread_defaults_metadata import ThreadDefaultsMetadata

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

        _metadata = d.pop("metadata", UNSET)
        metadata: ThreadDefaultsMetadata | Unset
        if isinstance(_metadata, Unset):
            metadata = UNSET
        else:
            metadata = ThreadDefaultsMetadata.from_dict(_metadata)

        def _parse_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model = _parse_model(d.pop("model", UNSET))

        thread_defaults = cls(
            approvals=approvals,
            metadata=metadata,
            model=model,
        )

        return thread_defaults
