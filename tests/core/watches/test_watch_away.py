"""A task that settled while no console followed it ("finished while you were away"): a watch restored from the
file whose agent's first answer since is already settled ends with `away` in its `watch.ended`; one that settles
later, or a watch armed fresh, does not. On both SDKs' agents."""

from __future__ import annotations

from collections.abc import Callable

from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.remote.client import Remote
from a2aconsole.core.watches import AWAY
from tests.core.conftest import Registry
from tests.support.js_agents import SdkAgent
from tests.support.watching import SignalClock, add_record, settled_at_agent, start_task


def ended(reg: Registry) -> list[dict]:
    return [e.data for e in reg[2].events if e.kind == "watch.ended"]


async def test_a_task_that_finished_while_down_is_marked_away(
    workspace: Workspace,
    remote: Remote,
    clock: SignalClock,
    make_sdk_agent: Callable[..., SdkAgent],
    registry_for: Callable[..., Registry],
) -> None:
    agent = make_sdk_agent(streaming=False, push=False)
    workspace.save_agents([{"name": "bot", "url": agent.url}], None)
    done = await start_task(remote, workspace, "bot", "hello away")
    conn = await remote.connect(workspace.read_agents().get("bot"))
    await settled_at_agent(conn, done.id, "completed")
    await add_record(workspace, done, "bot", clock)  # the console went down while it worked; it finished meanwhile
    held = await start_task(remote, workspace, "bot", "hold back")
    await add_record(workspace, held, "bot", clock)  # still working when the console comes back

    reg = registry_for(workspace)
    await reg[0].start([workspace])
    await reg[1].wait_for(1)
    [first] = ended(reg)
    assert first[AWAY] is True and first["reason"] == "settled"

    await clock.until(lambda s: 15.0 in s)  # the held task's first check found it working: it polls on
    agent.release("back")
    await settled_at_agent(conn, held.id, "completed")
    await clock.advance(15)
    await reg[1].wait_for(2)
    second = ended(reg)[1]
    assert AWAY not in second and second["reason"] == "settled"


async def test_a_watch_armed_now_is_never_away(
    workspace: Workspace,
    remote: Remote,
    clock: SignalClock,
    sdk_agent: SdkAgent,
    registry_for: Callable[..., Registry],
) -> None:
    workspace.save_agents([{"name": "bot", "url": sdk_agent.url}], None)
    task = await start_task(remote, workspace, "bot", "hello fresh")
    conn = await remote.connect(workspace.read_agents().get("bot"))
    await settled_at_agent(conn, task.id, "completed")
    reg = registry_for(workspace)
    await reg[0].start([workspace])
    rec = await add_record(workspace, task, "bot", clock)
    await reg[0].arm(workspace, rec)  # as a send's hand-over arms it: the console was there all along
    await reg[1].wait_for(1)
    [data] = ended(reg)
    assert AWAY not in data
