from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.run_summary_usage_type_0 import RunSummaryUsageType0


T = TypeVar("T", bound="RunSummary")


@_attrs_define
class RunSummary:
    """One run in a listing.

    Example:
        {'agent': 'claude', 'created_at': '2026-01-01T12:00:00Z', 'ended_at': '2026-01-01T12:00:09Z', 'run_id':
            '0193a1b2-7c4d-7e8f-9a0b-1c2d3e4f5a6b', 'state': 'succeeded', 'tenant': 'default', 'thread_key': 'demo',
            'usage': {'input_tokens': 120, 'output_tokens': 48}}

    Attributes:
        agent (str): The agent.
        created_at (datetime.datetime): When the run started.
        run_id (str): The run id.
        state (str): The lifecycle state (`queued`, `running`, `parked`, `succeeded`, `failed`, `cancelled`,
            `interrupted`). Example: succeeded.
        tenant (str): The tenant the run belongs to.
        ended_at (datetime.datetime | None | Unset): When the run ended (`null` while it runs).
        thread_key (None | str | Unset): The thread key, for a run on a thread.
        usage (None | RunSummaryUsageType0 | Unset): The metered usage of a finished run, as in its result (`null` when
            none was recorded).
    """

    agent: str
    created_at: datetime.datetime
    run_id: str
    state: str
    tenant: str
    ended_at: datetime.datetime | None | Unset = UNSET
    thread_key: None | str | Unset = UNSET
    usage: None | RunSummaryUsageType0 | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.run_summary_usage_type_0 import RunSummaryUsageType0

        agent = self.agent

        created_at = self.created_at.isoformat()

        run_id = self.run_id

        state = self.state

        tenant = self.tenant

        ended_at: None | str | Unset
        if isinstance(self.ended_at, Unset):
            ended_at = UNSET
        elif isinstance(self.ended_at, datetime.datetime):
            ended_at = self.ended_at.isoformat()
        else:
            ended_at = self.ended_at

        thread_key: None | str | Unset
        if isinstance(self.thread_key, Unset):
            thread_key = UNSET
        else:
            thread_key = self.thread_key

        usage: dict[str, Any] | None | Unset
        if isinstance(self.usage, Unset):
            usage = UNSET
        elif isinstance(self.usage, RunSummaryUsageType0):
            usage = self.usage.to_dict()
        else:
            usage = self.usage

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "agent": agent,
                "created_at": created_at,
                "run_id": run_id,
                "state": state,
                "tenant": tenant,
            }
        )
        if ended_at is not UNSET:
            field_dict["ended_at"] = ended_at
        if thread_key is not UNSET:
            field_dict["thread_key"] = thread_key
        if usage is not UNSET:
            field_dict["usage"] = usage

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.run_summary_usage_type_0 import RunSummaryUsageType0

        d = dict(src_dict)
        agent = d.pop("agent")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        run_id = d.pop("run_id")

        state = d.pop("state")

        tenant = d.pop("tenant")

        def _parse_ended_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                ended_at_type_0 = datetime.datetime.fromisoformat(data)

                return ended_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        ended_at = _parse_ended_at(d.pop("ended_at", UNSET))

        def _parse_thread_key(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        thread_key = _parse_thread_key(d.pop("thread_key", UNSET))

        def _parse_usage(data: object) -> None | RunSummaryUsageType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                usage_type_0 = RunSummaryUsageType0.from_dict(data)

                return usage_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RunSummaryUsageType0 | Unset, data)

        usage = _parse_usage(d.pop("usage", UNSET))

        run_summary = cls(
            agent=agent,
            created_at=created_at,
            run_id=run_id,
            state=state,
            tenant=tenant,
            ended_at=ended_at,
            thread_key=thread_key,
            usage=usage,
        )

        return run_summary
