"""Follows a run's server-sent events (``GET /v1/runs/{run_id}/events``) with the generated client's
httpx connection: yields each event until ``done`` and, when the connection drops, reconnects with the
last sequence as ``Last-Event-ID`` so no event is lost or repeated. The one hand-written part of the
Python client (``agent_adaptor_client`` is generated from the service's OpenAPI document)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Iterator
from urllib.parse import quote

import httpx

from agent_adaptor_client import AuthenticatedClient, Client


@dataclass
class RunEvent:
    """One event: ``seq`` is its sequence (``None`` for the service's notices), ``type`` the SSE event
    name (the payload type: ``text_delta``, ``approval_request``, ``done``, ...), ``data`` its JSON."""

    seq: int | None
    type: str
    data: Any


class ServiceError(Exception):
    """An error answer of the service: its status and its JSON error body's ``code``."""

    def __init__(self, status: int, body: Any):
        error = body.get("error", {}) if isinstance(body, dict) else {}
        super().__init__(f"{status} {error.get('code', '')}: {error.get('message', '')}")
        self.status = status
        self.code = error.get("code")
        self.body = body


def _frames(lines: Iterator[str]) -> Iterator[tuple[str | None, str, str]]:
    seq, event, data = None, "message", []
    for line in lines:
        if line == "":
            if data:
                yield seq, event, "\n".join(data)
            seq, event, data = None, "message", []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "id":
            seq = value
        elif name == "event":
            event = value
        elif name == "data":
            data.append(value)


def follow_events(
    client: Client | AuthenticatedClient,
    run_id: str,
    *,
    after: int = 0,
    retries: int = 5,
    retry_delay: float = 0.2,
) -> Iterator[RunEvent]:
    """Yields the run's events after ``after`` until ``done``, resuming across dropped connections
    (at most ``retries`` in a row). Raises ``ServiceError`` for an error answer."""
    http = client.get_httpx_client()
    url = f"/v1/runs/{quote(run_id, safe='')}/events"
    last, failures = after, 0
    while True:
        headers = {"Accept": "text/event-stream"}
        if last > 0:
            headers["Last-Event-ID"] = str(last)
        try:
            with http.stream("GET", url, headers=headers, timeout=httpx.Timeout(10.0, read=None)) as response:
                if response.status_code >= 400:
                    response.read()
                    try:
                        body = response.json()
                    except ValueError:
                        body = response.text
                    raise ServiceError(response.status_code, body)
                for seq, event, data in _frames(response.iter_lines()):
                    failures = 0
                    number = int(seq) if seq is not None else None
                    if number is not None:
                        last = number
                    yield RunEvent(number, event, json.loads(data))
                    if event == "done":
                        return
        except httpx.TransportError:
            pass
        failures += 1
        if failures > retries:
            raise ConnectionError(f"the event stream of run {run_id} kept dropping")
        time.sleep(retry_delay)
