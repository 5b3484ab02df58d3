from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.message_timing import MessageTiming
from ..types import UNSET, Unset

T = TypeVar("T", bound="MessageBody")


@_attrs_define
class MessageBody:
    """The body of a supplemental message.

    Attributes:
        text (str): The text (not empty or only whitespace).
        id (None | str | Unset): The message id (idempotency key); generated when absent.
        timing (MessageTiming | None | Unset):
    """

    text: str
    id: None | str | Unset = UNSET
    timing: MessageTiming | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        text = self.text

        id: None | str | Unset
        if isinstance(self.id, Unset):
            id = UNSET
        else:
            id = self.id

        timing: None | str | Unset
        if isinstance(self.timing, Unset):
            timing = UNSET
        elif isinstance(self.timing, MessageTiming):
            timing = self.timing.value
        else:
            timing = self.timing

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "text": text,
            }
        )
        if id is not UNSET:
            field_dict["id"] = id
        if timing is not UNSET:
            field_dict["timing"] = timing

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        text = d.pop("text")

        def _parse_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        id = _parse_id(d.pop("id", UNSET))

        def _parse_timing(data: object) -> MessageTiming | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                timing_type_0 = MessageTiming(data)

                return timing_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(MessageTiming | None | Unset, data)

        timing = _parse_timing(d.pop("timing", UNSET))

        message_body = cls(
            text=text,
            id=id,
            timing=timing,
        )

        return message_body
