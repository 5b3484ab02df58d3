from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ArchivedThread")


@_attrs_define
class ArchivedThread:
    """`POST /v1/agents/{agent}/threads/{key}/archive`.

    Attributes:
        key (str): The thread key.
        status (str): `archived`.
    """

    key: str
    status: str

    def to_dict(self) -> dict[str, Any]:
        key = self.key

        status = self.status

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "key": key,
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        key = d.pop("key")

        status = d.pop("status")

        archived_thread = cls(
            key=key,
            status=status,
        )

        return archived_thread
