from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.decision_body import DecisionBody


T = TypeVar("T", bound="DecisionAccepted")


@_attrs_define
class DecisionAccepted:
    """The answer to `POST /v1/runs/{run_id}/approvals/{id}`.

    Attributes:
        decision (DecisionBody): The body of an approval answer.
        id (str): The approval id.
        run_id (str): The run.
    """

    decision: DecisionBody
    id: str
    run_id: str

    def to_dict(self) -> dict[str, Any]:
        decision = self.decision.to_dict()

        id = self.id

        run_id = self.run_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "decision": decision,
                "id": id,
                "run_id": run_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.decision_body import DecisionBody

        d = dict(src_dict)
        decision = DecisionBody.from_dict(d.pop("decision"))

        id = d.pop("id")

        run_id = d.pop("run_id")

        decision_accepted = cls(
            decision=decision,
            id=id,
            run_id=run_id,
        )

        return decision_accepted
