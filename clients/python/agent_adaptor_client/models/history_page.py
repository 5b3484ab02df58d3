from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.history_event import HistoryEvent


T = TypeVar("T", bound="HistoryPage")


@_attrs_define
class HistoryPage:
    """`GET /v1/agents/{agent}/threads/{key}/events`.

    Attributes:
        events (list[HistoryEvent]): The page.
        next_after (int | None | Unset): The cursor of the last event.
    """

    events: list[HistoryEvent]
    next_after: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        events = []
        for events_item_data in self.events:
            events_item = events_item_data.to_dict()
            events.append(events_item)

        next_after: int | None | Unset
        if isinstance(self.next_after, Unset):
            next_after = UNSET
        else:
            next_after = self.next_after

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "events": events,
            }
        )
        if next_after is not UNSET:
            field_dict["next_after"] = next_after

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.history_event import HistoryEvent

        d = dict(src_dict)
        events = []
        _events = d.pop("events")
        for events_item_data in _events:
            events_item = HistoryEvent.from_dict(events_item_data)

            events.append(events_item)

        def _parse_next_after(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        next_after = _parse_next_after(d.pop("next_after", UNSET))

        history_page = cls(
            events=events,
            next_after=next_after,
        )

        return history_page
