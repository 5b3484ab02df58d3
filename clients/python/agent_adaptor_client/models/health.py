from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="Health")


@_attrs_define
class Health:
    """`GET /healthz` and `GET /readyz`.

    Attributes:
        status (str): `ok` or `ready`.
        store (None | str | Unset): The store backend (`/readyz` only).
    """

    status: str
    store: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        status = self.status

        store: None | str | Unset
        if isinstance(self.store, Unset):
            store = UNSET
        else:
            store = self.store

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "status": status,
            }
        )
        if store is not UNSET:
            field_dict["store"] = store

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        status = d.pop("status")

        def _parse_store(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        store = _parse_store(d.pop("store", UNSET))

        health = cls(
            status=status,
            store=store,
        )

        return health
