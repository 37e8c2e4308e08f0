"""The agent's side of its tasks: ListTasks (paged, filtered by context and state, bounded) and a task's push
configs (listed with URLs masked and tokens left out, deleted), on both SDKs' agents; an agent without ListTasks
(0.3, or answering method-not-found or unsupported) says so in words the page shows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from a2aconsole.core.files.agents import AgentEntry
from a2aconsole.core.remote.client import Connection, Remote
from a2aconsole.core.remote.convert import outgoing_message
from a2aconsole.core.remote.errors import RemoteError
from a2aconsole.core.remote.values import TaskSnapshot
from tests.support.js_agents import SdkAgent


async def _connect(remote: Remote, agent: SdkAgent) -> Connection:
    return await remote.connect(AgentEntry(name="bot", url=agent.url))


async def _send(conn: Connection, text: str, context_id: str = "") -> TaskSnapshot:
    task = await conn.send(outgoing_message(text, [], context_id, "", {}))
    assert isinstance(task, TaskSnapshot)
    return task


async def _finished(conn: Connection, task: TaskSnapshot) -> None:
    """Wait (by GetTask: the agent answers once it holds the state) until `hello` has completed."""
    for _ in range(100):
        if (await conn.get_task(task.id)).state == "completed":
            return
    pytest.fail(f"task {task.id} did not complete")


async def test_the_agents_tasks_come_in_pages_filtered_by_context_and_state(
    remote: Remote, make_sdk_agent: Callable[..., SdkAgent]
) -> None:
    agent = make_sdk_agent()
    conn = await _connect(remote, agent)
    first = await _send(conn, "hello one")
    second = await _send(conn, "hello two", first.context_id)
    held = await _send(conn, "hold tl")
    try:
        for t in (first, second):
            await _finished(conn, t)

        seen: list[str] = []
        token, pages = "", 0
        while True:
            page = await conn.list_tasks(page_size=2, page_token=token)
            assert len(page.tasks) <= 2
            seen += [t.id for t in page.tasks]
            pages += 1
            token = page.next_page_token
            if not token:
                break
            assert pages < 5, "the pages never end"
        assert sorted(seen) == sorted([first.id, second.id, held.id]) and pages == 2

        in_context = await conn.list_tasks(context_id=first.context_id)
        assert sorted(t.id for t in in_context.tasks) == sorted([first.id, second.id])
        assert {t.context_id for t in in_context.tasks} == {first.context_id}

        working = await conn.list_tasks(state="working")
        assert [(t.id, t.state) for t in working.tasks] == [(held.id, "working")]
        completed = await conn.list_tasks(state="completed", context_id=first.context_id)
        assert {t.state for t in completed.tasks} == {"completed"} and len(completed.tasks) == 2
        assert all(t.artifacts == () and t.history_ids == () for t in completed.tasks)  # status only: small pages
    finally:
        agent.release("tl")


async def test_a_page_is_bounded_whatever_size_is_asked(remote: Remote, sdk_agent: SdkAgent) -> None:
    conn = await _connect(remote, sdk_agent)
    await _send(conn, "hello bound")
    page = await conn.list_tasks(page_size=10_000)  # asked as 100 at most; both SDKs refuse more
    assert len(page.tasks) == 1
    with pytest.raises(RemoteError, match="unknown task state 'busy'"):
        await conn.list_tasks(state="busy")


@pytest.mark.parametrize("sdk", ["python", "js", "js-rest"])
async def test_an_agent_without_list_tasks_says_so(remote: Remote, sdk: str, request: pytest.FixtureRequest) -> None:
    if sdk == "python":
        agent = request.getfixturevalue("make_agent")(list_tasks=False)
        why = "it answers ListTasks with method not found"
    else:
        agent = request.getfixturevalue("make_js_agent")(
            list_tasks=False, **({"rest": True} if sdk == "js-rest" else {})
        )
        why = "it answers ListTasks with unsupported operation (this agent does not offer ListTasks)"
    conn = await _connect(remote, agent)
    with pytest.raises(RemoteError) as e:
        await conn.list_tasks()
    assert e.value.kind == "not_listing"
    assert str(e.value) == f'agent "bot" does not list its tasks: {why}'


async def test_a_0_3_agent_does_not_list_its_tasks(remote: Remote, make_agent: Callable[..., Any]) -> None:
    conn = await _connect(remote, make_agent(legacy=True))
    with pytest.raises(RemoteError) as e:
        await conn.list_tasks()
    assert (e.value.kind, str(e.value)) == (
        "not_listing",
        'agent "bot" does not list its tasks: it speaks A2A 0.3, which has no ListTasks (1.0 added it)',
    )


async def test_push_configs_are_listed_masked_and_deleted(remote: Remote, sdk_agent: SdkAgent) -> None:
    conn = await _connect(remote, sdk_agent)
    task = await _send(conn, "hold pc")
    try:
        secret = "tok-" + "s3cr3t" * 4
        await conn.create_push(task.id, "http://user:pw@127.0.0.1:9/a2a/push/w1?key=qs-secret", secret, "w1")
        await conn.create_push(task.id, "http://127.0.0.1:9/elsewhere", "", "other")
        configs = await conn.list_push_configs(task.id)
        by_id = {c.id: c for c in configs}
        assert set(by_id) == {"w1", "other"}
        assert by_id["w1"].url == "http://127.0.0.1:9/a2a/push/w1" and by_id["w1"].has_token
        assert by_id["other"].url == "http://127.0.0.1:9/elsewhere" and not by_id["other"].has_token
        assert all(c.task_id == task.id for c in configs)
        for said in (repr(configs), str(configs)):
            assert secret not in said and "qs-secret" not in said and "pw@" not in said

        await conn.delete_push(task.id, "other")
        assert [c.id for c in await conn.list_push_configs(task.id)] == ["w1"]
    finally:
        sdk_agent.release("pc")
