"""Benchmark: the instructions this process runs per send, the `a2a` tool's against the bare a2a-sdk client's.

    .venv/bin/python -m tests.bench.send_instructions [--agent js|python|both]

The tool's own cost per send as a count, not a time: `send_overhead` times both ways, and this machine's speed
moves its figures by tens of microseconds between runs (and two copies of the same code may differ by as much, by
where they lie in memory), more than most changes to the tool's work. Here each way runs under valgrind's
callgrind (which counts the instructions this process executes, not the agent's) twice, for FEW and FEW + MANY
sends after the same start, and the difference over MANY is its instructions per send: the same figure on
every run (PYTHONHASHSEED fixed; a few thousand either way between copies of the code). The sends are those
of `send_overhead`: a task the first GetTask finds done (the tool writes its record when the reply names the
task and removes it when the check finds it done), the same message and wire calls both ways. Needs `valgrind`
(apt install valgrind).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
FEW, MANY = 20, 200


async def _sends(kind: str, n: int, url: str) -> None:
    """The child: `n` sends one way (`tool` or `bare`) to the agent at `url`."""
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
    if kind == "tool":
        tool = A2ATool(Remote(new_http_client()), ClientSettings(wait_seconds=30))
        target = ChatTarget("bench", ws)
        for i in range(n):
            r = await tool.run("send", {"agent": "echo", "message": f"hello {i}"}, target)
            assert r.get("state") == "completed", r
        return
    http = new_http_client()
    card = await Remote(http).fetch_card(ws.read_agents().entries[0])
    client = ClientFactory(ClientConfig(httpx_client=http, streaming=False, supported_protocol_bindings=BINDINGS))
    bare = client.create(card.sdk_card)
    for i in range(n):
        m = Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=f"hello {i}")])
        m.metadata.update({HOPS_KEY: 1})
        config = SendMessageConfiguration(return_immediately=True, history_length=0)
        async for ev in bare.send_message(SendMessageRequest(message=m, configuration=config)):
            task = ev.task
        while (await bare.get_task(GetTaskRequest(id=task.id, history_length=0))).status.state != 3:  # COMPLETED
            pass


def _counted(kind: str, n: int, url: str) -> int:
    """The instructions of a child making `n` sends, start included."""
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    cmd += [sys.executable, __file__, "--child", kind, str(n), url]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True, cwd=ROOT).stderr
    found = re.search(r"Collected : (\d+)", out)
    assert found, out[-2000:]
    return int(found.group(1))


def per_send(kind: str, url: str) -> float:
    return (_counted(kind, FEW + MANY, url) - _counted(kind, FEW, url)) / MANY


def measure(label: str, url: str) -> None:
    tool, bare = per_send("tool", url), per_send("bare", url)
    print(f"{label} agent: instructions of this process per send ({MANY} sends, callgrind)")
    print(f"  tool:                                   {tool / 1e6:.3f} M")
    print(f"  bare send(returnImmediately)+GetTask:   {bare / 1e6:.3f} M (ratio tool / this: {tool / bare:.3f})")
    print(f"  the tool's own:                         {(tool - bare) / 1e3:.0f} K")


def main() -> None:
    parser = argparse.ArgumentParser(description="instructions per send, the tool's against the bare client's")
    parser.add_argument("--agent", choices=["js", "python", "both"], default="both")
    parser.add_argument("--child", nargs=3, metavar=("KIND", "N", "URL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, n, url = args.child
        asyncio.run(_sends(kind, int(n), url))
        return
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (apt install valgrind)")
    import logging

    from tests.support.agents import start_agent
    from tests.support.js_agents import JsAgentHost

    if args.agent in ("python", "both"):
        logging.disable(logging.CRITICAL)
        agent = start_agent()  # in this process, which valgrind does not count: only the children are
        try:
            measure("python (a2a-sdk)", agent.url)
        finally:
            agent.stop()
    if args.agent in ("js", "both"):
        host = JsAgentHost(Path(tempfile.mkdtemp(prefix="a2a-bench-js-")) / "agent.log")
        try:
            measure("js (@a2a-js/sdk)", host.make().url)
        finally:
            host.stop()


if __name__ == "__main__":
    main()
