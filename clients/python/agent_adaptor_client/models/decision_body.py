from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.decision import Decision
from ..types import UNSET, Unset

T = TypeVar("T", bound="DecisionBody")


@_attrs_define
class DecisionBody:
    """The body of an approval answer.

    Attributes:
        decision (Decision): What the host decides.
        answer (None | str | Unset): The answer to a question: a choice key or free text.
        reason (None | str | Unset): The reason of a denial.
    """

    decision: Decision
    answer: None | str | Unset = UNSET
    reason: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        decision = self.decision.value

        answer: None | str | Unset
        if isinstance(self.answer, Unset):
            answer = UNSET
        else:
            answer = self.answer

        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "decision": decision,
            }
        )
        if answer is not UNSET:
            field_dict["answer"] = answer
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        decision = Decision(d.pop("decision"))

        def _parse_answer(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        answer = _parse_answer(d.pop("answer", UNSET))

        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reason = _parse_reason(d.pop("reason", UNSET))

        decision_body = cls(
            decision=decision,
            answer=answer,
            reason=reason,
        )

        return decision_body
