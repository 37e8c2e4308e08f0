"""Benchmark (a script, not collected by pytest): what an agent that sends too much costs the console.

    .venv/bin/python -m tests.bench.big_answer [--mb 100] [--text-mb 3] [--files 1200] [--old]

1. A `--mb` MB text answer from an agent in its own process (so its memory is not counted), sent through the
   tool: the call's time, the error, and how much the console's peak RSS grew (VmHWM, reset before the call
   through /proc/self/clear_refs). Twice: the agent declaring Content-Length (refused before reading), and
   answering chunked (read up to the byte budget, then stopped). Target: under 50 MB.
2. A `--text-mb` MB text answer (under the budget) through the console: the bytes of each page that shows
   it (the send reply, dashboard, chat, task page, its re-check with the raw task, inbox). Target: < 1 MB.
3. `--files` file parts with one name saved into a folder (the new constant-time naming; `--old` also times
   the former quadratic one).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "a2aconsole.settings")

MB = 1024 * 1024


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise LookupError(field)


def _reset_peak() -> None:
    """Make VmHWM (the peak RSS) start again from the current RSS."""
    Path("/proc/self/clear_refs").write_text("5")


async def big_answer(mb: int) -> None:
    from a2aconsole.core.files.workspace import Workspace
    from a2aconsole.core.remote.http import new_http_client
    from tests.support.agent_process import agent_process
    from tests.support.toolkit import SETTINGS, TARGET, make_tool

    for chunked in (False, True):
        ws = Workspace(Path(tempfile.mkdtemp()) / "ws")
        ws.root.mkdir(parents=True)
        with agent_process(chunked=chunked) as url:
            ws.save_agents([{"name": "big", "url": url}], None)
            http = new_http_client(SETTINGS.response_limit)
            tool = make_tool(http, ws)
            await tool.run("send", {"agent": "big", "message": "hello"}, TARGET)  # warm: card, connection
            _reset_peak()
            before = _status_kb("VmRSS")
            started = time.perf_counter()
            out = await tool.run("send", {"agent": "big", "message": f"bigtext {mb * MB}"}, TARGET)
            took = time.perf_counter() - started
            grown = (_status_kb("VmHWM") - before) / 1024
            await http.aclose()
        how = "chunked" if chunked else "Content-Length"
        print(f"{mb} MB answer ({how}): {took:.2f} s (the agent building it included), peak RSS +{grown:.1f} MB")
        print(f"  -> {out.get('error') or out}")
        print(f"  inbox folder created: {ws.inbox_dir.exists()}")


def setup_django() -> None:
    """Django over a fresh SQLite database in a temp data folder, migrated."""
    os.environ["A2ACONSOLE_DATA"] = tempfile.mkdtemp()
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


async def pages(text_mb: int) -> None:
    from asgiref.sync import sync_to_async
    from django.contrib.auth import get_user_model
    from django.test import AsyncClient, override_settings
    from django.test.utils import setup_test_environment

    from a2aconsole.core.config import ClientSettings
    from a2aconsole.web.models import ChatTarget, TaskEvent
    from tests.support.agents import start_agent
    from tests.support.runtime import fresh_runtime

    setup_test_environment()
    root = Path(tempfile.mkdtemp()) / "ws"
    root.mkdir(parents=True)
    agent = start_agent(push=False)
    try:
        with override_settings(WORKSPACE_DIR=root):
            from a2aconsole.core.files.workspace import Workspace

            Workspace(root).save_agents([{"name": "bot", "url": agent.url}], None)
            await ChatTarget.objects.acreate(id="console", name="Console", workspace=str(root))
            user = await sync_to_async(get_user_model().objects.create_user)("owner", password="a long password 1")
            owner = AsyncClient()
            await owner.aforce_login(user)
            settings = ClientSettings(wait_seconds=10, card_timeout_seconds=5, call_timeout=30)
            async with fresh_runtime(client_settings=settings):
                started = time.perf_counter()
                sent = await owner.post("/chat/console/send/", {"agent": "bot", "message": f"bigtext {text_mb * MB}"})
                took = time.perf_counter() - started
                row = await TaskEvent.objects.filter(kind="result").alast()
                assert row is not None, "no result"
                sizes = {"send reply": len(sent.content)}
                for name, url in (
                    ("dashboard", "/"),
                    ("chat", "/chat/console/"),
                    ("task page", f"/tasks/bot/{row.task_id}/?target=console"),
                    ("inbox", "/inbox/console/"),
                ):
                    sizes[name] = len((await owner.get(url)).content)
                recheck = await owner.post(f"/tasks/bot/{row.task_id}/act/", {"action": "status", "target": "console"})
                sizes["task re-check (raw JSON)"] = len(recheck.content)
        print(
            f"{text_mb} MB text answer through the console: send took {took:.2f} s; stored event text "
            f"{len(row.text):,} characters; saved as {row.data.get('textFiles', [{}])[0].get('file')}"
        )
        for name, size in sizes.items():
            print(f"  {name}: {size / 1024:.1f} KB")
    finally:
        agent.stop()


def old_save_file(folder: Path, name: str, data: bytes) -> Path:
    """The former naming (kept here to compare): try name, name-1, name-2, … reading each taken file."""
    from a2aconsole.core.files.atomic import fsync_dir

    stem, ext = os.path.splitext(name)
    fd, tmp = tempfile.mkstemp(prefix=".incoming.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        for n in range(10_000):
            candidate = folder / (name if n == 0 else f"{stem}-{n}{ext}")
            try:
                os.link(tmp, candidate)
            except FileExistsError:
                if candidate.stat().st_size == len(data) and candidate.read_bytes() == data:
                    return candidate
                continue
            fsync_dir(folder)
            return candidate
        raise OSError("no free name")
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def files(count: int, old: bool) -> None:
    from a2aconsole.core.files.inbox import InboxFolder

    datas = [f"file {i}\n".encode() for i in range(count)]
    folder = Path(tempfile.mkdtemp())
    inbox = InboxFolder(folder)
    started = time.perf_counter()
    paths = {inbox.save("part.txt", d) for d in datas}
    inbox.sync()
    took = time.perf_counter() - started
    print(f"{count} file parts named part.txt: {len(paths)} files in {took:.2f} s ({took / count * 1000:.2f} ms each)")
    again = InboxFolder(folder)
    started = time.perf_counter()
    reused = {again.save("part.txt", d) for d in datas}
    print(f"  the same parts again (a re-check): {time.perf_counter() - started:.2f} s, reused: {reused == paths}")
    if old:
        folder = Path(tempfile.mkdtemp())
        started = time.perf_counter()
        for d in datas:
            old_save_file(folder, "part.txt", d)
        print(f"  former naming: {time.perf_counter() - started:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--text-mb", type=int, default=3)
    parser.add_argument("--files", type=int, default=1200)
    parser.add_argument("--old", action="store_true")
    args = parser.parse_args()
    asyncio.run(big_answer(args.mb))
    setup_django()
    asyncio.run(pages(args.text_mb))
    files(args.files, args.old)


if __name__ == "__main__":
    main()
