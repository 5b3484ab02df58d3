from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.delivery_view import DeliveryView


T = TypeVar("T", bound="DeliveryList")


@_attrs_define
class DeliveryList:
    """The answer of `GET /v1/webhooks/{id}/deliveries`.

    Attributes:
        deliveries (list[DeliveryView]): The newest deliveries first.
    """

    deliveries: list[DeliveryView]

    def to_dict(self) -> dict[str, Any]:
        deliveries = []
        for deliveries_item_data in self.deliveries:
            deliveries_item = deliveries_item_data.to_dict()
            deliveries.append(deliveries_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "deliveries": deliveries,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.delivery_view import DeliveryView

        d = dict(src_dict)
        deliveries = []
        _deliveries = d.pop("deliveries")
        for deliveries_item_data in _deliveries:
            deliveries_item = DeliveryView.from_dict(deliveries_item_data)

            deliveries.append(deliveries_item)

        delivery_list = cls(
            deliveries=deliveries,
        )

        return delivery_list
