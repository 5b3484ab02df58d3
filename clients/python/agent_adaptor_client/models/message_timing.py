from enum import StrEnum


class MessageTiming(StrEnum):
    AFTER_TURN = "after_turn"
    INTERRUPT = "interrupt"
    SOON = "soon"

    def __str__(self) -> str:
        return str(self.value)
