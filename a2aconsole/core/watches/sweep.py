"""The first checks of many restored watches on one agent, answered by ListTasks pages instead of a GetTask each.

A restart brings back thousands of watches at once, and each one's first check (its task may have moved while no
console ran) was a GetTask of its own: 10,000 round trips to one agent, most of a restore's time. An agent that lists
its tasks (A2A 1.0 ListTasks) says a hundred tasks' status in one answer: a `Sweep` pages through the agent's working
tasks (status only: no history, no artifacts) for the watches of that agent waiting on their first check.

The answer stays what a GetTask would have said:
- a page answers a watch only when it was asked after the watch began to wait: the watch's push config exists by
  then, so a change after the page is pushed (or found by the next check), and one before it is on the page;
- only a running state is taken from a page (`submitted`, `working`): a watch whose task settled, asks a question, or
  is not on a page asked after it waited (the agent's list may skip a task that moved mid-listing) is answered None,
  and asks GetTask, which reads the result with its artifacts as before;
- an agent that does not list its tasks (A2A 0.3, fasta2a, one answering method-not-found), or whose list fails, is
  answered None for every watch: they ask GetTask as before.

A pass over the pages starts once every watch expected has begun to wait, or GATHER seconds after the first that
waits (on the injected clock): a pass answers all the watches waiting before it, so its pages are shared by many.
A pass reads at most `2 * expected / PAGE + 1` pages: an agent that holds far more working tasks than the console
watches is not walked through.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Awaitable, Callable

from a2aconsole.core.clock import Clock
from a2aconsole.core.remote import CallLimits, Connection, RemoteError, TaskSnapshot

log = logging.getLogger(__name__)

SWEEP_FROM = 50  # restored watches of one agent from which their first checks are listed, not asked one by one
PAGE = 100  # tasks asked of one ListTasks page (the spec's most)
GATHER = 1.0  # seconds a pass waits for more watches after the first that waits, unless all expected wait
RUNNING = ("submitted", "working")  # the states a page may answer with (a settled task's result needs GetTask)

__all__ = ["GATHER", "PAGE", "SWEEP_FROM", "Sweep"]


class Sweep:
    """One agent's ListTasks passes for the first checks of `expected` restored watches (`listed`)."""

    def __init__(
        self,
        agent: str,
        connect: Callable[[], Awaitable[Connection]],
        limits: CallLimits,
        clock: Clock,
        expected: int,
    ) -> None:
        """`agent`: whom the call limits count the pages against (its origin); `connect`: its connection now."""
        self.agent = agent
        self.connect = connect
        self.limits = limits
        self.clock = clock
        self.expected = expected  # watches still to answer (found, or None)
        self.most_pages = 2 * math.ceil(expected / PAGE) + 1
        self.pages = 0  # asked in all (the bench and the tests read it)
        self.refused = ""  # why the agent's list is not used ("" while it is)
        self._asked = 0  # watches that began to wait so far: a page answers those counted before it was asked
        self._waiting: dict[str, list[tuple[int, asyncio.Future[TaskSnapshot | None]]]] = {}
        self._arrived = asyncio.Event()
        self._runner: asyncio.Task[None] | None = None

    def expect(self, count: int) -> None:
        """`count` more restored watches will ask (a rescan brought them while this sweep was in use)."""
        self.expected += count
        self.most_pages = 2 * math.ceil(self.expected / PAGE) + 1

    async def listed(self, task_id: str) -> TaskSnapshot | None:
        """The task's running status from a page asked after this call began, or None: ask GetTask."""
        if self.refused:
            self._answered()
            return None
        fut: asyncio.Future[TaskSnapshot | None] = asyncio.get_running_loop().create_future()
        self._asked += 1
        entry = (self._asked, fut)
        self._waiting.setdefault(task_id, []).append(entry)
        self._arrived.set()
        if self._runner is None or self._runner.done():
            self._runner = asyncio.ensure_future(self._run())
        try:
            return await fut
        finally:
            waiters = self._waiting.get(task_id)
            if waiters is not None and entry in waiters:  # cancelled while waiting (the watch stopped)
                waiters.remove(entry)
                if not waiters:
                    del self._waiting[task_id]
            self._answered()

    def _answered(self) -> None:
        self.expected = max(0, self.expected - 1)
        self._arrived.set()

    async def stop(self) -> None:
        """Stop a pass in progress; its waiters ask GetTask."""
        if self._runner is not None:
            self._runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._runner
        self._resolve(math.inf, None)

    async def _run(self) -> None:
        try:
            while self._waiting and not self.refused:
                await self._gather()
                await self._pass()
        except asyncio.CancelledError:
            raise
        except Exception:  # a bug must not leave watches waiting: they ask GetTask
            log.exception("task list of %s failed", self.agent)
            self.refused = "failed"
        finally:
            if self.refused:
                self._resolve(math.inf, None)

    async def _gather(self) -> None:
        """Until every watch expected waits, or GATHER seconds pass."""
        if self._waiting_count() >= self.expected:
            return
        timer = asyncio.ensure_future(self.clock.sleep(GATHER))
        try:
            while not timer.done() and self._waiting_count() < self.expected:
                self._arrived.clear()
                arrived = asyncio.ensure_future(self._arrived.wait())
                await asyncio.wait({timer, arrived}, return_when=asyncio.FIRST_COMPLETED)
                arrived.cancel()
        finally:
            timer.cancel()

    def _waiting_count(self) -> int:
        return sum(len(w) for w in self._waiting.values())

    async def _pass(self) -> None:
        """One walk through the agent's working tasks: answers every watch that waited before it began."""
        began = self._asked
        token = ""
        for _ in range(self.most_pages):
            if not self._waiting:
                return
            asked = self._asked  # the watches this page may answer: those waiting before it is asked
            try:
                async with self.limits.call(self.agent, first=True):
                    conn = await self.connect()
                    page = await conn.list_tasks(state="working", page_size=PAGE, page_token=token)
            except RemoteError as e:
                self.refused = e.kind
                if e.kind != "not_listing":
                    log.info("task list of %s failed (%s): its watches ask GetTask", self.agent, e.kind)
                return
            self.pages += 1
            for task in page.tasks:
                if task.state in RUNNING:
                    self._answer(task, asked)
            token = page.next_page_token
            if not token:
                break
        self._resolve(began, None)  # not on a page asked since they waited: GetTask

    def _answer(self, task: TaskSnapshot, asked: int) -> None:
        self._settle([task.id], asked, task)

    def _resolve(self, upto: float, value: TaskSnapshot | None) -> None:
        """Answer `value` to every watch that began to wait no later than the `upto`th."""
        self._settle(list(self._waiting), upto, value)

    def _settle(self, task_ids: list[str], upto: float, value: TaskSnapshot | None) -> None:
        """Answer `value` to the watches of these tasks that began to wait no later than the `upto`th; the later
        ones keep waiting (a page asked before they waited cannot answer them)."""
        for task_id in task_ids:
            keep = []
            for n, f in self._waiting.get(task_id, []):
                if n <= upto:
                    if not f.done():
                        f.set_result(value)
                else:
                    keep.append((n, f))
            if keep:
                self._waiting[task_id] = keep
            else:
                self._waiting.pop(task_id, None)
