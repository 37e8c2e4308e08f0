"""Message-only replies (the agent answers with a Message, no task) are kept in the history like results:
in the chat's log after a reload and in the dashboard's "Latest results"."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient

from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.tool.tool import A2ATool
from a2aconsole.web.models import TaskEvent, TaskRecord
from tests.support.agents import TestAgent
from tests.support.console import add_agent
from tests.support.sends import send

pytestmark = pytest.mark.django_db(transaction=True)


async def test_message_reply_is_stored_and_shown_after_reload(
    owner: AsyncClient, tool: A2ATool, ws: Workspace, agent: TestAgent
) -> None:
    add_agent(ws, agent)
    r = await send(owner, {"agent": "bot", "message": "message hi"}, headers={"HX-Request": "1"})
    assert "echo: message hi" in r.text
    stored = await sync_to_async(list)(TaskEvent.objects.filter(kind="message"))
    assert [(e.agent, e.text, e.target) for e in stored] == [("bot", "echo: message hi", "console")]
    assert stored[0].context_id == agent.received[-1].context_id
    page = await owner.get("/chat/console/")
    assert "echo: message hi" in page.text and "bot answered" in page.text
    dashboard = await owner.get("/")
    latest = dashboard.text.split('id="latest-results"', 1)[1]
    assert "echo: message hi" in latest
    # no task: nothing for the Tasks page to list
    assert await sync_to_async(TaskRecord.objects.count)() == 0
