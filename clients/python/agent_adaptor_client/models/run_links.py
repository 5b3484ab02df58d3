from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="RunLinks")


@_attrs_define
class RunLinks:
    """Links of a live run.

    Attributes:
        approvals (str): Its approvals.
        events (str): Its SSE events.
        self_ (str): The run.
    """

    approvals: str
    events: str
    self_: str

    def to_dict(self) -> dict[str, Any]:
        approvals = self.approvals

        events = self.events

        self_ = self.self_

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "approvals": approvals,
                "events": events,
                "self": self_,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        approvals = d.pop("approvals")

        events = d.pop("events")

        self_ = d.pop("self")

        run_links = cls(
            approvals=approvals,
            events=events,
            self_=self_,
        )

        return run_links
