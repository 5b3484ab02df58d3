from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.history_event_event import HistoryEventEvent


T = TypeVar("T", bound="HistoryEvent")


@_attrs_define
class HistoryEvent:
    """One recorded event of a thread's history.

    Attributes:
        cursor (int): The cursor (pass as `after`).
        event (HistoryEventEvent): The event, under the agent's exposure policy.
        kind (str): The event kind.
        run_id (str): The run that recorded it.
        sequence (int): Its sequence within the run.
    """

    cursor: int
    event: HistoryEventEvent
    kind: str
    run_id: str
    sequence: int

    def to_dict(self) -> dict[str, Any]:
        cursor = self.cursor

        event = self.event.to_dict()

        kind = self.kind

        run_id = self.run_id

        sequence = self.sequence

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "cursor": cursor,
                "event": event,
                "kind": kind,
                "run_id": run_id,
                "sequence": sequence,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.history_event_event import HistoryEventEvent

        d = dict(src_dict)
        cursor = d.pop("cursor")

        event = HistoryEventEvent.from_dict(d.pop("event"))

        kind = d.pop("kind")

        run_id = d.pop("run_id")

        sequence = d.pop("sequence")

        history_event = cls(
            cursor=cursor,
            event=event,
            kind=kind,
            run_id=run_id,
            sequence=sequence,
        )

        return history_event
