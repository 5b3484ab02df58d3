from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.run_links import RunLinks
    from ..models.run_view_error_type_0 import RunViewErrorType0
    from ..models.run_view_result_type_0 import RunViewResultType0


T = TypeVar("T", bound="RunView")


@_attrs_define
class RunView:
    """A run.

    Attributes:
        agent (str): The agent.
        created_at (datetime.datetime): When the run started.
        run_id (str): The run id.
        state (str): The lifecycle state. Example: running.
        error (None | RunViewErrorType0 | Unset): The error of a failed or cancelled run (`code`, `reason`, `message`,
            `details`).
        links (None | RunLinks | Unset):
        result (None | RunViewResultType0 | Unset): The result of a finished run (`text`, `turns`, `summary`, and
            `usage`: the metered input, output
            and cached tokens, `cost_usd`, `cost_source`, `wall_seconds`, `cpu_seconds`, whatever the agent's
            exposure policy); a failed run's is its partial result.
        thread_key (None | str | Unset): The thread key, for a run on a thread.
    """

    agent: str
    created_at: datetime.datetime
    run_id: str
    state: str
    error: None | RunViewErrorType0 | Unset = UNSET
    links: None | RunLinks | Unset = UNSET
    result: None | RunViewResultType0 | Unset = UNSET
    thread_key: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.run_links import RunLinks
        from ..models.run_view_error_type_0 import RunViewErrorType0
        from ..models.run_view_result_type_0 import RunViewResultType0

        agent = self.agent

        created_at = self.created_at.isoformat()

        run_id = self.run_id

        state = self.state

        error: dict[str, Any] | None | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        elif isinstance(self.error, RunViewErrorType0):
            error = self.error.to_dict()
        else:
            error = self.error

        links: dict[str, Any] | None | Unset
        if isinstance(self.links, Unset):
            links = UNSET
        elif isinstance(self.links, RunLinks):
            links = self.links.to_dict()
        else:
            links = self.links

        result: dict[str, Any] | None | Unset
        if isinstance(self.result, Unset):
            result = UNSET
        elif isinstance(self.result, RunViewResultType0):
            result = self.result.to_dict()
        else:
            result = self.result

        thread_key: None | str | Unset
        if isinstance(self.thread_key, Unset):
            thread_key = UNSET
        else:
            thread_key = self.thread_key

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "agent": agent,
                "created_at": created_at,
                "run_id": run_id,
                "state": state,
            }
        )
        if error is not UNSET:
            field_dict["error"] = error
        if links is not UNSET:
            field_dict["links"] = links
        if result is not UNSET:
            field_dict["result"] = result
        if thread_key is not UNSET:
            field_dict["thread_key"] = thread_key

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.run_links import RunLinks
        from ..models.run_view_error_type_0 import RunViewErrorType0
        from ..models.run_view_result_type_0 import RunViewResultType0

        d = dict(src_dict)
        agent = d.pop("agent")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        run_id = d.pop("run_id")

        state = d.pop("state")

        def _parse_error(data: object) -> None | RunViewErrorType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                error_type_0 = RunViewErrorType0.from_dict(data)

                return error_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RunViewErrorType0 | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        def _parse_links(data: object) -> None | RunLinks | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                links_type_0 = RunLinks.from_dict(data)

                return links_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RunLinks | Unset, data)

        links = _parse_links(d.pop("links", UNSET))

        def _parse_result(data: object) -> None | RunViewResultType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                result_type_0 = RunViewResultType0.from_dict(data)

                return result_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RunViewResultType0 | Unset, data)

        result = _parse_result(d.pop("result", UNSET))

        def _parse_thread_key(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        thread_key = _parse_thread_key(d.pop("thread_key", UNSET))

        run_view = cls(
            agent=agent,
            created_at=created_at,
            run_id=run_id,
            state=state,
            error=error,
            links=links,
            result=result,
            thread_key=thread_key,
        )

        return run_view
