from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.checkpoint_view import CheckpointView
    from ..models.thread_defaults import ThreadDefaults


T = TypeVar("T", bound="ThreadView")


@_attrs_define
class ThreadView:
    """`GET /v1/agents/{agent}/threads/{key}`, and the answer to create and fork.

    Attributes:
        key (str): The thread key.
        standby (bool): True while a Standby owns the thread.
        active_run (None | str | Unset): The run active on the thread.
        checkpoint (CheckpointView | None | Unset):
        defaults (None | ThreadDefaults | Unset):
        forked_from (None | str | Unset): The thread this one was forked from; the first run starts from its checkpoint.
    """

    key: str
    standby: bool
    active_run: None | str | Unset = UNSET
    checkpoint: CheckpointView | None | Unset = UNSET
    defaults: None | ThreadDefaults | Unset = UNSET
    forked_from: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.checkpoint_view import CheckpointView
        from ..models.thread_defaults import ThreadDefaults

        key = self.key

        standby = self.standby

        active_run: None | str | Unset
        if isinstance(self.active_run, Unset):
            active_run = UNSET
        else:
            active_run = self.active_run

        checkpoint: dict[str, Any] | None | Unset
        if isinstance(self.checkpoint, Unset):
            checkpoint = UNSET
        elif isinstance(self.checkpoint, CheckpointView):
            checkpoint = self.checkpoint.to_dict()
        else:
            checkpoint = self.checkpoint

        defaults: dict[str, Any] | None | Unset
        if isinstance(self.defaults, Unset):
            defaults = UNSET
        elif isinstance(self.defaults, ThreadDefaults):
            defaults = self.defaults.to_dict()
        else:
            defaults = self.defaults

        forked_from: None | str | Unset
        if isinstance(self.forked_from, Unset):
            forked_from = UNSET
        else:
            forked_from = self.forked_from

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "key": key,
                "standby": standby,
            }
        )
        if active_run is not UNSET:
            field_dict["active_run"] = active_run
        if checkpoint is not UNSET:
            field_dict["checkpoint"] = checkpoint
        if defaults is not UNSET:
            field_dict["defaults"] = defaults
        if forked_from is not UNSET:
            field_dict["forked_from"] = forked_from

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.checkpoint_view import CheckpointView
        from ..models.thread_defaults import ThreadDefaults

        d = dict(src_dict)
        key = d.pop("key")

        standby = d.pop("standby")

        def _parse_active_run(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        active_run = _parse_active_run(d.pop("active_run", UNSET))

        def _parse_checkpoint(data: object) -> CheckpointView | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                checkpoint_type_0 = CheckpointView.from_dict(data)

                return checkpoint_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CheckpointView | None | Unset, data)

        checkpoint = _parse_checkpoint(d.pop("checkpoint", UNSET))

        def _parse_defaults(data: object) -> None | ThreadDefaults | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                defaults_type_0 = ThreadDefaults.from_dict(data)

                return defaults_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ThreadDefaults | Unset, data)

        defaults = _parse_defaults(d.pop("defaults", UNSET))

        def _parse_forked_from(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        forked_from = _parse_forked_from(d.pop("forked_from", UNSET))

        thread_view = cls(
            key=key,
            standby=standby,
            active_run=active_run,
            checkpoint=checkpoint,
            defaults=defaults,
            forked_from=forked_from,
        )

        return thread_view
