"""The agents at a glance: the list shows each card from the card history (never fetched on load), the refresh
and refetch go through the real tool to real loopback agents (Python and JS SDKs), and a card that changed
says what changed, kept per agent across reloads, with no key anywhere."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import timedelta

import pytest
from a2a.types import AgentSkill
from asgiref.sync import sync_to_async
from django.test import AsyncClient
from django.utils import timezone

from a2aconsole.core.files.agents import AgentEntry
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.tool.tool import A2ATool
from a2aconsole.web import card_history
from a2aconsole.web.models import CardSnapshot
from tests.support.agents import TestAgent
from tests.support.console import create_owner
from tests.support.js_agents import JsAgent
from tests.web.test_console_pages import check_page

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "k-card-NEVER-SHOWN-4e1"
HX = {"HX-Request": "true"}


def card_gets(agent: TestAgent) -> int:
    return sum(1 for method, path, _ in agent.requests if method == "GET" and path.endswith("agent-card.json"))


def row(html: str, name: str) -> str:
    m = re.search(rf'<tr id="agent-row-{name}">(.*?)</tr>', html, re.S)
    assert m, f"no row for {name}"
    return m.group(1)


async def test_list_shows_cards_from_history_and_refreshes_only_stale_ones(
    owner: AsyncClient,
    tool: A2ATool,
    ws: Workspace,
    make_agent: Callable[..., TestAgent],
    make_js_agent: Callable[..., JsAgent],
) -> None:
    bot = make_agent(push=False, description="Books trains")
    js = make_js_agent(streaming=False)
    ws.save_agents(
        [
            {"name": "bot", "url": bot.url, "key": KEY},
            {"name": "js", "url": js.url},
            {"name": "gone", "url": "http://127.0.0.1:9/"},
        ],
        None,
    )
    page = await owner.get("/agents/")
    assert page.status_code == 200
    assert card_gets(bot) == 0  # the page itself fetches nothing
    assert "not checked yet" in row(page.text, "bot") and 'hx-trigger="load"' in page.text
    # the list asks for the stale cards once it is on screen
    table = await owner.post("/agents/refresh/", {"only": "stale"}, headers=HX)
    assert table.status_code == 200 and table.text.lstrip().startswith('<div id="agents-table"')
    assert card_gets(bot) == 1
    for html in (table.text, (await owner.get("/agents/")).text):
        b = row(html, "bot")
        assert "Books trains" in b and "Echo, Files" in b and "version 1.0.0" in b
        assert re.search(r'data-label="Streaming">yes<', b) and re.search(r'data-label="Push">no<', b)
        assert "reachable" in b and "checked" in b and "card fetched" in b and "checked <time" in b and "just now" in b
        j = row(html, "js")
        assert "A scripted agent for tests" in j and "Echo, Files" in j
        assert re.search(r'data-label="Streaming">no<', j) and re.search(r'data-label="Push">yes<', j)
        g = row(html, "gone")
        assert "unreachable" in g and "is it running?" in g and "checked" in g and "card fetched" not in g
        assert KEY not in html
    page = await owner.get("/agents/")
    assert 'hx-trigger="load"' not in page.text  # every card is fresh: nothing to fetch
    assert (await owner.post("/agents/refresh/", {"only": "stale"}, headers=HX)).status_code == 200
    assert card_gets(bot) == 1
    # a minute later the cards are stale again, and the owner can refetch them all at any time
    await sync_to_async(CardSnapshot.objects.update)(checked_at=timezone.now() - timedelta(minutes=2))
    stale = (await owner.get("/agents/")).text
    assert 'hx-trigger="load"' in stale and "checked <time" in stale and "2\xa0minutes ago" in stale
    r = await owner.post("/agents/refresh/", {})
    assert r.status_code == 302 and card_gets(bot) == 2
    assert "3 cards fetched" in (await owner.get(r["Location"])).text


async def test_refetch_says_what_changed_and_keeps_it_per_agent(
    owner: AsyncClient, tool: A2ATool, ws: Workspace, make_agent: Callable[..., TestAgent]
) -> None:
    bot, other = make_agent(), make_agent()
    ws.save_agents([{"name": "bot", "url": bot.url}, {"name": "other", "url": other.url}], None)
    await owner.post("/agents/refresh/", {})
    bot.change_card(
        version="1.1.0",
        streaming=False,
        skills=[
            AgentSkill(id="echo", name="Echo", description="Repeats what it is told", tags=["test"]),
            AgentSkill(id="translate", name="Translate", description="Into French", tags=["test"]),
        ],
    )
    r = await owner.post("/agent/bot/refetch/", {})
    assert r.status_code == 302 and r["Location"] == "/agents/"
    page = (await owner.get("/agents/")).text
    said = [
        "skill added: Translate (translate)",
        "skill removed: Files (files)",
        "skill changed: Echo (echo)",  # its examples are gone
        "streaming: yes → no",
        "version: 1.0.0 → 1.1.0",
    ]
    assert "Card of bot fetched: " + "; ".join(said) in page
    b = row(page, "bot")
    for line in said:
        assert line in b
    assert "Echo, Translate" in b and re.search(r'data-label="Streaming">no<', b)
    assert "skill" not in row(page, "other")  # kept per agent
    # a refetch of the same card changes nothing, and the last change stays shown after reloads
    r = await owner.post("/agent/bot/refetch/", {}, headers=HX)
    assert r.text.lstrip().startswith('<tr id="agent-row-bot">') and "skill added: Translate" in r.text
    for _ in range(2):
        assert "skill removed: Files (files)" in row((await owner.get("/agents/")).text, "bot")
    # the agent's page has the whole history, the newest first
    detail = (await owner.get("/agent/bot/")).text
    history = detail[detail.index("Card history") :]
    assert history.index("version 1.1.0") < history.index("version 1.0.0") and "The first card seen" in history
    assert "skill added: Translate (translate)" in history
    # back to the first card: the change back is a new version again
    bot.change_card(version="1.0.0", streaming=True)
    await owner.post("/agent/bot/refetch/", {})
    b = row((await owner.get("/agents/")).text, "bot")
    assert "version: 1.1.0 → 1.0.0" in b and "streaming: no → yes" in b


async def test_no_key_in_any_card_page_or_snapshot(
    owner: AsyncClient, tool: A2ATool, ws: Workspace, make_agent: Callable[..., TestAgent]
) -> None:
    """A hostile agent echoes the key in its card: no page shows it, no snapshot keeps it."""
    agent = make_agent(key=KEY, extended=True, description=f"my key is {KEY}")
    secret_url = f"http://u:pw-{KEY}@127.0.0.1:{agent.port}/?token={KEY}"
    ws.save_agents([{"name": "bot", "url": agent.url, "key": KEY}, {"name": "odd", "url": secret_url}], None)
    pages = [
        (await owner.post("/agents/refresh/", {}, headers=HX)).text,
        (await owner.get("/agents/")).text,
        (await owner.get("/agent/bot/")).text,
        (await owner.post("/agent/bot/refetch/", {}, headers=HX)).text,
        (await owner.get("/agent/odd/")).text,
    ]
    assert "Only for key holders" in pages[2]  # the key opened the extended card
    assert "my key is ***" in pages[1]
    for html in pages:
        assert KEY not in html and "pw-" not in html
        check_page("agents", html)
    stored = await sync_to_async(lambda: [json.dumps(s.card) + s.error for s in CardSnapshot.objects.all()])()
    assert stored and not any(KEY in s for s in stored)


async def test_client_off_still_reads_and_records_cards(
    owner: AsyncClient, tool: A2ATool, ws: Workspace, agent: TestAgent
) -> None:
    """Off stops send, status and cancel (issue 10 bug 4); the agents' cards are still read and kept."""
    from dataclasses import replace

    ws.save_agents([{"name": "bot", "url": agent.url}, {"name": "new", "url": agent.url}], None)
    tool.settings = replace(tool.settings, enabled=False)
    r = await owner.post("/agents/refresh/", {}, headers=HX)
    assert "the A2A client is off" not in r.text
    assert "Echo, Files" in row(r.text, "bot") and "reachable" in row(r.text, "new")
    assert await sync_to_async(CardSnapshot.objects.count)() == 2
    page = (await owner.get("/agent/bot/")).text
    assert "Echo" in page and "the A2A client is off" not in page


