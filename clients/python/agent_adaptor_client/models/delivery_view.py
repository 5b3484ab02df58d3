from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.attempt_view import AttemptView


T = TypeVar("T", bound="DeliveryView")


@_attrs_define
class DeliveryView:
    """One event's delivery to one subscription, with its attempts.

    Attributes:
        attempts (int): Attempts made.
        created_at (datetime.datetime): When the event was enqueued.
        event_id (str): The event id: the `webhook-id` header and the body's `id`, the same on every attempt.
        event_type (str): The event type.
        id (str): The delivery id.
        log (list[AttemptView]): Its attempts, oldest first.
        state (str): `pending` (waiting for an attempt, or in flight), `delivered` (a 2xx answer) or `failed` (given
            up).
        updated_at (datetime.datetime): When the delivery last changed.
        next_attempt_at (datetime.datetime | None | Unset): When the next attempt is due (pending only).
    """

    attempts: int
    created_at: datetime.datetime
    event_id: str
    event_type: str
    id: str
    log: list[AttemptView]
    state: str
    updated_at: datetime.datetime
    next_attempt_at: datetime.datetime | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        attempts = self.attempts

        created_at = self.created_at.isoformat()

        event_id = self.event_id

        event_type = self.event_type

        id = self.id

        log = []
        for log_item_data in self.log:
            log_item = log_item_data.to_dict()
            log.append(log_item)

        state = self.state

        updated_at = self.updated_at.isoformat()

        next_attempt_at: None | str | Unset
        if isinstance(self.next_attempt_at, Unset):
            next_attempt_at = UNSET
        elif isinstance(self.next_attempt_at, datetime.datetime):
            next_attempt_at = self.next_attempt_at.isoformat()
        else:
            next_attempt_at = self.next_attempt_at

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "attempts": attempts,
                "created_at": created_at,
                "event_id": event_id,
                "event_type": event_type,
                "id": id,
                "log": log,
                "state": state,
                "updated_at": updated_at,
            }
        )
        if next_attempt_at is not UNSET:
            field_dict["next_attempt_at"] = next_attempt_at

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.attempt_view import AttemptView

        d = dict(src_dict)
        attempts = d.pop("attempts")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        event_id = d.pop("event_id")

        event_type = d.pop("event_type")

        id = d.pop("id")

        log = []
        _log = d.pop("log")
        for log_item_data in _log:
            log_item = AttemptView.from_dict(log_item_data)

            log.append(log_item)

        state = d.pop("state")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        def _parse_next_attempt_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                next_attempt_at_type_0 = datetime.datetime.fromisoformat(data)

                return next_attempt_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        next_attempt_at = _parse_next_attempt_at(d.pop("next_attempt_at", UNSET))

        delivery_view = cls(
            attempts=attempts,
            created_at=created_at,
            event_id=event_id,
            event_type=event_type,
            id=id,
            log=log,
            state=state,
            updated_at=updated_at,
            next_attempt_at=next_attempt_at,
        )

        return delivery_view
