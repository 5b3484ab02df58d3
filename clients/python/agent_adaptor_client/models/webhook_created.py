from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="WebhookCreated")


@_attrs_define
class WebhookCreated:
    """A subscription just created, with its signing secret (shown this once).

    Attributes:
        created_at (datetime.datetime): When it was created.
        events (list[str]): The event types it receives.
        id (str): The webhook id.
        secret (str): The signing secret, `whsec_` + base64 of 32 bytes: the HMAC-SHA256 key (its decoded bytes) of
            every delivery's `webhook-signature`. Only this answer shows it.
        tenant (str): The tenant whose events it receives.
        url (str): Where deliveries are posted.
        description (None | str | Unset): The note given at creation.
    """

    created_at: datetime.datetime
    events: list[str]
    id: str
    secret: str
    tenant: str
    url: str
    description: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        events = self.events

        id = self.id

        secret = self.secret

        tenant = self.tenant

        url = self.url

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "created_at": created_at,
                "events": events,
                "id": id,
                "secret": secret,
                "tenant": tenant,
                "url": url,
            }
        )
        if description is not UNSET:
            field_dict["description"] = description

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        events = cast(list[str], d.pop("events"))

        id = d.pop("id")

        secret = d.pop("secret")

        tenant = d.pop("tenant")

        url = d.pop("url")

        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))

        webhook_created = cls(
            created_at=created_at,
            events=events,
            id=id,
            secret=secret,
            tenant=tenant,
            url=url,
            description=description,
        )

        return webhook_created