def test_history_is_bounded_and_cards_capped(ws: Workspace, db: None) -> None:
    entry = AgentEntry(name="bot", url="http://127.0.0.1:1/")
    now = timezone.now()
    for i in range(card_history.KEEP + 5):
        card_history.record(str(ws.root), entry, {"name": "b", "version": str(i)}, "", now)
    kept = card_history.history(str(ws.root), "bot")
    assert len(kept) == card_history.KEEP and kept[0].card["version"] == str(card_history.KEEP + 4)
    assert kept[0].changes == {"version": {"old": str(card_history.KEEP + 3), "new": str(card_history.KEEP + 4)}}
    huge = {
        "name": "b",
        "version": "big",
        "description": "d" * (2 * card_history.MAX_CARD_BYTES),
        "skills": [{"id": f"s{i}", "name": f"Skill {i}", "description": "x" * 500} for i in range(500)],
    }
    snap = card_history.record(str(ws.root), entry, huge, "", now)
    assert snap.trimmed and len(json.dumps(snap.card)) <= card_history.MAX_CARD_BYTES
    assert snap.changes["version"] == {"old": str(card_history.KEEP + 4), "new": "big"}
    assert len(snap.changes["skills_added"]) == 500
    # the same huge card again is recognised as the same (the digest is of the whole card)
    assert card_history.record(str(ws.root), entry, huge, "", now).id == snap.id
    # an unreachable check keeps the card and says why
    down = card_history.record(str(ws.root), entry, None, "is it running?", now)
    assert down.id == snap.id and down.error == "is it running?" and down.card["version"] == "big"


