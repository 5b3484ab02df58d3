from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.approval_view import ApprovalView


T = TypeVar("T", bound="ApprovalList")


@_attrs_define
class ApprovalList:
    """`GET /v1/runs/{run_id}/approvals`.

    Attributes:
        approvals (list[ApprovalView]): The approval requests.
    """

    approvals: list[ApprovalView]

    def to_dict(self) -> dict[str, Any]:
        approvals = []
        for approvals_item_data in self.approvals:
            approvals_item = approvals_item_data.to_dict()
            approvals.append(approvals_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "approvals": approvals,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.approval_view import ApprovalView

        d = dict(src_dict)
        approvals = []
        _approvals = d.pop("approvals")
        for approvals_item_data in _approvals:
            approvals_item = ApprovalView.from_dict(approvals_item_data)

            approvals.append(approvals_item)

        approval_list = cls(
            approvals=approvals,
        )

        return approval_list
