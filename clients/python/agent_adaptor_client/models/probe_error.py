from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ProbeError")


@_attrs_define
class ProbeError:
    """One probe of an inspection that did not answer.

    Attributes:
        code (str): `unavailable` (the driver does not offer it), `failed` (it ran and failed) or `timeout`.
        message (str): A human-readable message (server paths replaced by placeholders such as `<path>`).
        probe (str): `environment`, `models`, `quota`, `config_schema`, `skills` or `profile`.
    """

    code: str
    message: str
    probe: str

    def to_dict(self) -> dict[str, Any]:
        code = self.code

        message = self.message

        probe = self.probe

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "code": code,
                "message": message,
                "probe": probe,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        code = d.pop("code")

        message = d.pop("message")

        probe = d.pop("probe")

        probe_error = cls(
            code=code,
            message=message,
            probe=probe,
        )

        return probe_error
