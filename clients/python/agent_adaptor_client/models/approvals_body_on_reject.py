from enum import StrEnum


class ApprovalsBodyOnReject(StrEnum):
    ABORT = "abort"
    CONTINUE = "continue"
    INHERIT = "inherit"
    RETRY = "retry"

    def __str__(self) -> str:
        return str(self.value)
