"""Benchmark (a script, not collected by pytest): what keeping a workspace's scrubber current costs at an owner's
size, on the event loop.

    .venv/bin/python -m tests.bench.scrubber_refresh [--watches 10000] [--rounds 20]

Every tool answer and every event passes the workspace's scrubber (`scrubber.Scrubbers.for_workspace`), which
must know the push tokens of `pending.json`. With W push watches in it, each round commits one change as the
watches' batcher does (a state edit: a fold that moves no token), then one that adds a push watch and one that
removes it (the token set changes), and times the scrubber's refresh after each. Prints the medians in ms.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from a2aconsole.core import pending


async def main(watches: int, rounds: int) -> None:
    from a2aconsole.core.files.workspace import Workspace
    from a2aconsole.core.scrubber import Scrubbers
    from a2aconsole.core.tool.send import new_record

    ws = Workspace(tempfile.mkdtemp(prefix="a2a-bench-scrub-"))
    ws.save_agents([{"name": "echo", "url": "http://127.0.0.1:1/", "key": "k" * 32}], None)
    now = datetime.now(UTC)
    async with pending.transaction(ws) as tx:
        tx.add(*(new_record(f"chat{i % 50}", "echo", f"task-{i}", "", "push", now) for i in range(watches)))
    scrubbers = Scrubbers()
    scrubbers.for_workspace(ws)
    times: dict[str, list[float]] = {"state edit (no token moves)": [], "push watch added": [], "removed": []}

    async def timed(label: str, change: Callable[[], Awaitable[None]]) -> None:
        await change()
        t = time.perf_counter()
        scrubbers.for_workspace(ws)
        times[label].append(time.perf_counter() - t)

    for k in range(rounds):
        extra = new_record("chatX", "echo", f"extra-{k}", "", "push", now)

        async def edit(k: int = k) -> None:
            async with pending.transaction(ws) as tx:
                rec = tx.edit(tx.records[k].watch_id)
                assert rec is not None
                rec.state = "working" if k % 2 else "input-required"

        async def add(extra=extra) -> None:
            async with pending.transaction(ws) as tx:
                tx.add(extra)

        async def remove(extra=extra) -> None:
            async with pending.transaction(ws) as tx:
                tx.remove(extra.watch_id)

        await timed("state edit (no token moves)", edit)
        await timed("push watch added", add)
        await timed("removed", remove)
    size = pending.file_path(ws).stat().st_size
    print(f"{watches} push watches in pending.json ({size / 1e6:.1f} MB), {rounds} rounds: the scrubber's refresh")
    for label, values in times.items():
        print(f"  after a commit, {label:30s} median {statistics.median(values) * 1000:7.2f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="the workspace scrubber's refresh after commits")
    parser.add_argument("--watches", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    asyncio.run(main(args.watches, args.rounds))
