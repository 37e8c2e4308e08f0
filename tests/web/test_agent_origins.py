"""An agent whose card points its calls at another origin: the agents list and page say so, nothing is sent
there, and the owner's "Trust" on the page (a POST, audited, version-checked) lets calls go there, "Stop
trusting" ends it. Against real loopback agents on both SDKs."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient

from a2aconsole.core.files.agents import origin
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.tool.tool import A2ATool
from a2aconsole.web import chats
from a2aconsole.web.models import AuditEntry
from tests.support.agents import TestAgent
from tests.support.js_agents import SdkAgent
from tests.web.test_agent_cards import row
from tests.web.test_console_pages import check_page

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "k-origin-NEVER-SHOWN-77"


async def _send(tool: A2ATool) -> dict:
    """A send from the console's chat, through the process's real tool."""
    return await tool.run("send", {"agent": "decoy", "message": "hello"}, await chats.aresolve("console"))


async def test_the_owner_sees_the_other_origin_and_decides(
    owner: AsyncClient,
    tool: A2ATool,
    console_target,
    ws: Workspace,
    make_sdk_agent: Callable[..., SdkAgent],
    make_agent: Callable[..., TestAgent],
) -> None:
    other = make_agent()
    elsewhere = origin(other.url)
    decoy = make_sdk_agent(key=KEY, interface_url=f"{other.url}internal-admin/purge?all=1")
    await ws.asave_agents([{"name": "decoy", "url": decoy.url, "key": KEY}], None)

    page = (await owner.get("/agent/decoy/")).text
    check_page("/agent/decoy/", page)
    assert f'This card sends calls to another address:</strong> <span class="mono">{elsewhere}</span>' in page
    assert f"Trust {elsewhere}" in page and "not used</strong> (another origin)" in page
    assert "all=1" not in page  # the interface shown masked: no query
    listed = (await owner.get("/agents/")).text
    assert "calls elsewhere: not used until you trust it" in row(listed, "decoy")

    refused = await _send(tool)
    assert "nothing was sent" in refused["error"]
    assert other.requests == []

    version = ws.read_agents().version
    r = await owner.post("/agent/decoy/origin/", {"origin": elsewhere, "action": "trust", "version": version})
    assert r.status_code == 302 and r["Location"] == "/agent/decoy/"
    assert ws.read_agents().get("decoy").trusted_origins == (elsewhere,)
    assert ws.read_agents().get("decoy").key == KEY  # the rest of the entry as it was
    audit = await sync_to_async(lambda: list(AuditEntry.objects.values_list("action", "subject", "detail")))()
    assert ("agent-origin-trusted", "decoy", elsewhere) in audit

    page = (await owner.get("/agent/decoy/")).text
    check_page("/agent/decoy/", page)
    assert "This card sends calls to another address" not in page and "used (trusted by you)" in page
    assert "Stop trusting" in page and "calls elsewhere" not in row((await owner.get("/agents/")).text, "decoy")

    sent = await _send(tool)
    assert "nothing was sent" not in sent.get("error", ""), sent
    assert other.requests, "the call went to the trusted origin"
    assert all(KEY not in str(headers) for _, _, headers in other.requests)  # the key stays home

    version = ws.read_agents().version
    r = await owner.post("/agent/decoy/origin/", {"origin": elsewhere, "action": "revoke", "version": version})
    assert r.status_code == 302
    assert ws.read_agents().get("decoy").trusted_origins == ()
    assert "trustedOrigins" not in ws.agents_path.read_text()
    audit = await sync_to_async(lambda: list(AuditEntry.objects.values_list("action", flat=True)))()
    assert "agent-origin-revoked" in audit


async def test_a_bad_or_stale_trust_changes_nothing(owner: AsyncClient, ws: Workspace) -> None:
    await ws.asave_agents([{"name": "decoy", "url": "http://127.0.0.1:9/"}], None)
    before = ws.agents_path.read_bytes()
    version = ws.read_agents().version
    for data in (
        {"origin": "http://a.example/path", "action": "trust", "version": version},
        {"origin": "javascript:alert(1)", "action": "trust", "version": version},
        {"origin": "http://a.example", "action": "own", "version": version},
        {"origin": "http://a.example", "action": "trust", "version": "stale"},
    ):
        r = await owner.post("/agent/decoy/origin/", data, follow=True)
        assert r.status_code == 200
        assert "Not changed:" in r.content.decode(), data
        assert ws.agents_path.read_bytes() == before
    assert (await owner.get("/agent/decoy/origin/")).status_code == 405
    assert not await sync_to_async(AuditEntry.objects.filter(action__startswith="agent-origin").exists)()
