from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ThreadSummary")


@_attrs_define
class ThreadSummary:
    """A thread in a listing.

    Attributes:
        created_at (datetime.datetime): Created.
        driver_type (str): The driver type that owns the thread's checkpoint.
        key (str): The thread key.
        status (str): `active` or `archived`.
        updated_at (datetime.datetime): Updated.
    """

    created_at: datetime.datetime
    driver_type: str
    key: str
    status: str
    updated_at: datetime.datetime

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        driver_type = self.driver_type

        key = self.key

        status = self.status

        updated_at = self.updated_at.isoformat()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "created_at": created_at,
                "driver_type": driver_type,
                "key": key,
                "status": status,
                "updated_at": updated_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        driver_type = d.pop("driver_type")

        key = d.pop("key")

        status = d.pop("status")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        thread_summary = cls(
            created_at=created_at,
            driver_type=driver_type,
            key=key,
            status=status,
            updated_at=updated_at,
        )

        return thread_summary
