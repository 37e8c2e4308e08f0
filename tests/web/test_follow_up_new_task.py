"""An answer the agent takes as a new task (fasta2a opens one for every message, issue 26 item 2), answered from
the console: the old task's question is no longer open, and its timeline says where the answer went."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient

from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.tool.tool import A2ATool
from a2aconsole.web import history
from a2aconsole.web.models import TaskEvent
from tests.support.fasta2a_agents import Fasta2aAgent
from tests.support.sends import send
from tests.web.test_console_pages import check_page

pytestmark = pytest.mark.django_db(transaction=True)


async def test_the_old_question_is_answered_and_points_at_the_new_task(
    owner: AsyncClient, tool: A2ATool, ws: Workspace, fasta2a_agent: Fasta2aAgent
) -> None:
    ws.save_agents([{"name": "bot", "url": fasta2a_agent.url}], None)
    r = await send(owner, {"agent": "bot", "message": "ask"})
    assert "Which colour?" in r.text
    (question,) = await sync_to_async(list)(TaskEvent.objects.filter(kind="question"))
    assert [q.id for q in await sync_to_async(history.open_questions)()] == [question.id]
    old, context_id = question.task_id, question.context_id
    r = await send(owner, {"agent": "bot", "message": "red", "task_id": old, "context_id": context_id})
    assert "got answer: red" in r.text
    assert await sync_to_async(history.open_questions)() == []
    new = (await sync_to_async(TaskEvent.objects.get)(kind="result")).task_id
    assert new != old
    url = f"/tasks/bot/{old}/?target=console"
    page = (await owner.get(url)).text
    check_page(url, page)
    assert f'href="/tasks/bot/{new}/?target=console"' in page and "The agent took your answer as a new task" in page
    assert 'id="answer-form-' not in page
