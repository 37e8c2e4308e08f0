"""The watch table pages: 50 rows a page, newest first, so a workspace with thousands of watches answers as
fast and as small as one with ten (issue 12: at 10,000 watches the page took 1.9 s and weighed 14 MB); a search
pages too, and a tab on a later page follows that page's rows live."""

from __future__ import annotations

import re

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.test import Client

from a2aconsole.core import pending
from a2aconsole.core.events import ALL_GROUP
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.records import WatchRecord
from a2aconsole.web import live
from a2aconsole.web.views.watches import PAGE_SIZE
from tests.support.console import connect_socket
from tests.web.test_live_transport import event, frames_until, store

pytestmark = pytest.mark.django_db(transaction=True)


async def add_dated_watches(ws: Workspace, count: int) -> None:
    """Watch i started i minutes after midnight: the newest is the last one."""
    async with pending.transaction(ws) as tx:
        tx.add(
            *(
                WatchRecord(
                    f"w{i}",
                    "console",
                    "poet" if i % 5 == 0 else "bot",
                    f"task-{i:05d}",
                    f"ctx-{i}",
                    started_at=f"2026-01-01T{i // 60:02d}:{i % 60:02d}:00+00:00",
                )
                for i in range(count)
            )
        )


def shown(html: str) -> list[str]:
    return re.findall(r'<tr id="watch-(w\d+)"', html)


@pytest.fixture
def owner(django_user_model) -> Client:
    client = Client()
    client.force_login(django_user_model.objects.create_user("owner", password="a long test password"))
    return client


async def test_a_page_holds_fifty_watches_newest_first(ws: Workspace, owner: Client) -> None:
    await add_dated_watches(ws, 125)
    first = (await sync_to_async(owner.get)("/watches/")).content.decode()
    assert shown(first) == [f"w{i}" for i in range(124, 74, -1)] and PAGE_SIZE == 50
    assert "1–50 of 125 watches · page 1 of 3" in first and 'rel="next"' in first and 'rel="prev"' not in first
    last = (await sync_to_async(owner.get)("/watches/?page=3")).content.decode()
    assert shown(last) == [f"w{i}" for i in range(24, -1, -1)]
    assert "101–125 of 125 watches · page 3 of 3" in last and 'rel="prev"' in last and 'rel="next"' not in last
    beyond = (await sync_to_async(owner.get)("/watches/?page=99")).content.decode()
    assert shown(beyond) == shown(last)  # past the end: the last page
    assert shown((await sync_to_async(owner.get)(f"/watches/?page={'9' * 40}")).content.decode()) == shown(last)
    for bad in ("0", "-2", "two", "", "9" * 5000):
        assert shown((await sync_to_async(owner.get)(f"/watches/?page={bad}")).content.decode()) == shown(first)


async def test_a_search_pages_within_its_matches(ws: Workspace, owner: Client) -> None:
    await add_dated_watches(ws, 300)  # 60 of them are the poet's
    page = (await sync_to_async(owner.get)("/watches/?q=agent%3Apoet&page=2")).content.decode()
    assert shown(page) == [f"w{i}" for i in range(45, -1, -5)]
    assert "51–60 of 60 matching (300 watches in all) · page 2 of 2" in page
    assert 'href="?q=agent%3Apoet&amp;page=1" rel="prev"' in page
    few = (await sync_to_async(owner.get)("/watches/?q=task-0029")).content.decode()
    assert shown(few) == [f"w{i}" for i in range(299, 289, -1)] and "10 of 300 watches" in few


async def test_a_tab_on_a_later_page_follows_that_page(ws: Workspace, owner_cookie: str) -> None:
    await add_dated_watches(ws, 125)
    comm, ok = await connect_socket("/ws/console/watches/?page=2", owner_cookie)
    assert ok
    got = await frames_until(comm, lambda t: t.count("<tr id=") == 50)
    assert shown("".join(got)) == [f"w{i}" for i in range(74, 24, -1)]
    await sync_to_async(store)("task-00051", "state", "input-required")  # on this page (a bot watch)
    await get_channel_layer().group_send(ALL_GROUP, event("task-00051"))
    frame = "".join(await frames_until(comm, lambda t: '<tr id="watch-w51"' in t))
    assert 'data-task-state="input-required"' in frame and shown(frame) == ["w51"]
    await comm.disconnect()


async def test_the_page_link_of_a_tab_carries_its_page(ws: Workspace) -> None:
    await add_dated_watches(ws, 3)
    assert "page=2" in await sync_to_async(live.ws_url)("watches", q="", page="2")


def test_a_row_action_reads_its_own_watch_only(ws: Workspace, owner: Client) -> None:
    """Re-check on one row of 2,000 watches reads that watch's state, not every watch's (it built all rows to find
    one: 1.9 s at 10,000)."""
    import asyncio

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    asyncio.run(add_dated_watches(ws, 2000))
    with CaptureQueriesContext(connection) as queries:
        r = owner.post("/watches/action/", {"watch": "w1234", "action": "unknown-action"}, headers={"HX-Request": "1"})
    assert r.status_code == 200 and "unknown action" in r.content.decode()
    stated = [q["sql"] for q in queries.captured_queries if "web_taskevent" in q["sql"] or "web_taskrecord" in q["sql"]]
    assert stated and all("task-01234" in sql and "task-01235" not in sql for sql in stated), stated


async def test_the_status_page_shows_the_newest_watches_and_links_to_all(ws: Workspace, owner: Client) -> None:
    """`/a2a` listed every watch (10,000 rows); it shows each workspace's newest and says where the rest are."""
    await add_dated_watches(ws, 120)
    page = (await sync_to_async(owner.get)("/a2a")).content.decode()
    tasks = re.findall(r'title="(task-\d{5})"><code>', page)
    assert tasks == [f"task-{i:05d}" for i in range(119, 69, -1)]
    assert "Watches (120)" in page and "all 120 are on the" in page
