from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="MessageAccepted")


@_attrs_define
class MessageAccepted:
    """The answer to `POST /v1/runs/{run_id}/messages` and `POST …/standby/messages`.

    Attributes:
        message_id (str): The message id.
        run_id (None | str | Unset): The run (absent for a Standby, whose input may start a new execution).
    """

    message_id: str
    run_id: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        message_id = self.message_id

        run_id: None | str | Unset
        if isinstance(self.run_id, Unset):
            run_id = UNSET
        else:
            run_id = self.run_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "message_id": message_id,
            }
        )
        if run_id is not UNSET:
            field_dict["run_id"] = run_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        message_id = d.pop("message_id")

        def _parse_run_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        run_id = _parse_run_id(d.pop("run_id", UNSET))

        message_accepted = cls(
            message_id=message_id,
            run_id=run_id,
        )

        return message_accepted
