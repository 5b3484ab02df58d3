from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ChoiceView")


@_attrs_define
class ChoiceView:
    """A choice offered by an approval request.

    Attributes:
        key (str): The key to answer with.
        label (str): The label.
        description (str | Unset): A longer description.
    """

    key: str
    label: str
    description: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        key = self.key

        label = self.label

        description = self.description

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "key": key,
                "label": label,
            }
        )
        if description is not UNSET:
            field_dict["description"] = description

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        key = d.pop("key")

        label = d.pop("label")

        description = d.pop("description", UNSET)

        choice_view = cls(
            key=key,
            label=label,
            description=description,
        )

        return choice_view
