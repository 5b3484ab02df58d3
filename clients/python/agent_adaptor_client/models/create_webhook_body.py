from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="CreateWebhookBody")


@_attrs_define
class CreateWebhookBody:
    """The body of `POST /v1/webhooks`.

    Attributes:
        events (list[str]): The event types to receive (at least one): `run.finished`, `run.failed`,
            `approval.requested`,
            `message.failed`.
        url (str): Where deliveries are posted: an absolute `http` or `https` URL without credentials, at most
            2048 bytes.
        description (None | str | Unset): A note for humans (at most 1024 bytes).
    """

    events: list[str]
    url: str
    description: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        events = self.events

        url = self.url

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "events": events,
                "url": url,
            }
        )
        if description is not UNSET:
            field_dict["description"] = description

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        events = cast(list[str], d.pop("events"))

        url = d.pop("url")

        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))

        create_webhook_body = cls(
            events=events,
            url=url,
            description=description,
        )

        return create_webhook_body
