from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="UsageTotalsView")


@_attrs_define
class UsageTotalsView:
    """Sums of metered usage.

    Attributes:
        cached_input_tokens (int): Input tokens served from a cache.
        cost_usd (float): Estimated cost in US dollars.
        cpu_seconds (float): CPU time of the CLI processes in seconds.
        input_tokens (int): Input tokens.
        output_tokens (int): Output tokens.
        runs (int): Runs counted.
        wall_seconds (float): CLI wall time in seconds.
    """

    cached_input_tokens: int
    cost_usd: float
    cpu_seconds: float
    input_tokens: int
    output_tokens: int
    runs: int
    wall_seconds: float

    def to_dict(self) -> dict[str, Any]:
        cached_input_tokens = self.cached_input_tokens

        cost_usd = self.cost_usd

        cpu_seconds = self.cpu_seconds

        input_tokens = self.input_tokens

        output_tokens = self.output_tokens

        runs = self.runs

        wall_seconds = self.wall_seconds

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "cached_input_tokens": cached_input_tokens,
                "cost_usd": cost_usd,
                "cpu_seconds": cpu_seconds,
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "runs": runs,
                "wall_seconds": wall_seconds,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        cached_input_tokens = d.pop("cached_input_tokens")

        cost_usd = d.pop("cost_usd")

        cpu_seconds = d.pop("cpu_seconds")

        input_tokens = d.pop("input_tokens")

        output_tokens = d.pop("output_tokens")

        runs = d.pop("runs")

        wall_seconds = d.pop("wall_seconds")

        usage_totals_view = cls(
            cached_input_tokens=cached_input_tokens,
            cost_usd=cost_usd,
            cpu_seconds=cpu_seconds,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            runs=runs,
            wall_seconds=wall_seconds,
        )

        return usage_totals_view
