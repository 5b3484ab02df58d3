from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.approvals_body_on_reject import ApprovalsBodyOnReject
from ..models.approvals_body_on_timeout import ApprovalsBodyOnTimeout
from ..models.approvals_body_permission import ApprovalsBodyPermission
from ..models.approvals_body_plan_review import ApprovalsBodyPlanReview
from ..models.approvals_body_question import ApprovalsBodyQuestion
from ..types import UNSET, Unset

T = TypeVar("T", bound="ApprovalsBody")


@_attrs_define
class ApprovalsBody:
    """The approval policy as a request gives it (`approvals` of a run or a thread declaration): the fields of
    [`ApprovalPolicy`], unknown ones refused, the numbers range-checked by [`ApprovalsBody::policy`].

        Attributes:
            max_retries (int | None | Unset): Retries of `retry`, 0 to 10; absent: 3.
            on_reject (ApprovalsBodyOnReject | Unset): What follows (`inherit`: abort; `retry` asks again, up to
                `max_retries`)
            on_timeout (ApprovalsBodyOnTimeout | Unset): What follows (`inherit`: abort; `retry` asks again, up to
                `max_retries`)
            permission (ApprovalsBodyPermission | Unset): How the requests of this kind are decided (`inherit`: ask)
            plan_review (ApprovalsBodyPlanReview | Unset): How the requests of this kind are decided (`inherit`: ask)
            question (ApprovalsBodyQuestion | Unset): How questions are decided (`inherit`: auto_deny; questions cannot be
                auto-approved)
            timeout (int | None | Unset): The deadline of each request in milliseconds, 0 to 604800000 (7 days); `-1`: no
                deadline; absent or
                0: the service's `approval_timeout` (5 minutes unless configured).
    """

    max_retries: int | None | Unset = UNSET
    on_reject: ApprovalsBodyOnReject | Unset = UNSET
    on_timeout: ApprovalsBodyOnTimeout | Unset = UNSET
    permission: ApprovalsBodyPermission | Unset = UNSET
    plan_review: ApprovalsBodyPlanReview | Unset = UNSET
    question: ApprovalsBodyQuestion | Unset = UNSET
    timeout: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        max_retries: int | None | Unset
        if isinstance(self.max_retries, Unset):
            max_retries = UNSET
        else:
            max_retries = self.max_retries

        on_reject: str | Unset = UNSET
        if not isinstance(self.on_reject, Unset):
            on_reject = self.on_reject.value

        on_timeout: str | Unset = UNSET
        if not isinstance(self.on_timeout, Unset):
            on_timeout = self.on_timeout.value

        permission: str | Unset = UNSET
        if not isinstance(self.permission, Unset):
            permission = self.permission.value

        plan_review: str | Unset = UNSET
        if not isinstance(self.plan_review, Unset):
            plan_review = self.plan_review.value

        question: str | Unset = UNSET
        if not isinstance(self.question, Unset):
            question = self.question.value

        timeout: int | None | Unset
        if isinstance(self.timeout, Unset):
            timeout = UNSET
        else:
            timeout = self.timeout

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if max_retries is not UNSET:
            field_dict["max_retries"] = max_retries
        if on_reject is not UNSET:
            field_dict["on_reject"] = on_reject
        if on_timeout is not UNSET:
            field_dict["on_timeout"] = on_timeout
        if permission is not UNSET:
            field_dict["permission"] = permission
        if plan_review is not UNSET:
            field_dict["plan_review"] = plan_review
        if question is not UNSET:
            field_dict["question"] = question
        if timeout is not UNSET:
            field_dict["timeout"] = timeout

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_max_retries(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_retries = _parse_max_retries(d.pop("max_retries", UNSET))

        _on_reject = d.pop("on_reject", UNSET)
        on_reject: ApprovalsBodyOnReject | Unset
        if isinstance(_on_reject, Unset):
            on_reject = UNSET
        else:
            on_reject = ApprovalsBodyOnReject(_on_reject)

        _on_timeout = d.pop("on_timeout", UNSET)
        on_timeout: ApprovalsBodyOnTimeout | Unset
        if isinstance(_on_timeout, Unset):
            on_timeout = UNSET
        else:
            on_timeout = ApprovalsBodyOnTimeout(_on_timeout)

        _permission = d.pop("permission", UNSET)
        permission: ApprovalsBodyPermission | Unset
        if isinstance(_permission, Unset):
            permission = UNSET
        else:
            permission = ApprovalsBodyPermission(_permission)

        _plan_review = d.pop("plan_review", UNSET)
        plan_review: ApprovalsBodyPlanReview | Unset
        if isinstance(_plan_review, Unset):
            plan_review = UNSET
        else:
            plan_review = ApprovalsBodyPlanReview(_plan_review)

        _question = d.pop("question", UNSET)
        question: ApprovalsBodyQuestion | Unset
        if isinstance(_question, Unset):
            question = UNSET
        else:
            question = ApprovalsBodyQuestion(_question)

        def _parse_timeout(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        timeout = _parse_timeout(d.pop("timeout", UNSET))

        approvals_body = cls(
            max_retries=max_retries,
            on_reject=on_reject,
            on_timeout=on_timeout,
            permission=permission,
            plan_review=plan_review,
            question=question,
            timeout=timeout,
        )

        return approvals_body
