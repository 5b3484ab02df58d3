from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.thread_summary import ThreadSummary


T = TypeVar("T", bound="ThreadList")


@_attrs_define
class ThreadList:
    """`GET /v1/agents/{agent}/threads`.

    Attributes:
        threads (list[ThreadSummary]): The page.
        next_after (None | str | Unset): The `after` of the next page, when there may be one.
    """

    threads: list[ThreadSummary]
    next_after: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        threads = []
        for threads_item_data in self.threads:
            threads_item = threads_item_data.to_dict()
            threads.append(threads_item)

        next_after: None | str | Unset
        if isinstance(self.next_after, Unset):
            next_after = UNSET
        else:
            next_after = self.next_after

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "threads": threads,
            }
        )
        if next_after is not UNSET:
            field_dict["next_after"] = next_after

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.thread_summary import ThreadSummary

        d = dict(src_dict)
        threads = []
        _threads = d.pop("threads")
        for threads_item_data in _threads:
            threads_item = ThreadSummary.from_dict(threads_item_data)

            threads.append(threads_item)

        def _parse_next_after(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        next_after = _parse_next_after(d.pop("next_after", UNSET))

        thread_list = cls(
            threads=threads,
            next_after=next_after,
        )

        return thread_list
