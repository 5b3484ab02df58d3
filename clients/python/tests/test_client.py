"""The Python client against a live ``agent-adaptor serve`` (dev mode, memory store, the reference agent;
``AGENT_ADAPTOR_BIN`` names the binary): start a run, follow its events, answer its approval, send a
supplemental message, cancel, list, retry with an Idempotency-Key, a typed error answer; an event stream
cut mid-run that the follower resumes with Last-Event-ID, losing and repeating nothing; and the committed
generated package equal to what the pinned generator makes of the committed OpenAPI document."""

from __future__ import annotations

import filecmp
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import httpx
import pytest

from agent_adaptor_client import AuthenticatedClient
from agent_adaptor_client.api.approvals import approvals_decide
from agent_adaptor_client.api.runs import runs_cancel, runs_get, runs_list, runs_send_message, runs_start
from agent_adaptor_client.models import Decision, DecisionBody, ErrorBody, MessageBody, RunView, StartRunBody
from agent_adaptor_events import ServiceError, follow_events

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


@pytest.fixture(scope="module")
def base_url():
    binary = os.environ.get("AGENT_ADAPTOR_BIN")
    if not binary:
        raise RuntimeError("AGENT_ADAPTOR_BIN must name the agent-adaptor binary")
    proc = subprocess.Popen(
        [binary, "serve", "--bind", "127.0.0.1:0", "--no-discover", "--store", "memory"],
        stdout=subprocess.PIPE,
        env={**os.environ, "RUST_LOG": "warn"},
        text=True,
    )
    try:
        url = None
        for line in proc.stdout:
            m = re.search(r"agent-adaptor listening on (http://127\.0\.0\.1:\d+)", line)
            if m:
                url = m.group(1)
                break
        assert url, "serve printed its address"
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def client_of(url: str, **httpx_args) -> AuthenticatedClient:
    # Dev mode takes any request as the default tenant; the generated client always sends the token.
    return AuthenticatedClient(base_url=url, token="dev", httpx_args=httpx_args)


def start(client, prompt: str, idempotency_key: str | None = None) -> RunView:
    kwargs = {"idempotency_key": idempotency_key} if idempotency_key else {}
    answer = runs_start.sync_detailed("reference", client=client, body=StartRunBody(prompt=prompt), **kwargs)
    assert answer.status_code == 201, answer.content
    assert isinstance(answer.parsed, RunView)
    return answer.parsed


def slow(n: int) -> str:
    return "slow " + " ".join(["word"] * n)


def test_a_run_is_started_followed_approved_messaged_cancelled_and_listed(base_url):
    client = client_of(base_url)

    asked = start(client, "please ask permission")
    types = []
    for event in follow_events(client, asked.run_id):
        types.append(event.type)
        if event.type == "approval_request":
            decided = approvals_decide.sync_detailed(
                asked.run_id, event.data["id"], client=client, body=DecisionBody(decision=Decision.APPROVE)
            )
            assert decided.status_code == 200, decided.content
    assert "approval_request" in types and types[-1] == "done", types
    assert runs_get.sync(asked.run_id, client=client).state == "succeeded"

    talking = start(client, slow(20))
    sent = runs_send_message.sync_detailed(talking.run_id, client=client, body=MessageBody(text="also say bye"))
    assert sent.status_code == 202
    for _ in follow_events(client, talking.run_id):
        pass
    assert "also say bye" in str(runs_get.sync(talking.run_id, client=client).result.to_dict())

    cancelled = start(client, slow(200))
    assert runs_cancel.sync_detailed(cancelled.run_id, client=client).status_code == 202
    for _ in follow_events(client, cancelled.run_id):
        pass
    assert runs_get.sync(cancelled.run_id, client=client).state == "cancelled"

    listed = runs_list.sync(client=client, agent="reference", limit=10)
    assert [r.run_id for r in listed.runs[:3]] == [cancelled.run_id, talking.run_id, asked.run_id]

    first = start(client, "only once", idempotency_key="py-client-1")
    again = runs_start.sync_detailed(
        "reference", client=client, body=StartRunBody(prompt="only once"), idempotency_key="py-client-1"
    )
    assert again.parsed.run_id == first.run_id
    assert again.headers.get("idempotent-replayed") == "true"

    missing = runs_get.sync_detailed("run-missing", client=client)
    assert missing.status_code == 404
    assert isinstance(missing.parsed, ErrorBody)
    assert missing.parsed.error.code.value == "not_found"
    with pytest.raises(ServiceError) as refused:
        list(follow_events(client, "run-missing"))
    assert (refused.value.status, refused.value.code) == (404, "not_found")


class CuttingTransport(httpx.HTTPTransport):
    """Cuts the first ``cuts`` event streams after their third frame; records each Last-Event-ID."""

    def __init__(self, cuts: int):
        super().__init__()
        self.cuts = cuts
        self.resumed_with: list[str | None] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if not request.url.path.endswith("/events"):
            return response
        self.resumed_with.append(request.headers.get("last-event-id"))
        if self.cuts == 0:
            return response
        self.cuts -= 1

        class Cut(httpx.SyncByteStream):
            def __iter__(self):
                frames = 0
                for chunk in response.stream:
                    yield chunk
                    frames += chunk.count(b"\n\n")
                    if frames >= 3:
                        break

            def close(self):
                response.close()

        return httpx.Response(response.status_code, headers=response.headers, stream=Cut())


def test_an_event_stream_cut_mid_run_is_resumed_with_every_event_once(base_url):
    transport = CuttingTransport(cuts=2)
    client = client_of(base_url, transport=transport)
    run = start(client_of(base_url), slow(30))
    seqs, text = [], ""
    for event in follow_events(client, run.run_id, retry_delay=0.02):
        if event.seq is not None:
            seqs.append(event.seq)
        if event.type == "text_delta" and isinstance(event.data.get("text"), str):
            text += event.data["text"]
    assert transport.cuts == 0
    assert transport.resumed_with[0] is None
    assert all(v and v.isdigit() for v in transport.resumed_with[1:]), transport.resumed_with
    assert seqs == list(range(1, len(seqs) + 1)), "contiguous sequences from 1, none repeated"
    assert text.startswith("Reference reply: slow word")


def test_the_committed_package_is_what_the_generator_makes_of_the_committed_document():
    generator = shutil.which("openapi-python-client")
    assert generator, "openapi-python-client (requirements.txt) is installed"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "agent_adaptor_client"
        subprocess.run(
            [
                generator,
                "generate",
                "--path",
                str(ROOT.parent.parent / "openapi" / "openapi.json"),
                "--meta",
                "none",
                "--output-path",
                str(out),
                "--config",
                str(ROOT / "generator.yaml"),
            ],
            check=True,
            capture_output=True,
        )
        committed = ROOT / "agent_adaptor_client"
        differ = []

        def walk(cmp: filecmp.dircmp, prefix: str = ""):
            differ.extend(prefix + n for n in cmp.left_only + cmp.right_only + cmp.diff_files)
            for name, sub in cmp.subdirs.items():
                walk(sub, f"{prefix}{name}/")

        walk(filecmp.dircmp(out, committed, ignore=["__pycache__"]))
        assert not differ, f"regenerate with scripts/test-python-client.sh --generate: {differ}"
