from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="UsageRowView")


@_attrs_define
class UsageRowView:
    """One tenant, agent and thread's usage.

    Attributes:
        agent (str): The agent.
        cached_input_tokens (int): Input tokens served from a cache.
        cost_usd (float): Estimated cost in US dollars.
        cpu_seconds (float): CPU time of the CLI processes in seconds.
        first_at (datetime.datetime): The earliest run end in the row.
        input_tokens (int): Input tokens.
        last_at (datetime.datetime): The latest run end in the row.
        output_tokens (int): Output tokens.
        runs (int): Runs counted.
        tenant (str): The tenant.
        wall_seconds (float): CLI wall time in seconds.
        thread_key (None | str | Unset): The thread key (`null`: runs without a thread).
    """

    agent: str
    cached_input_tokens: int
    cost_usd: float
    cpu_seconds: float
    first_at: datetime.datetime
    input_tokens: int
    last_at: datetime.datetime
    output_tokens: int
    runs: int
    tenant: str
    wall_seconds: float
    thread_key: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        agent = self.agent

        cached_input_tokens = self.cached_input_tokens

        cost_usd = self.cost_usd

        cpu_seconds = self.cpu_seconds

        first_at = self.first_at.isoformat()

        input_tokens = self.input_tokens

        last_at = self.last_at.isoformat()

        output_tokens = self.output_tokens

        runs = self.runs

        tenant = self.tenant

        wall_seconds = self.wall_seconds

        thread_key: None | str | Unset
        if isinstance(self.thread_key, Unset):
            thread_key = UNSET
        else:
            thread_key = self.thread_key

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "agent": agent,
                "cached_input_tokens": cached_input_tokens,
                "cost_usd": cost_usd,
                "cpu_seconds": cpu_seconds,
                "first_at": first_at,
                "input_tokens": input_tokens,
                "last_at": last_at,
                "output_tokens": output_tokens,
                "runs": runs,
                "tenant": tenant,
                "wall_seconds": wall_seconds,
            }
        )
        if thread_key is not UNSET:
            field_dict["thread_key"] = thread_key

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        agent = d.pop("agent")

        cached_input_tokens = d.pop("cached_input_tokens")

        cost_usd = d.pop("cost_usd")

        cpu_seconds = d.pop("cpu_seconds")

        first_at = datetime.datetime.fromisoformat(d.pop("first_at"))

        input_tokens = d.pop("input_tokens")

        last_at = datetime.datetime.fromisoformat(d.pop("last_at"))

        output_tokens = d.pop("output_tokens")

        runs = d.pop("runs")

        tenant = d.pop("tenant")

        wall_seconds = d.pop("wall_seconds")

        def _parse_thread_key(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        thread_key = _parse_thread_key(d.pop("thread_key", UNSET))

        usage_row_view = cls(
            agent=agent,
            cached_input_tokens=cached_input_tokens,
            cost_usd=cost_usd,
            cpu_seconds=cpu_seconds,
            first_at=first_at,
            input_tokens=input_tokens,
            last_at=last_at,
            output_tokens=output_tokens,
            runs=runs,
            tenant=tenant,
            wall_seconds=wall_seconds,
            thread_key=thread_key,
        )

        return usage_row_view
