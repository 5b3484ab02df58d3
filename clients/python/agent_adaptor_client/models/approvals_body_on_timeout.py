from enum import StrEnum


class ApprovalsBodyOnTimeout(StrEnum):
    ABORT = "abort"
    CONTINUE = "continue"
    INHERIT = "inherit"
    RETRY = "retry"

    def __str__(self) -> str:
        return str(self.value)
