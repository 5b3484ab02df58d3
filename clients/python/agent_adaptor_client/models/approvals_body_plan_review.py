from enum import StrEnum


class ApprovalsBodyPlanReview(StrEnum):
    ASK = "ask"
    AUTO_APPROVE = "auto_approve"
    AUTO_DENY = "auto_deny"
    INHERIT = "inherit"

    def __str__(self) -> str:
        return str(self.value)
