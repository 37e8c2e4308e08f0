"""A restore of many watches on one agent answers their first checks from the agent's task list (ListTasks pages)
instead of a GetTask each; a task that settled while no console ran is still asked by GetTask and delivers its
result, and an agent without ListTasks is asked by GetTask for every watch (issue 27, item 3). On both SDKs."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.remote.client import Remote
from tests.core.conftest import Registry
from tests.support.js_agents import SdkAgent
from tests.support.watching import SignalClock, add_record, eventually, settled_at_agent, start_task

HELD = 5  # working tasks the restore finds


async def restore(
    workspace: Workspace,
    remote: Remote,
    clock: SignalClock,
    agent: SdkAgent,
    registry_for: Callable[..., Registry],
) -> tuple[Registry, list[str], str]:
    """HELD working tasks and one that completed while the console was down, each a poll watch in pending.json; a
    registry that lists from that many watches of one agent (not started). Returns it, the held ids and the done id."""
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    held = [await start_task(remote, workspace, "bot", f"hold sw{i}") for i in range(HELD)]
    done = await start_task(remote, workspace, "bot", "hello while away")
    conn = await remote.connect(workspace.read_agents().get("bot"))
    await settled_at_agent(conn, done.id, "completed")
    for task in [*held, done]:
        await add_record(workspace, task, "bot", clock, extra={"state": "working"})
    reg = registry_for(workspace)
    reg[0].sweep_from = HELD + 1
    return reg, [t.id for t in held], done.id


def first_checked(reg: Registry, ids: list[str]) -> bool:
    rows = {w["taskId"]: w for w in reg[0].snapshot()}
    return all(rows[i]["checkedAt"] is not None and rows[i]["state"] == "working" for i in ids)


async def started(reg: Registry, workspace: Workspace, held: list[str]) -> None:
    """Start the registry: the settled task delivered, every held watch checked once and still working."""
    await reg[0].start([workspace])
    await reg[1].wait_for(1)
    await eventually(lambda: first_checked(reg, held), what="every held watch checked once, still working")


@pytest.mark.parametrize("listing", [True, False], ids=["lists", "no-list"])
async def test_restored_first_checks_come_from_the_task_list_and_a_settled_task_still_delivers(
    listing: bool,
    workspace: Workspace,
    remote: Remote,
    clock: SignalClock,
    make_sdk_agent: Callable[..., SdkAgent],
    registry_for: Callable[..., Registry],
) -> None:
    """An agent without ListTasks (`no-list`: it answers method-not-found, or unsupported) is asked by GetTask for
    every restored watch, as before; its list is refused once and not asked again."""
    agent = make_sdk_agent(streaming=False, push=False, list_tasks=listing)
    try:
        reg, held, done = await restore(workspace, remote, clock, agent, registry_for)
        asked_before = agent.methods.count("GetTask")
        await started(reg, workspace, held)
        # listing: one page told the held tasks' state; only the task that settled was asked by GetTask, for its result
        lists = agent.methods.count("ListTasks")
        assert lists == 1 if listing else lists <= 1  # refused once (an agent may not record a refused method)
        assert agent.methods.count("GetTask") - asked_before == (1 if listing else HELD + 1)
        [(target, delivered)] = reg[1].delivered
        assert target == "chat1" and "completed" in delivered and done[:4] in delivered
        assert sorted(w["taskId"] for w in reg[0].snapshot()) == sorted(held)
        assert clock.sleeps.count(15.0) >= HELD  # each goes on polling at a watch's pace
    finally:
        for i in range(HELD):
            agent.release(f"sw{i}")


async def test_a_0_3_agent_is_asked_by_get_task_for_every_restored_watch(
    workspace: Workspace,
    remote: Remote,
    clock: SignalClock,
    make_agent: Callable[..., SdkAgent],
    registry_for: Callable[..., Registry],
) -> None:
    """A2A 0.3 has no ListTasks: the SDK refuses the call before sending it, and each watch asks GetTask."""
    agent = make_agent(legacy=True, streaming=False, push=False)
    try:
        reg, held, _ = await restore(workspace, remote, clock, agent, registry_for)
        await started(reg, workspace, held)
        assert len(reg[0].snapshot()) == HELD  # each asked GetTask (its methods are recorded by their 0.3 names)
    finally:
        for i in range(HELD):
            agent.release(f"sw{i}")
