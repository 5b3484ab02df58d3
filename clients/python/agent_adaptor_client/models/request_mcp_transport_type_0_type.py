from enum import StrEnum


class RequestMcpTransportType0Type(StrEnum):
    HTTP = "http"

    def __str__(self) -> str:
        return str(self.value)
