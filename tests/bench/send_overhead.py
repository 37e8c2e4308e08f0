"""Benchmark: the `a2a` tool's `send` against the bare a2a-sdk client, same loopback agent, same run.

    .venv/bin/python -m tests.bench.send_overhead [N] [--watches W] [--latency MS]

On both SDKs' agents in turn (the Python one in its own process, the `@a2a-js/sdk` one in node): N sends (default
1,000: with fewer, the ratio moves by a few hundredths between runs) each way that complete within the wait,
interleaved in a shuffled order so all see the same conditions. The tool reads agents.json, builds the message, sends
with returnImmediately, checks the task with GetTask (a task not done by then gets its record before the wait, removed
after: issue 11) and builds the outcome. The baseline is the bare client doing the
same wire calls with the same message (the text and the hop count), returnImmediately + GetTask, both without the
task's history (as the tool asks them; GetTask again at once while the task is not done yet: on a fast agent the first
one often finds it still submitted, without the answer), over a client built once from the card; the shortest way the
SDK gets an answer, one blocking SendMessage, is printed beside it. So is the median of each round's difference
between the tool and that bare client (they run in the same round, so the machine's drift between rounds, which moves
the ratio by a few hundredths from run to run, cancels out of it): the tool's own cost per send.
With `--watches W`, the workspace's pending.json holds W watches of other chats first (an owner's size: each
send's record is written beside them). With `--latency MS`, every call crosses a link that holds each chunk MS
milliseconds in each direction (`delay_link.py`: a real network's send, where the budget is at most 1.05x the bare
client's); N defaults to 200 then.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import django

from a2aconsole.core import pending
from tests.bench.delay_link import DelayLink

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "a2aconsole.settings")

AGENT_PROCESS = """
import logging, sys
logging.disable(logging.CRITICAL)
from tests.support.agents import start_agent
port, card_url = int(sys.argv[1]), sys.argv[2]  # the card names the link in between, if any
agent = start_agent(port=port, interface_url=card_url or None)
print(agent.url, flush=True)
sys.stdin.read()
agent.stop()
"""


async def main(n: int, url: str, label: str, watches: int = 0, latency: float = 0.0) -> None:
    from a2a.client import ClientConfig, ClientFactory
    from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageConfiguration, SendMessageRequest

    from a2aconsole.core.chat import ChatTarget
    from a2aconsole.core.config import ClientSettings
    from a2aconsole.core.files.workspace import Workspace
    from a2aconsole.core.remote.client import BINDINGS, Remote
    from a2aconsole.core.remote.http import new_http_client
    from a2aconsole.core.tool.tool import HOPS_KEY, A2ATool

    ws = Workspace(tempfile.mkdtemp(prefix="a2a-bench-"))
    ws.save_agents([{"name": "echo", "url": url}], None)
    if watches:
        from datetime import UTC, datetime

        from a2aconsole.core.tool.send import new_record

        now = datetime.now(UTC)
        async with pending.transaction(ws) as tx:
            tx.add(*(new_record(f"chat{i % 50}", "echo", f"task-{i}", "", "poll", now) for i in range(watches)))
    http = new_http_client()
    settings = ClientSettings(wait_seconds=30)
    tool = A2ATool(Remote(http), settings)
    target = ChatTarget("bench", ws)
    bare_http = new_http_client()
    card = await Remote(bare_http).fetch_card(ws.read_agents().entries[0])
    bare = ClientFactory(ClientConfig(httpx_client=bare_http, streaming=False, supported_protocol_bindings=BINDINGS))
    client = bare.create(card.sdk_card)

    def message(i: int) -> Message:
        """The message the tool sends: the text, and the hop count in its metadata (the agent keeps it in the
        task's history, so every answer carries it back: the same bytes to parse either way)."""
        m = Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=f"hello {i}")])
        m.metadata.update({HOPS_KEY: 1})
        return m

    async def via_tool(i: int) -> None:
        r = await tool.run("send", {"agent": "echo", "message": f"hello {i}"}, target)
        assert r.get("state") == "completed", r

    async def via_bare(i: int) -> None:
        async for ev in client.send_message(SendMessageRequest(message=message(i))):
            assert ev.task.status.state == 3, ev  # TASK_STATE_COMPLETED

    extra_gets = [0]

    async def via_bare_same_wire(i: int) -> None:
        """returnImmediately, then GetTask until the answer is there: a GetTask that finds the task still
        submitted or working (the agent had not run it yet) has no answer, so a bare client asks again."""
        config = SendMessageConfiguration(return_immediately=True, history_length=0)
        req = SendMessageRequest(message=message(i), configuration=config)
        async for ev in client.send_message(req):
            task = ev.task
        while (await client.get_task(GetTaskRequest(id=task.id, history_length=0))).status.state != 3:  # COMPLETED
            extra_gets[0] += 1

    async def timed(fn, i: int) -> float:
        t = time.perf_counter()
        await fn(i)
        return time.perf_counter() - t

    for i in range(20):  # warm up connections and code paths
        await via_tool(i)
        await via_bare(i)
        await via_bare_same_wire(i)
    extra_gets[0] = 0
    times: dict[str, list[float]] = {"tool": [], "bare": [], "wire": []}
    runs = {"tool": via_tool, "bare": via_bare, "wire": via_bare_same_wire}
    order = random.Random(1)
    for i in range(n):
        names = list(runs)
        order.shuffle(names)  # a call may pay for the server's cleanup of the one before: no fixed order
        for name in names:
            times[name].append(await timed(runs[name], i))
    t_tool, t_bare, t_wire = times["tool"], times["bare"], times["wire"]
    await http.aclose()
    await bare_http.aclose()
    m_tool, m_bare, m_wire = (statistics.median(x) * 1000 for x in (t_tool, t_bare, t_wire))
    link = f"a link of {latency * 1000:.0f} ms each way" if latency else "loopback"
    print(f"{label} agent: {n} sends each, {link} (own process), {watches} other watches in pending.json")
    print(f"  tool send median:                        {m_tool:.2f} ms")
    ratio = m_tool / m_wire
    target = "1.05" if latency else "1.1"
    print(
        f"  bare send(returnImmediately)+GetTask:    {m_wire:.2f} ms (ratio tool / this: {ratio:.3f}, at most {target})"
    )
    print(f"  bare a2a-sdk blocking send median:       {m_bare:.2f} ms (ratio tool / this: {m_tool / m_bare:.2f})")
    paired = statistics.median(t - w for t, w in zip(t_tool, t_wire, strict=True)) * 1e6
    print(f"  tool minus bare same wire, paired:       {paired:.0f} us (median of each round's difference)")
    print(f"  bare GetTasks that found no answer yet:  {extra_gets[0]} in {n} sends (asked again at once)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_python(n: int, watches: int, latency: float) -> None:
    port = free_port()
    with DelayLink.around(f"http://127.0.0.1:{port}/", latency) as url:
        # the agent runs in its own process, so its work does not compete with the client for this GIL
        card_url = url if latency else ""
        child = subprocess.Popen(
            [sys.executable, "-c", AGENT_PROCESS, str(port), card_url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None and child.stdin is not None
        try:
            child.stdout.readline()
            asyncio.run(main(n, url, "python (a2a-sdk)", watches, latency))
        finally:
            child.stdin.close()
            child.wait(timeout=30)


def run_js(n: int, watches: int, latency: float) -> None:
    from tests.support.js_agents import JsAgentHost

    host = JsAgentHost(Path(tempfile.mkdtemp(prefix="a2a-bench-js-")) / "agent.log")
    try:
        with DelayLink.around(host.url, latency) as base:
            # the agent's card names the link in between, if any (its own path, on the link's origin)
            made = host.control.post("/agents", json={"interfaceBase": base} if latency else {}).raise_for_status()
            url = f"{base}/{made.json()['id']}/"
            asyncio.run(main(n, url, "js (@a2a-js/sdk)", watches, latency))
    finally:
        host.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="the tool's send against the bare a2a-sdk client")
    parser.add_argument("n", nargs="?", type=int, help="sends each way (default 1000; 200 with --latency)")
    parser.add_argument("--watches", type=int, default=0, help="watches of other chats in pending.json first")
    parser.add_argument("--latency", type=float, default=0.0, help="milliseconds each way of a link in between")
    args = parser.parse_args()
    n = args.n or (200 if args.latency else 1000)
    django.setup()
    run_python(n, args.watches, args.latency / 1000)
    run_js(n, args.watches, args.latency / 1000)
