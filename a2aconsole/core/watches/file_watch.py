"""Noticing changes to the workspaces' A2A files (`agents.json`, `pending.json`) within a moment, by inotify.

A watch written by another process (`manage.py a2a send`, a hand edit, a scale-out web process whose wake-up
was lost) is in `pending.json` before any worker follows it; the worker's rescan every minute finds it, and
this watch makes that a fraction of a second. It watches each workspace's `.volcanic/a2a/` folder (not the
workspace: it may be large) with `watchfiles` (Rust `notify`: inotify on Linux), debounced, and calls
`on_change(workspace, names)` once per burst of changes. This process's own writes of `pending.json` (the
registry's and the tool's, which arm or settle watches directly) are left out (`files.written_here`); its own
writes of `agents.json` are not, so every open page hears of a change made from any tab.

Best effort: a folder it cannot watch (too many inotify watches, a file system without notifications) is
logged once and left to the minute's rescan.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path

from watchfiles import Change, awatch

from a2aconsole.core.files import Workspace, mark_seen, written_here
from a2aconsole.core.tasks import cancel_and_wait

log = logging.getLogger(__name__)

NAMES = frozenset({"agents.json", "pending.json"})
DEBOUNCE_MS = 200  # a burst of changes (a temp file, its rename) becomes one call, at most this late
STEP_MS = 50  # how long the burst must be quiet before it counts as over
QUIET_MS = 1000  # the watcher thread comes back this often with nothing (it sees `stop` sooner: each STEP_MS)

OnChange = Callable[[Workspace, frozenset[str]], Awaitable[None]]


def _ours(change: Change, path: str) -> bool:
    """The files that matter, as `watchfiles` filters them (temp files and the lock are not)."""
    return Path(path).name in NAMES


class WorkspaceFileWatch:
    """Watches the A2A files of a set of workspaces in the background; `watch()` sets the set, `stop()` ends it."""

    def __init__(self, on_change: OnChange, *, debounce_ms: int = DEBOUNCE_MS) -> None:
        self.on_change = on_change
        self.debounce_ms = debounce_ms
        self._folders: dict[Path, Workspace] = {}
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self.ready = asyncio.Event()  # set once the folders are watched for sure (within QUIET_MS)

    @property
    def folders(self) -> list[Path]:
        return list(self._folders)

    async def watch(self, workspaces: Iterable[Workspace]) -> None:
        """Watch these workspaces (and no others); a no-op when the set is unchanged and the watch runs."""
        folders: dict[Path, Workspace] = {}
        for ws in workspaces:
            if ws.root.is_dir():
                try:  # the folder a first write would create: made now, so its files can be watched
                    ws.a2a_dir.mkdir(parents=True, exist_ok=True)
                except OSError as e:
                    log.warning("not watching %s for changes (%s); the minute's rescan finds them", ws.root, e)
                    continue
                folders[ws.a2a_dir] = ws
        if folders == self._folders and self._task is not None and not self._task.done():
            return
        await self.stop()
        self._folders = folders
        if folders:
            self._stop = asyncio.Event()
            self.ready = asyncio.Event()
            self._task = asyncio.ensure_future(self._run(dict(folders), self._stop, self.ready))

    async def stop(self) -> None:
        """End the watch (idempotent); the watcher thread notices within STEP_MS. A change being followed is cut
        short, not waited for (its rescan may wait on a call or a clock): the next start's rescan finds it."""
        task, self._task = self._task, None
        self._stop.set()
        if task is not None:
            await cancel_and_wait(task)

    async def _run(self, folders: dict[Path, Workspace], stop: asyncio.Event, ready: asyncio.Event) -> None:
        try:
            async for changes in awatch(
                *folders,
                watch_filter=_ours,
                debounce=self.debounce_ms,
                step=STEP_MS,
                stop_event=stop,
                recursive=False,
                rust_timeout=QUIET_MS,
                yield_on_timeout=True,  # an empty yield after a quiet while: the folders are watched by then
            ):
                ready.set()
                for ws, names in self._by_workspace(folders, changes).items():
                    try:
                        await self.on_change(ws, names)
                    except Exception:
                        log.exception("following a change to %s failed; the minute's rescan will", ws.root)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # inotify limits, a folder gone: the rescan every minute still runs
            log.warning(
                "watching the workspace files stopped (%s: %s); the minute's rescan goes on", type(e).__name__, e
            )

    @staticmethod
    def _by_workspace(
        folders: dict[Path, Workspace], changes: set[tuple[Change, str]]
    ) -> dict[Workspace, frozenset[str]]:
        found: dict[Workspace, set[str]] = {}
        for _, raw in changes:
            path = Path(raw)
            ws = folders.get(path.parent)
            if ws is None or (path.name == "pending.json" and written_here(path)):
                continue
            mark_seen(path)  # before the callback reads it: a change made after this is reported again
            found.setdefault(ws, set()).add(path.name)
        return {ws: frozenset(names) for ws, names in found.items()}
