"""The console tab's WebSocket: one per tab, joined to the groups of its page, sending HTML fragments.

Thin by design: the page kind (`a2aconsole.web.live`) says what to render; this consumer only checks the owner,
joins the groups, and keeps the tab current:

- an event message only marks what changed; renders are coalesced, at most one per `LIVE_FLUSH_SECONDS`, so a
  burst of pushes costs a few renders a second and the tab's channel queue drains as fast as it fills;
- channel-layer messages are at-most-once: a gap in a group's sequence numbers, or an event in the database that
  no message announced, makes the tab render in full again, and every `LIVE_CHECK_SECONDS` it joins its groups
  again (a layer drops the membership of a channel whose queue overflowed);
- fragments go out in frames below daphne's 1 MiB limit, and a failed render or send is logged, never raised.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any
from urllib.parse import parse_qs

from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings

from a2aconsole.web import db_threads, history, live, sends, unread
from a2aconsole.web.chats import aresolve
from a2aconsole.web.live.frames import pack
from a2aconsole.web.metrics import WEBSOCKET_CLIENTS
from a2aconsole.web.models import TaskEvent
from a2aconsole.web.process.runtime import get_runtime

log = logging.getLogger(__name__)


LIVE_MARK = "<!-- live -->"
# ends a frame of changes that move no count in the menu (status messages, a watch's news): the tab asks for none
# (console.js); a busy task's status messages made every open tab ask once a second
PROGRESS_MARK = "<!-- progress -->"
COUNTED = frozenset({*unread.SAID, *history.SETTLING})  # kinds of event that can move the menu's counts
MAX_TOLD = 16_384  # bytes of a message from a tab (a search, an answer panel's task): more is not the console's
MISSED_CATCH_UP = 500  # events a tab that fell behind catches up on one by one; more: a full render


class ConsoleConsumer(AsyncWebsocketConsumer):
    """`/ws/console/<page>/?...`: refuses sockets without the owner's session."""

    page_name: str
    page: live.LivePage
    tab: live.Tab
    groups_joined: list[str]
    counted = False  # in a2aconsole_websocket_clients

    async def connect(self) -> None:
        user = self.scope.get("user")
        self.groups_joined = []
        self.tasks: list[asyncio.Task[None]] = []
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        self.page_name = self.scope["url_route"]["kwargs"]["page"]
        raw = parse_qs(self.scope.get("query_string", b"").decode())
        params = {k: v[-1] for k, v in raw.items()}
        found = live.page(self.page_name)
        groups = found.groups(params) if found is not None else None
        if found is None or groups is None:
            await self.close(code=4404)
            return
        self.page, self.tab = found, live.Tab(params)
        self.pending = live.Changes()
        self.seqs: dict[tuple[str, str], int] = {}  # (origin, group) -> last sequence number
        self.newest = 0  # the newest event id this tab is known to show
        self.behind: int | None = None  # events after this id may have been missed: the next render reads them
        self.heard = 0  # messages heard, for the check of progress (`LivePage.progress_mark`)
        self.marked: tuple[Any, int] | None = None  # the progress mark the tab shows, and the messages heard then
        self.flusher: asyncio.Task[None] | None = None
        self.last_flush = 0.0
        await self.accept()
        self.counted = True
        WEBSOCKET_CLIENTS.labels(self.page_name).inc()
        for g in groups:
            await self.channel_layer.group_add(g, self.channel_name)
            self.groups_joined.append(g)
        await self.send_current()
        self.tasks.append(asyncio.create_task(self._check_loop()))
        if self.page_name in ("chat", "inbox"):
            await self._flush_kept(params["target"])

    @staticmethod
    async def _flush_kept(target_id: str) -> None:
        """A tab opened this chat: it is reachable now, so results kept for it go out (a second later)."""
        try:
            target = await aresolve(target_id)
            if target is not None:
                get_runtime().request_flush(target)
        except Exception as e:  # kept results stay for the next chance
            log.warning("flushing kept results of %s failed: %s", target_id, type(e).__name__)

    async def disconnect(self, code: int) -> None:
        for t in [*getattr(self, "tasks", []), getattr(self, "flusher", None)]:
            if t is not None:
                t.cancel()
                with contextlib.suppress(BaseException):
                    await t
        if self.counted:
            self.counted = False
            WEBSOCKET_CLIENTS.labels(self.page_name).dec()
        for g in self.groups_joined:
            await self.channel_layer.group_discard(g, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """htmx `ws-send` elements (the watch table's search box, an answer panel saying it is there): the page
        says what to render for it, at once."""
        if text_data is None or len(text_data) > MAX_TOLD:
            return
        try:
            data = json.loads(text_data)
        except ValueError:
            return
        changes = self.page.told(self.tab, data) if isinstance(data, dict) else None
        if changes:
            self.pending.merge(changes)
            self._schedule(now=True)

    async def a2a_event(self, message: dict[str, Any]) -> None:
        """Something changed (the events are stored already): note it; the flusher renders soon, once per batch. A
        message carries one `event` or, from a batch stored together, its `events` in order."""
        events = message.get("events") if isinstance(message.get("events"), list) else [message.get("event") or {}]
        ids = [e["eventId"] for e in events if isinstance(e, dict) and isinstance(e.get("eventId"), int)]
        event_id = max(ids) if ids else None
        origin, group, seq = message.get("origin"), message.get("group"), message.get("seq")
        if isinstance(seq, int) and origin and group:
            last = self.seqs.get((origin, group))
            if last is not None and seq != last + 1:  # a message was lost (or the sender restarted)
                if event_id is not None and self.newest:  # the lost ones are stored, after what the tab heard
                    log.info("tab of %s missed %s messages of %s: catching up", self.page_name, seq - last - 1, group)
                    self._fell_behind()
                else:
                    log.info("tab of %s missed %s messages of %s: full render", self.page_name, seq - last - 1, group)
                    self.pending.full = True
            self.seqs[(origin, group)] = seq
        self.heard += 1
        if event_id is not None:
            self.newest = max(self.newest, event_id)
        for event in events:
            if isinstance(event, dict):
                self.pending.add(event)
        self._schedule()

    def _fell_behind(self) -> None:
        """Events after `newest` may never have reached this tab: the next render reads them from the database."""
        self.behind = self.newest if self.behind is None else min(self.behind, self.newest)

    def _schedule(self, now: bool = False) -> None:
        if now:
            self.last_flush = 0.0
        if self.flusher is None:
            self.flusher = asyncio.create_task(self._flush())

    async def _flush(self) -> None:
        """Render what is pending, at most once per LIVE_FLUSH_SECONDS, until nothing is."""
        loop = asyncio.get_running_loop()
        try:
            while self.pending or self.behind is not None:
                wait = self.last_flush + settings.LIVE_FLUSH_SECONDS - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                changes, self.pending = self.pending, live.Changes()
                self.last_flush = loop.time()
                if self.behind is not None:
                    behind, self.behind = self.behind, None
                    missed = None if changes.full else await self._missed(behind, self.newest)
                    changes.full = missed is None
                    for ev in missed or []:
                        changes.add(ev)
                if changes:
                    await self.send_changes(changes)
        finally:
            self.flusher = None

    async def _check_loop(self) -> None:
        """Join the groups again; catch up on events stored that the tab has not heard of (reading them back is
        cheap: one that is merely on its way is rendered twice), and render in full when the page's progress moved
        while the tab heard nothing (a status message is no event)."""
        while True:
            await asyncio.sleep(settings.LIVE_CHECK_SECONDS)
            heard = self.heard
            try:
                for g in self.groups_joined:
                    await self.channel_layer.group_add(g, self.channel_name)
                current = await db_threads.render(self.page.version, self.tab.params)
                mark = await db_threads.render(self.page.progress_mark, self.tab.params)
            except Exception as e:
                log.warning("live check of a %s tab failed: %s", self.page_name, type(e).__name__)
                continue
            moved = self.marked is not None and mark != self.marked[0] and heard == self.marked[1]
            if current > self.newest:  # stored, not heard of (yet, or ever: the last messages of a burst lost)
                log.info("tab of %s never heard of events up to %s: catching up", self.page_name, current)
                self._fell_behind()
                self.newest = current
                self._schedule()
            if moved:
                log.info("tab of %s missed progress: full render", self.page_name)
                self.pending.full = True
                self._schedule()
            self.marked = mark, heard

    async def _missed(self, after: int, upto: int) -> list[dict[str, Any]] | None:
        """The events stored after `after` up to `upto` (what this tab may never have heard of), as messages carry
        them; None when they are too many (or cannot be read): then only a full render will do. A tab behind (its
        queue overflowed, or a process too busy to announce events within LIVE_CHECK_SECONDS) so catches up at the
        cost of the rows those events touch, not the whole page again, which made a busy process busier."""

        def read() -> list[dict[str, Any]] | None:
            rows = list(
                TaskEvent.objects.filter(id__gt=after, id__lte=upto).values("kind", "agent", "task_id")[
                    : MISSED_CATCH_UP + 1
                ]
            )
            return None if len(rows) > MISSED_CATCH_UP else rows

        try:
            return await db_threads.render(read)
        except Exception as e:
            log.warning("reading the events a %s tab missed failed: %s", self.page_name, type(e).__name__)
            return None

    async def send_current(self) -> None:
        """At connect: nothing when the page is as the tab rendered it (`v`), else everything."""
        heard = self.heard
        try:
            self.tab.changes = None
            await self.page.prepare(self.tab)
            current, mark, frames = await db_threads.render(self._connect_frames)
        except Exception:
            log.exception("rendering %s fragments failed", self.page_name)
            return
        self.newest = max(self.newest, current)
        self.marked = (mark, heard)
        await self._send_frames(frames or [LIVE_MARK])  # tells the tab it is live (an empty frame is not sent)

    def _connect_frames(self) -> tuple[int, Any, list[str]]:
        current, mark = self.page.version(self.tab.params), self.page.progress_mark(self.tab.params)
        if self.tab.params.get("v") == str(current) and self.tab.params.get("p", "") == live.mark_text(mark):
            self.page.start(self.tab)
            return current, mark, []
        return current, mark, list(pack(self.page.full(self.tab)))

    async def send_changes(self, changes: live.Changes) -> None:
        try:
            self.tab.changes = changes
            await self.page.prepare(self.tab)
            current, frames = await db_threads.render(self._change_frames, changes)
        except Exception:
            log.exception("rendering %s fragments failed", self.page_name)
            return
        if changes.full:
            self.newest = max(self.newest, current)
        if frames and not changes.full and not changes.kinds & COUNTED and not changes.outgoing:
            frames[-1] += PROGRESS_MARK
        await self._send_frames(frames)

    def _change_frames(self, changes: live.Changes) -> tuple[int, list[str]]:
        current = self.page.version(self.tab.params) if changes.full else 0
        fragments = self.page.full(self.tab) if changes.full else self.page.changed(self.tab, changes)
        if changes.outgoing and self.page.outgoing_lines:  # an answer panel's, the question box's
            fragments = [*fragments, *sends.fragments(changes.outgoing)]
        return current, list(pack(fragments))

    async def _send_frames(self, frames: list[str]) -> None:
        try:
            for frame in frames:
                await self.send(text_data=frame)
        except Exception as e:  # the tab went away meanwhile
            log.info("sending to a %s tab failed: %s", self.page_name, type(e).__name__)