def test_history_follows_a_rename_and_goes_with_a_delete(client, ws: Workspace, db: None) -> None:
    client.force_login(create_owner())
    ws.save_agents([{"name": "bot", "url": "http://127.0.0.1:1/"}], None)
    card_history.record(
        str(ws.root), AgentEntry(name="bot", url="http://127.0.0.1:1/"), {"version": "1"}, "", timezone.now()
    )
    form = {"name": "robot", "url": "http://127.0.0.1:1/", "version": ws.read_agents().version}
    assert client.post("/agent/bot/edit/", form).status_code == 302
    assert [s.agent for s in CardSnapshot.objects.all()] == ["robot"]
    assert "version 1" in client.get("/agents/").text
    assert client.post("/agent/robot/delete/", {"version": ws.read_agents().version}).status_code == 302
    assert not CardSnapshot.objects.exists()


def test_side_by_side_folds_long_unchanged_runs_and_merge_marks_overlaps() -> None:
    from a2aconsole.web.file_conflict import marker_lines, merged, side_by_side

    base = "".join(f"line {i}\n" for i in range(30))
    theirs = base.replace("line 2\n", "line 2 theirs\n")
    yours = base.replace("line 25\n", "line 25 yours\n")
    rows = side_by_side(theirs, yours)
    assert [r.kind for r in rows].count("changed") == 2 and [r.skipped for r in rows if r.kind == "skip"] == [16]
    assert rows[-1].kind == "same" and rows[-1].file_no == 30  # one line left: shown, not folded
    text, conflicts = merged(base, yours, theirs)
    assert conflicts == 0 and "line 2 theirs" in text and "line 25 yours" in text and not marker_lines(text)
    text, conflicts = merged(base, base.replace("line 2\n", "line 2 yours\n"), theirs)
    assert conflicts == 1 and marker_lines(text) == [3, 5, 7]


def test_list_queries_do_not_grow_with_the_agents(client, ws: Workspace, db: None) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.force_login(create_owner())
    counts = []
    for n in (3, 30):
        entries = [AgentEntry(name=f"a{i}", url=f"http://127.0.0.1:{i + 1}/") for i in range(n)]
        ws.save_agents([e.to_json() for e in entries], None)
        for e in entries:
            card_history.record(
                str(ws.root), e, {"name": e.name, "skills": [{"id": "s", "name": "S"}]}, "", timezone.now()
            )
        with CaptureQueriesContext(connection) as queries:
            page = client.get("/agents/")
        assert page.status_code == 200 and page.text.count('class="badge state-completed">reachable') == n
        counts.append(len(queries))
    assert counts[0] == counts[1]
