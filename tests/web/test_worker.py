"""The watch worker on its channel, the embedded start/stop, and the web delivery backend."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest
from channels.testing import ApplicationCommunicator
from django.test import override_settings

from a2aconsole.core import pending
from a2aconsole.core.chat import ChatTarget as Chat
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.watches.control import PendingFileWatches
from a2aconsole.web.models import ChatTarget, InboxItem
from a2aconsole.web.process import background
from a2aconsole.web.process.runtime import (
    LeasedWatches,
    Runtime,
    build_runtime,
    close_runtime,
    get_runtime,
    install_runtime,
)
from a2aconsole.web.routing import channel_routes
from tests.support.watching import SignalClock, WaitableSink, add_record, start_task

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def clock() -> SignalClock:
    return SignalClock()


@pytest.fixture
async def runtime(clock: SignalClock, settings) -> AsyncIterator[Runtime]:
    rt = install_runtime(build_runtime(client_settings=ClientSettings(), clock=clock, events=WaitableSink()))
    yield rt
    await close_runtime()


@pytest.fixture
def channel() -> ApplicationCommunicator:
    return ApplicationCommunicator(channel_routes["a2a-watches"], {"type": "channel", "channel": "a2a-watches"})


async def _target(ws: Workspace, target_id: str = "chat1") -> None:
    await ChatTarget.objects.acreate(id=target_id, name="Chat", workspace=str(ws.root), backend="web")


async def test_worker_arms_and_drops_watches_from_the_files(
    make_agent, workspace, clock, runtime, channel, settings
) -> None:
    settings.WORKSPACE_DIR = workspace.root
    agent = make_agent(streaming=False, push=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    await _target(workspace)
    task = await start_task(runtime.remote, workspace, "bot", "hold wk")
    rec = await add_record(workspace, task, "bot", clock)

    await channel.send_input({"type": "watch.arm", "workspace": str(workspace.root), "watch_id": rec.watch_id})
    await clock.until(lambda s: 15.0 in s)  # armed: its first poll nap (the worker started with the message)
    assert runtime.registry is not None and rec.watch_id in runtime.registry

    # a web process ends the watch in the file and wakes the worker, which drops it
    assert await PendingFileWatches().stop_watching(workspace, "chat1", "bot", task.id) is not None
    await channel.send_input({"type": "watch.stop", "workspace": str(workspace.root), "watch_id": rec.watch_id})
    # messages about unknown workspaces or with bad fields are dropped; the worker stays up
    await channel.send_input({"type": "watch.arm", "workspace": "/etc"})
    await channel.send_input({"type": "watch.push", "workspace": str(workspace.root), "watch_id": 5})
    await channel.send_input({"type": "watch.rescan"})
    await channel.send_input({"type": "target.flush", "target": "chat1", "workspace": str(workspace.root)})
    await clock.until(lambda s: 1.0 in s)  # the flush (handled after every message before it) waits a second
    assert rec.watch_id not in runtime.registry and len(runtime.registry) == 0
    channel.stop()


async def test_worker_flush_delivers_kept_results_to_web_inbox(
    make_agent, workspace, clock, runtime, channel, settings
) -> None:
    settings.WORKSPACE_DIR = workspace.root
    agent = make_agent(streaming=False, push=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    await _target(workspace)
    task = await start_task(runtime.remote, workspace, "bot", "hello kept")
    kept = await add_record(workspace, task, "bot", clock, undelivered="[A2A result] kept for later")
    await ChatTarget.objects.filter(id="chat1").aupdate(enabled=False)  # unreachable now: stays kept
    await runtime.start_registry([workspace])
    await clock.until(lambda s: 30.0 in s)  # the failed delivery's retry is scheduled
    assert [r.undelivered for r in pending.read(workspace).records] == ["[A2A result] kept for later"]
    await ChatTarget.objects.filter(id="chat1").aupdate(enabled=True)

    await channel.send_input({"type": "target.flush", "target": "chat1", "workspace": str(workspace.root)})
    await clock.until(lambda s: 1.0 in s)
    await clock.advance(1.0)
    sink = runtime.events
    assert isinstance(sink, WaitableSink)
    await sink.until(lambda: "delivered" in sink.kinds(), what="the kept result to go out")
    assert pending.read(workspace).records == []
    item = await InboxItem.objects.aget(target_id="chat1", watch_id=kept.watch_id)
    assert item.text == "[A2A result] kept for later"
    channel.stop()


async def test_background_start_with_client_off_arms_nothing(workspace, caplog) -> None:
    with override_settings(A2A_CLIENT=ClientSettings(enabled=False), WORKSPACE_DIR=workspace.root):
        with caplog.at_level(logging.INFO):
            await background.start()
        assert get_runtime().registry is None
        assert "A2A client is off" in caplog.text
    await background.stop()


async def test_background_start_restores_enabled_targets(make_agent, workspace, tmp_path, clock, settings) -> None:
    settings.WORKSPACE_DIR = tmp_path / "console"
    agent = make_agent(streaming=False, push=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    other = Workspace(tmp_path / "off")
    other.save_agents([{"name": "bot", "url": agent.url}], None)
    await _target(workspace)
    await ChatTarget.objects.acreate(id="off", name="Off", workspace=str(other.root), enabled=False)
    install_runtime(build_runtime(client_settings=ClientSettings(), clock=clock))
    rt = get_runtime()
    task = await start_task(rt.remote, workspace, "bot", "hold bg")
    rec = await add_record(workspace, task, "bot", clock)
    off = await add_record(other, task, "bot", clock, target="off")

    await background.start()
    assert rt.registry is not None and rec.watch_id in rt.registry and off.watch_id not in rt.registry
    assert isinstance(rt.tool.watches, LeasedWatches) and rt.tool.watches.registry is rt.registry
    await background.start()  # idempotent
    await background.stop()
    await background.stop()
    assert [r.watch_id for r in pending.read(workspace).records] == [rec.watch_id]  # records stay


async def test_web_delivery_stores_once_per_watch_and_tells_open_tabs(workspace) -> None:
    from channels.layers import get_channel_layer

    from a2aconsole.core.events import target_group
    from a2aconsole.core.pending.records import WatchRecord
    from a2aconsole.web.chats import aresolve
    from a2aconsole.web.delivery.targets import TargetDelivery

    await _target(workspace)
    layer = get_channel_layer()
    tab = await layer.new_channel()
    await layer.group_add(target_group("chat1"), tab)
    rec = WatchRecord("w1", "chat1", "bot", "t1", "c1", state="completed")
    delivery = TargetDelivery()
    assert await delivery.deliver("chat1", "the result", rec)
    assert await delivery.deliver("chat1", "the result", rec)  # at least once: the second finds the first
    items = [i async for i in InboxItem.objects.filter(target_id="chat1")]
    assert [(i.watch_id, i.text, i.state, i.task_id) for i in items] == [("w1", "the result", "completed", "t1")]
    message = await layer.receive(tab)
    assert message["type"] == "a2a.event" and message["event"]["kind"] == "inbox"
    assert not await delivery.deliver("nobody", "text", rec)  # unknown target: kept for later
    await ChatTarget.objects.filter(id="chat1").aupdate(enabled=False)
    assert not await delivery.deliver("chat1", "text", rec)  # disabled target: kept
    assert await aresolve("chat1") is None and await aresolve("nobody") is None  # the tool gets neither


async def test_web_process_without_registry_writes_files_and_wakes_worker(workspace, runtime, clock) -> None:
    from channels.layers import get_channel_layer

    from a2aconsole.core.pending.records import WatchRecord

    layer = get_channel_layer()
    await layer.flush()  # wake-ups other tests sent to the worker channel (nobody read them)
    watches = runtime.tool.watches  # no registry in this runtime: files first, then a wake-up
    rec = WatchRecord("w9", "chat1", "bot", "t9", started_at=clock.now().isoformat())
    async with pending.transaction(workspace) as tx:
        tx.add(rec)
    await watches.arm(workspace, rec)
    assert await layer.receive("a2a-watches") == {
        "type": "watch.arm",
        "workspace": str(workspace.root),
        "watch_id": "w9",
    }
    assert await watches.stop_watching(workspace, "chat1", "bot", "t9") == rec
    assert pending.read(workspace).records == []
    assert (await layer.receive("a2a-watches"))["type"] == "watch.stop"
    await watches.rearm(workspace, rec)
    assert [r.watch_id for r in pending.read(workspace).records] == ["w9"]
    assert (await layer.receive("a2a-watches"))["type"] == "watch.arm"
    runtime.request_flush(Chat("chat1", workspace))  # the flush names the target's workspace: no lookup
    assert await layer.receive("a2a-watches") == {
        "type": "target.flush",
        "target": "chat1",
        "workspace": str(workspace.root),
    }
