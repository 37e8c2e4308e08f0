"""The API's tokens as calls check them (api/tokens.py): a live token is kept in memory for CACHE_SECONDS, yet
a revoke, a delete or a change of its target in this process is honoured at the next call; one made by another
process within CACHE_SECONDS; a lookup that raced a change is not kept; `last_used_at` is written at most once per
TOKEN_USE_SECONDS, and still written."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.utils import timezone

from a2aconsole.api import tokens
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.models import ApiToken, ChatTarget
from tests.support.agents import TestAgent
from tests.support.api_host import Host, make_host
from tests.support.clock import FakeClock
from tests.support.runtime import fresh_runtime
from tests.support.toolkit import entry, write_agents

pytestmark = pytest.mark.django_db(transaction=True)

AGENTS = {"action": "agents"}


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """The token cache's clock, moved by the test (the event loop's own clock untouched)."""
    fake = FakeClock()
    monkeypatch.setattr(tokens.CACHE, "clock", fake.monotonic)
    return fake


@pytest.fixture
async def host(workspace: Workspace, make_agent: Callable[..., TestAgent], clock: FakeClock) -> AsyncIterator[Host]:
    """The `bot` target's host, with a plain agent `echo` in its workspace."""
    write_agents(workspace, entry("echo", make_agent()))
    async with fresh_runtime():
        yield await make_host(workspace)


class _TokenReads:
    """The SELECTs of the tokens' table any thread runs from now on (this test)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from django.db.backends.utils import CursorWrapper

        self.count = 0
        execute, me = CursorWrapper._execute, self

        def counted(cursor: Any, sql: str, *args: Any) -> Any:
            if sql.lstrip().upper().startswith("SELECT") and '"api_apitoken"' in sql.split(" WHERE ", 1)[0]:
                me.count += 1
            return execute(cursor, sql, *args)

        monkeypatch.setattr(CursorWrapper, "_execute", counted)


async def _row(host: Host) -> ApiToken:
    return await ApiToken.objects.aget(target=host.target)


async def test_a_live_token_is_read_once_within_the_cache_time(host: Host, clock: FakeClock, monkeypatch) -> None:
    reads = _TokenReads(monkeypatch)
    for _ in range(3):
        assert (await host.call(AGENTS))[0] == 200
    assert reads.count == 1  # the first call read it; the next two took it from memory
    await clock.advance(tokens.CACHE_SECONDS)
    assert (await host.call(AGENTS))[0] == 200
    assert reads.count == 2  # read again once the cache time is up


async def test_a_revoked_or_deleted_token_is_refused_at_once(host: Host, workspace: Workspace) -> None:
    assert (await host.call(AGENTS))[0] == 200  # now kept
    await sync_to_async((await _row(host)).revoke)()
    assert (await host.call(AGENTS))[0] == 401

    other = await make_host(workspace, "other")
    assert (await other.call(AGENTS))[0] == 200
    await ApiToken.objects.filter(target_id="other").adelete()
    assert (await other.call(AGENTS))[0] == 401


async def test_a_changed_or_deleted_target_is_seen_at_once(host: Host) -> None:
    assert (await host.call(AGENTS))[0] == 200
    target = await ChatTarget.objects.aget(pk=host.target.id)
    target.enabled = False
    await target.asave(update_fields=["enabled"])  # as the target page's switch does
    assert (await host.call(AGENTS))[0] == 403
    target.enabled = True
    await target.asave(update_fields=["enabled"])
    assert (await host.call(AGENTS))[0] == 200
    await target.adelete()  # its tokens with it
    assert (await host.call(AGENTS))[0] == 401


async def test_another_process_revoke_is_honoured_within_the_cache_time(host: Host, clock: FakeClock) -> None:
    assert (await host.call(AGENTS))[0] == 200
    # another process's revoke (`manage.py targets revoke`): the row changes, this process's signals say nothing
    await ApiToken.objects.filter(target=host.target).aupdate(revoked_at=timezone.now())
    await clock.advance(tokens.CACHE_SECONDS - 0.5)
    assert (await host.call(AGENTS))[0] == 200  # still within the bound docs/api.md states
    await clock.advance(0.5)
    assert (await host.call(AGENTS))[0] == 401


async def test_a_lookup_that_raced_a_revoke_is_not_kept(host: Host, monkeypatch) -> None:
    read = tokens.CACHE._read

    def read_then_revoked(token_hash: str, target_id: str, now: float) -> ApiToken | None:
        row = read(token_hash, target_id, now)
        ApiToken.objects.get(token_hash=token_hash).revoke()  # lands after the read, before the answer is kept
        return row

    monkeypatch.setattr(tokens.CACHE, "_read", read_then_revoked)
    assert (await host.call(AGENTS))[0] == 200  # read before the revoke
    monkeypatch.setattr(tokens.CACHE, "_read", read)
    assert (await host.call(AGENTS))[0] == 401  # not taken from memory: read again, revoked


async def test_token_use_is_noted_at_most_once_a_minute(host: Host, clock: FakeClock) -> None:
    assert (await _row(host)).last_used_at is None
    assert (await host.call(AGENTS))[0] == 200
    first = (await _row(host)).last_used_at
    assert first is not None  # the first call notes the use

    await clock.advance(tokens.TOKEN_USE_SECONDS - 1)  # past the cache time: read again, but not written
    assert (await host.call(AGENTS))[0] == 200
    assert (await _row(host)).last_used_at == first

    await clock.advance(1)
    assert (await host.call(AGENTS))[0] == 200  # a minute on: noted again, though the token is still kept
    assert (await _row(host)).last_used_at > first
