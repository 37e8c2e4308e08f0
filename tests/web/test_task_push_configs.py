"""A task's push configs at the agent, on the task page and a page of its own, on both SDKs' real agents: listed
with their ids and URLs masked (no query, token or credentials on the page), the console's own current config
marked, each removable (asked first) at the agent; an agent without push says so."""

from __future__ import annotations

import html as html_lib
import re
from typing import Any

import pytest
from django.test import AsyncClient

from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.models import ChatTarget
from tests.support.runtime import fresh_runtime
from tests.support.watching import SignalClock, add_record, start_task

SETTINGS = ClientSettings(wait_seconds=0.2, card_timeout_seconds=3, call_timeout=10)
TOKEN = "push-tok-" + "x7" * 12
SECRET_QUERY = "sig=q-s3cret"


def items(page: str) -> dict[str, str]:
    """Each listed config's HTML, by its id."""
    return {
        html_lib.unescape(m.group(2)): m.group(1)
        for m in re.finditer(r'<li class="push-config">(.*?<span class="mono">([^<]+)</span>.*?)</li>', page, re.S)
    }


@pytest.mark.django_db(transaction=True)
async def test_push_configs_are_listed_masked_marked_and_removed(
    ws: Workspace, console_target: ChatTarget, sdk_agent: Any, remote: Any, owner: AsyncClient
) -> None:
    ws.save_agents([{"name": "bot", "url": sdk_agent.url}], None)
    clock = SignalClock()
    task = await start_task(remote, ws, "bot", "hold pcv")
    entry = ws.read_agents().get("bot")
    assert entry is not None
    conn = await remote.connect(entry)
    rec = await add_record(ws, task, "bot", clock, target="console", source="push", push_token=TOKEN)
    await conn.create_push(task.id, f"http://127.0.0.1:9/a2a/push/{rec.watch_id}", TOKEN, rec.watch_id)
    await conn.create_push(task.id, f"http://127.0.0.1:9/old/hook?{SECRET_QUERY}", "old-token-abc", "old")
    try:
        async with fresh_runtime(client_settings=SETTINGS):
            task_page = (await owner.get(f"/tasks/bot/{task.id}/?target=console")).content.decode()
            push_url = f"/tasks/bot/{task.id}/push/"
            assert 'id="push-configs"' in task_page and f'href="{push_url}?target=console"' in task_page
            assert "Ask bot for its push configs" in task_page

            listed = (await owner.get(push_url, {"target": "console"})).content.decode()
            found = items(listed)
            assert set(found) == {rec.watch_id, "old"}
            assert "this console's, now" in found[rec.watch_id] and "the watch for chat console" in found[rec.watch_id]
            assert "this console" not in found["old"]
            assert "http://127.0.0.1:9/old/hook<" in found["old"] and "token set (hidden)" in found["old"]
            for secret in (TOKEN, "old-token-abc", SECRET_QUERY):
                assert secret not in listed
            assert "Remove…" in found["old"] and "Yes, remove it" in found["old"]  # asked first

            fragment = await owner.get(push_url, {"target": "console"}, headers={"HX-Request": "true"})
            assert fragment.content.decode().lstrip().startswith('<section class="card" id="push-configs"')

            removed = (await owner.post(push_url, {"action": "delete", "config": "old", "target": "console"})).content
            assert "Removed push config old at bot" in removed.decode()
            assert set(items(removed.decode())) == {rec.watch_id}
            assert [c.id for c in await conn.list_push_configs(task.id)] == [rec.watch_id]

            ours = (
                await owner.post(push_url, {"action": "delete", "config": rec.watch_id, "target": "console"})
            ).content
            assert "it was this console&#x27;s own" in ours.decode() and items(ours.decode()) == {}
            assert "holds no push config for this task" in ours.decode()
    finally:
        sdk_agent.release("pcv")


@pytest.mark.django_db(transaction=True)
async def test_an_agent_without_push_says_so(
    ws: Workspace, console_target: ChatTarget, make_sdk_agent: Any, remote: Any, owner: AsyncClient
) -> None:
    agent = make_sdk_agent(push=False)
    ws.save_agents([{"name": "bot", "url": agent.url}], None)
    task = await start_task(remote, ws, "bot", "hello nopush")
    async with fresh_runtime(client_settings=SETTINGS):
        page = (await owner.get(f"/tasks/bot/{task.id}/push/", {"target": "console"})).content.decode()
    notice = re.search(r'<div class="notice error" role="alert">(.*?)</div>', page, re.S)
    assert notice is not None
    said = html_lib.unescape(notice.group(1))
    assert said == 'agent "bot" takes no push notifications (its card says so): it holds no push configs'
    assert "ListTaskPushNotificationConfigs" not in agent.methods  # nothing was asked
    assert '<li class="push-config">' not in page
