from enum import StrEnum


class ApprovalsBodyQuestion(StrEnum):
    ASK = "ask"
    AUTO_DENY = "auto_deny"
    INHERIT = "inherit"

    def __str__(self) -> str:
        return str(self.value)
