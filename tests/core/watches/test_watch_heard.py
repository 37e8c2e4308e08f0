"""Last heard from: a watch knows when its agent last answered and why its last call failed; past its threshold the
silence is news (one `watch.update`, "quiet"), the record keeps it (written at a change, not at every answer), and a
push watch whose agent stopped answering is checked on the poll backoff, not only by the 10-minute safety check.
Against real agents on both SDKs: one stopped, one unreachable for a while."""

from __future__ import annotations

from datetime import timedelta

from a2aconsole.core import pending
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.watches.follower import POLL_BACKOFF, PUSH_SAFETY
from a2aconsole.core.watches.heard import HEARD_AT, LAST_ERROR
from tests.support.watching import add_record, push_watched, start_task


def _use(ws: Workspace, url: str) -> None:
    ws.save_agents([{"name": "bot", "url": url}], None)


def _news(sink) -> list[str]:
    return [e.data["news"] for e in sink.events if e.kind == "watch.update" and "news" in e.data]


async def test_a_push_watch_whose_agent_stopped_is_checked_on_the_poll_backoff(
    make_sdk_agent, workspace: Workspace, remote: Remote, clock, registry_for
) -> None:
    agent = make_sdk_agent(streaming=False)
    async with push_watched(agent, workspace, remote, clock, registry_for, "hold heard") as (reg, delivery, sink, _):
        await clock.until(lambda s: s == [PUSH_SAFETY])  # the first check answered: push, the safety check next
        heard = clock.now()
        [row] = reg.snapshot()
        assert row["source"] == "push" and row["heardAt"] == heard.isoformat() and row["lastError"] == ""
        assert HEARD_AT not in pending.read(workspace).records[0].extra  # no write for an answer

        agent.stop()
        await clock.advance(PUSH_SAFETY)  # the safety check fails: the agent is checked again on the backoff
        await clock.until(lambda s: len(s) > 1)
        assert clock.sleeps[-1] in POLL_BACKOFF[:2] and PUSH_SAFETY not in clock.sleeps[1:], clock.sleeps
        [row] = reg.snapshot()
        assert row["heardAt"] == heard.isoformat() and row["lastError"]  # refused, or a 404 where it was
        [kept] = pending.read(workspace).records
        assert kept.extra[HEARD_AT] == heard.isoformat() and kept.extra[LAST_ERROR] == row["lastError"]
        assert _news(sink) == ["quiet"]  # ten minutes without an answer, the last call failed: news at once
        [quiet] = [e for e in sink.events if e.data.get("news") == "quiet"]
        assert quiet.data["heardAt"] == heard.isoformat() and quiet.data["error"] == row["lastError"]

        for _ in range(2):  # unanswered again and again: on the backoff, told once
            naps = len(clock.sleeps)
            await clock.advance(clock.sleeps[-1])
            await clock.until(lambda s, n=naps: len(s) > n)
            assert clock.sleeps[-1] in POLL_BACKOFF, clock.sleeps
        assert _news(sink) == ["quiet"] and len(reg) == 1 and delivery.delivered == []  # told once; not lost


async def test_a_polled_agent_unreachable_then_back_is_heard_again(
    make_sdk_agent, workspace: Workspace, remote: Remote, clock, registry_for
) -> None:
    reg, delivery, sink = registry_for(workspace)
    agent = make_sdk_agent(streaming=False, push=False)
    _use(workspace, agent.url)
    task = await start_task(remote, workspace, "bot", "hold again")
    await reg.arm(workspace, await add_record(workspace, task, "bot", clock))
    await clock.until(lambda s: len(s) == 1)
    await clock.advance(15)  # answered
    await clock.until(lambda s: len(s) == 2)
    heard = clock.now()

    _use(workspace, "http://127.0.0.1:9/")  # nothing listens there: connection refused
    await clock.advance(30)  # the first unanswered check: not news yet (twice the interval it last heard at: 60 s)
    await clock.until(lambda s: len(s) == 3)
    assert "unreachable" in reg.snapshot()[0]["lastError"] and _news(sink) == []
    assert pending.read(workspace).records[0].extra[HEARD_AT] == heard.isoformat()
    await clock.advance(60)  # 90 s without an answer
    await clock.until(lambda s: len(s) == 4)
    assert _news(sink) == ["quiet"]

    _use(workspace, agent.url)
    await clock.advance(120)
    await clock.until(lambda s: len(s) == 5)
    assert _news(sink) == ["quiet", "heard"]
    [row] = reg.snapshot()
    assert row["lastError"] == "" and row["heardAt"] == (heard + timedelta(seconds=210)).isoformat()
    [kept] = pending.read(workspace).records
    assert LAST_ERROR not in kept.extra and kept.extra[HEARD_AT] == row["heardAt"]
    agent.release("again")
