from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.usage_row_view import UsageRowView
    from ..models.usage_totals_view import UsageTotalsView


T = TypeVar("T", bound="UsageList")


@_attrs_define
class UsageList:
    """`GET /v1/usage`.

    Attributes:
        totals (UsageTotalsView): Sums of metered usage.
        usage (list[UsageRowView]): The rows, by tenant, agent and thread key.
        next_ (None | str | Unset): The `after` of the next page, when there may be one.
    """

    totals: UsageTotalsView
    usage: list[UsageRowView]
    next_: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        totals = self.totals.to_dict()

        usage = []
        for usage_item_data in self.usage:
            usage_item = usage_item_data.to_dict()
            usage.append(usage_item)

        next_: None | str | Unset
        if isinstance(self.next_, Unset):
            next_ = UNSET
        else:
            next_ = self.next_

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "totals": totals,
                "usage": usage,
            }
        )
        if next_ is not UNSET:
            field_dict["next"] = next_

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.usage_row_view import UsageRowView
        from ..models.usage_totals_view import UsageTotalsView

        d = dict(src_dict)
        totals = UsageTotalsView.from_dict(d.pop("totals"))

        usage = []
        _usage = d.pop("usage")
        for usage_item_data in _usage:
            usage_item = UsageRowView.from_dict(usage_item_data)

            usage.append(usage_item)

        def _parse_next_(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        next_ = _parse_next_(d.pop("next", UNSET))

        usage_list = cls(
            totals=totals,
            usage=usage,
            next_=next_,
        )

        return usage_list
