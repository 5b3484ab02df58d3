from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="StandbyView")


@_attrs_define
class StandbyView:
    """A Standby: a server-lifetime conversation handle on a thread.

    Attributes:
        agent (str): The agent.
        events_url (str): Its SSE events (every execution, each `run_started` … `done`; `id:` = `<execution>:<seq>`).
        executions (int): Executions it started so far (each a run: `GET /v1/runs/{run_id}`).
        key (str): The thread key.
        live (bool): True until it is released (or the service stops).
        opened_at (datetime.datetime): When it was opened.
        last_run_id (None | str | Unset): The run id of its latest execution, if any.
    """

    agent: str
    events_url: str
    executions: int
    key: str
    live: bool
    opened_at: datetime.datetime
    last_run_id: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        agent = self.agent

        events_url = self.events_url

        executions = self.executions

        key = self.key

        live = self.live

        opened_at = self.opened_at.isoformat()

        last_run_id: None | str | Unset
        if isinstance(self.last_run_id, Unset):
            last_run_id = UNSET
        else:
            last_run_id = self.last_run_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "agent": agent,
                "events_url": events_url,
                "executions": executions,
                "key": key,
                "live": live,
                "opened_at": opened_at,
            }
        )
        if last_run_id is not UNSET:
            field_dict["last_run_id"] = last_run_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        agent = d.pop("agent")

        events_url = d.pop("events_url")

        executions = d.pop("executions")

        key = d.pop("key")

        live = d.pop("live")

        opened_at = datetime.datetime.fromisoformat(d.pop("opened_at"))

        def _parse_last_run_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        last_run_id = _parse_last_run_id(d.pop("last_run_id", UNSET))

        standby_view = cls(
            agent=agent,
            events_url=events_url,
            executions=executions,
            key=key,
            live=live,
            opened_at=opened_at,
            last_run_id=last_run_id,
        )

        return standby_view
