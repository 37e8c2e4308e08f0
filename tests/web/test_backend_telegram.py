"""The telegram backend against a real loopback server playing the Bot API."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime

import httpx
import pytest

from a2aconsole.core import pending
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.pending.records import WatchRecord
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.watches.registry import WatchRegistry
from a2aconsole.web.delivery.telegram import LIMIT, TelegramBackend, split_text
from a2aconsole.web.models import ChatTarget
from tests.support.chats import BackendDelivery, kept
from tests.support.clock import FakeClock
from tests.support.hosts import BotApi
from tests.support.watching import SignalClock, WaitableSink

BOT_TOKEN = "123456:SECRET-bot-token-value"


@pytest.fixture
def bot_api() -> Iterator[BotApi]:
    api = BotApi().start()
    yield api
    api.stop()


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 12, 2, 10, 14, 30, tzinfo=UTC))


def chat(chat_id: object = 4242, **settings: object) -> ChatTarget:
    return ChatTarget(
        id="tg",
        name="Telegram",
        workspace="/tmp/x",
        backend="telegram",
        backend_settings={"chat_id": chat_id, **settings},
    )


def backend(bot_api: BotApi, http: httpx.AsyncClient, clock: FakeClock, **env: str) -> TelegramBackend:
    return TelegramBackend(http, clock, {"TELEGRAM_BOT_TOKEN": BOT_TOKEN, "TELEGRAM_API_BASE": bot_api.url, **env})


def record() -> WatchRecord:
    return WatchRecord(watch_id="w1", target="tg", agent="travel-bot", task_id="t1", context_id="c1")


async def test_result_delivery_goes_to_chat_with_timestamp_header(bot_api, http, clock) -> None:
    text = '[A2A result from "travel-bot", task t1 (completed)]\nYour trip is booked.'
    assert await backend(bot_api, http, clock).deliver(chat(), text, record())
    assert bot_api.messages == [(4242, "[2026-12-02 10:14 UTC]\n" + text)]
    assert bot_api.hits[0].path == f"/bot{BOT_TOKEN}/sendMessage"


async def test_token_from_the_variable_the_target_names(bot_api, http, clock) -> None:
    b = TelegramBackend(http, clock, {"OTHER_BOT": "999:other", "TELEGRAM_API_BASE": bot_api.url})
    assert await b.deliver(chat(token_env="OTHER_BOT"), "hi")
    assert bot_api.hits[0].path == "/bot999:other/sendMessage"


async def test_long_text_split_on_line_boundaries(bot_api, http, clock) -> None:
    lines = [f"line {i:05d} " + "x" * 80 for i in range(120)]  # about 11 000 characters
    text = "\n".join(lines)
    assert await backend(bot_api, http, clock).deliver(chat(), text)
    sent = [t for _, t in bot_api.messages]
    assert len(sent) == 3
    assert all(len(t) <= LIMIT for t in sent)
    assert sent[0].startswith("[2026-12-02 10:14 UTC]\nline 00000 ")
    got = "\n".join(sent).split("\n")[1:]
    assert got == lines  # every line whole, in order, none lost


def test_split_cuts_a_line_longer_than_the_limit() -> None:
    pieces = split_text("a\n" + "b" * 9000 + "\nc", 4096)
    assert [len(p) for p in pieces] == [1, 4096, 4096, 810]
    assert "".join(pieces[1:4]) == "b" * 9000 + "\nc"


async def test_429_waits_retry_after_then_delivers(bot_api, http, clock) -> None:
    bot_api.script = [(429, {"ok": False, "error_code": 429, "parameters": {"retry_after": 7}})]
    task = asyncio.ensure_future(backend(bot_api, http, clock).deliver(chat(), "done"))
    await clock.wait_for_sleepers(1)
    assert clock.sleeps == [7.0] and not task.done()
    await clock.advance(7)
    assert await task
    assert [h.status for h in bot_api.hits] == [429, 200]
    assert bot_api.messages == [(4242, "[2026-12-02 10:14 UTC]\ndone")]


async def test_429_with_a_long_wait_keeps_the_result(bot_api, http, clock) -> None:
    bot_api.script = [(429, {"ok": False, "error_code": 429, "parameters": {"retry_after": 3600}})]
    assert not await backend(bot_api, http, clock).deliver(chat(), "done")
    assert clock.sleeps == [] and len(bot_api.hits) == 1


async def test_failures_return_false_and_never_log_the_token(bot_api, http, clock, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    bot_api.script = [(500, {"ok": False, "description": "Internal"}), (403, {"ok": False})]
    b = backend(bot_api, http, clock)
    assert not await b.deliver(chat(), "one")
    assert not await b.deliver(chat(), "two")
    down = TelegramBackend(http, clock, {"TELEGRAM_BOT_TOKEN": BOT_TOKEN, "TELEGRAM_API_BASE": "http://127.0.0.1:9"})
    assert not await down.deliver(chat(), "three")
    assert not await TelegramBackend(http, clock, {"TELEGRAM_API_BASE": bot_api.url}).deliver(chat(), "no token")
    assert not await b.deliver(chat(chat_id=""), "no chat")
    assert len(bot_api.hits) == 2
    assert caplog.records and BOT_TOKEN not in caplog.text
    assert "SECRET" not in caplog.text


async def test_down_then_up_delivers_exactly_the_kept_results(bot_api, http, workspace) -> None:
    clock = SignalClock()
    async with pending.transaction(workspace) as tx:
        tx.add(kept("w1", "tg", "result one"), kept("w2", "tg", "result two"), kept("w3", "gone", "other"))
    bot_api.script = [(502, {"ok": False}), (502, {"ok": False})]  # the Bot API is down at first
    delivery = BackendDelivery({"tg": (chat(), backend(bot_api, http, clock))})
    sink = WaitableSink()
    registry = WatchRegistry(Remote(http, 5.0, 5.0), ClientSettings(), delivery, clock, sink)
    try:
        await registry.start([workspace])
        await clock.until(lambda sleeps: len(sleeps) >= 3)  # three retries wait
        assert [h.status for h in bot_api.hits] == [502, 502] and bot_api.messages == []
        assert len(pending.read(workspace).records) == 3

        await clock.advance(30)  # the first retry: the Bot API is up again
        await sink.until(lambda: sink.kinds().count("delivered") == 2)
        assert sorted(t for _, t in bot_api.messages) == [
            "[2026-01-01 00:00 UTC]\nresult one",
            "[2026-01-01 00:00 UTC]\nresult two",
        ]
        assert [r.watch_id for r in pending.read(workspace).records] == ["w3"]
        await clock.advance(3600)
        assert len(bot_api.messages) == 2  # nothing twice
    finally:
        await registry.stop()


@pytest.mark.django_db(transaction=True)
async def test_console_delivery_routes_telegram_targets(bot_api, workspace, monkeypatch) -> None:
    """The console's TargetDelivery finds the registered backend; the bot token comes from the environment."""
    from a2aconsole.web.delivery.targets import TargetDelivery
    from a2aconsole.web.models import InboxItem
    from tests.support.runtime import fresh_runtime

    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("TELEGRAM_API_BASE", bot_api.url)
    await ChatTarget.objects.acreate(
        id="tg", name="Telegram", workspace=str(workspace.root), backend="telegram", backend_settings={"chat_id": 7}
    )
    async with fresh_runtime():
        assert await TargetDelivery().deliver("tg", "the result", record())
    [(chat_id, text)] = bot_api.messages
    assert chat_id == 7 and text.endswith("\nthe result") and text.startswith("[20")
    assert await InboxItem.objects.filter(target_id="tg", watch_id="w1").aexists()  # the console keeps a copy
