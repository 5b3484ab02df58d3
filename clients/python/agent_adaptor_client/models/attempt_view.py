from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="AttemptView")


@_attrs_define
class AttemptView:
    """One attempt of a delivery.

    Attributes:
        at (datetime.datetime): When it started.
        attempt (int): The attempt number, from 1.
        duration_ms (int): How long it took, in milliseconds.
        error (None | str | Unset): Why it failed without an answer (connection refused, timed out, refused target).
        status (int | None | Unset): The receiver's HTTP status, when it answered.
    """

    at: datetime.datetime
    attempt: int
    duration_ms: int
    error: None | str | Unset = UNSET
    status: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        at = self.at.isoformat()

        attempt = self.attempt

        duration_ms = self.duration_ms

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error

        status: int | None | Unset
        if isinstance(self.status, Unset):
            status = UNSET
        else:
            status = self.status

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "at": at,
                "attempt": attempt,
                "duration_ms": duration_ms,
            }
        )
        if error is not UNSET:
            field_dict["error"] = error
        if status is not UNSET:
            field_dict["status"] = status

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        at = datetime.datetime.fromisoformat(d.pop("at"))

        attempt = d.pop("attempt")

        duration_ms = d.pop("duration_ms")

        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        def _parse_status(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        status = _parse_status(d.pop("status", UNSET))

        attempt_view = cls(
            at=at,
            attempt=attempt,
            duration_ms=duration_ms,
            error=error,
            status=status,
        )

        return attempt_view
