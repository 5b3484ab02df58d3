from enum import StrEnum


class Decision(StrEnum):
    ANSWER = "answer"
    APPROVE = "approve"
    DENY = "deny"

    def __str__(self) -> str:
        return str(self.value)
