from enum import StrEnum


class RequestMcpTransportType1Type(StrEnum):
    SSE = "sse"

    def __str__(self) -> str:
        return str(self.value)
