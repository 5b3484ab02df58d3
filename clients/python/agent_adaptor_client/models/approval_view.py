from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.approval_view_details import ApprovalViewDetails
    from ..models.choice_view import ChoiceView


T = TypeVar("T", bound="ApprovalView")


@_attrs_define
class ApprovalView:
    """An approval request (permission, plan review or question), with whether it is still pending.

    Attributes:
        attempt (int): The delivery attempt.
        choices (list[ChoiceView]): The choices.
        created_at (datetime.datetime): When it was asked.
        details (ApprovalViewDetails): Redacted details.
        id (str): The approval id.
        kind (str): `permission`, `plan_review` or `question`.
        pending (bool): Still waiting for an answer.
        run_id (str): The run that asked.
        source (str): Who asks (the tool or the agent).
        title (str): What is asked.
        tool_call_id (str): The tool call it gates, when any.
        deadline (datetime.datetime | None | Unset): When it expires.
        outcome (None | str | Unset): How it ended, once it did: `approved`, `denied`, `answered`, `expired` (its
            deadline passed or the
            provider withdrew it) or `cancelled` (its run ended without an answer).
    """

    attempt: int
    choices: list[ChoiceView]
    created_at: datetime.datetime
    details: ApprovalViewDetails
    id: str
    kind: str
    pending: bool
    run_id: str
    source: str
    title: str
    tool_call_id: str
    deadline: datetime.datetime | None | Unset = UNSET
    outcome: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        attempt = self.attempt

        choices = []
        for choices_item_data in self.choices:
            choices_item = choices_item_data.to_dict()
            choices.append(choices_item)

        created_at = self.created_at.isoformat()

        details = self.details.to_dict()

        id = self.id

        kind = self.kind

        pending = self.pending

        run_id = self.run_id

        source = self.source

        title = self.title

        tool_call_id = self.tool_call_id

        deadline: None | str | Unset
        if isinstance(self.deadline, Unset):
            deadline = UNSET
        elif isinstance(self.deadline, datetime.datetime):
            deadline = self.deadline.isoformat()
        else:
            deadline = self.deadline

        outcome: None | str | Unset
        if isinstance(self.outcome, Unset):
            outcome = UNSET
        else:
            outcome = self.outcome

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "attempt": attempt,
                "choices": choices,
                "created_at": created_at,
                "details": details,
                "id": id,
                "kind": kind,
                "pending": pending,
                "run_id": run_id,
                "source": source,
                "title": title,
                "tool_call_id": tool_call_id,
            }
        )
        if deadline is not UNSET:
            field_dict["deadline"] = deadline
        if outcome is not UNSET:
            field_dict["outcome"] = outcome

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.approval_view_details import ApprovalViewDetails
        from ..models.choice_view import ChoiceView

        d = dict(src_dict)
        attempt = d.pop("attempt")

        choices = []
        _choices = d.pop("choices")
        for choices_item_data in _choices:
            choices_item = ChoiceView.from_dict(choices_item_data)

            choices.append(choices_item)

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        details = ApprovalViewDetails.from_dict(d.pop("details"))

        id = d.pop("id")

        kind = d.pop("kind")

        pending = d.pop("pending")

        run_id = d.pop("run_id")

        source = d.pop("source")

        title = d.pop("title")

        tool_call_id = d.pop("tool_call_id")

        def _parse_deadline(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                deadline_type_0 = datetime.datetime.fromisoformat(data)

                return deadline_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        deadline = _parse_deadline(d.pop("deadline", UNSET))

        def _parse_outcome(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        outcome = _parse_outcome(d.pop("outcome", UNSET))

        approval_view = cls(
            attempt=attempt,
            choices=choices,
            created_at=created_at,
            details=details,
            id=id,
            kind=kind,
            pending=pending,
            run_id=run_id,
            source=source,
            title=title,
            tool_call_id=tool_call_id,
            deadline=deadline,
            outcome=outcome,
        )

        return approval_view
