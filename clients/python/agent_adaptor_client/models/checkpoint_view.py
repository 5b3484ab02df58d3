from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="CheckpointView")


@_attrs_define
class CheckpointView:
    """A thread's checkpoint audit.

    Attributes:
        codec (str): The session codec.
        fingerprint (str): The compatibility fingerprint.
        pending_persistence (bool): True while the newest checkpoint is held in process because the store failed.
        record_id (str): The internal session record id.
        resume_id (str): The provider's resume id.
        updated_at (datetime.datetime): When it was persisted.
    """

    codec: str
    fingerprint: str
    pending_persistence: bool
    record_id: str
    resume_id: str
    updated_at: datetime.datetime

    def to_dict(self) -> dict[str, Any]:
        codec = self.codec

        fingerprint = self.fingerprint

        pending_persistence = self.pending_persistence

        record_id = self.record_id

        resume_id = self.resume_id

        updated_at = self.updated_at.isoformat()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "codec": codec,
                "fingerprint": fingerprint,
                "pending_persistence": pending_persistence,
                "record_id": record_id,
                "resume_id": resume_id,
                "updated_at": updated_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        codec = d.pop("codec")

        fingerprint = d.pop("fingerprint")

        pending_persistence = d.pop("pending_persistence")

        record_id = d.pop("record_id")

        resume_id = d.pop("resume_id")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        checkpoint_view = cls(
            codec=codec,
            fingerprint=fingerprint,
            pending_persistence=pending_persistence,
            record_id=record_id,
            resume_id=resume_id,
            updated_at=updated_at,
        )

        return checkpoint_view
