"""The console tab's WebSocket: one per tab, joined to the groups of its page, sending HTML fragments.

htmx's `ws` extension swaps every fragment into the element with the same id (`hx-swap-oob`). Fragments
are re-rendered from the files and the stored history, never from the event alone, so a missed event
or a reconnect still shows the current state.
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.template.loader import render_to_string
from django.utils.html import format_html

from a2aconsole.core.events import ALL_GROUP, target_group, task_group
from a2aconsole.web.metrics import WEBSOCKET_CLIENTS

log = logging.getLogger(__name__)

PAGES = ("dashboard", "watches", "chat", "inbox", "task", "agents", "tasks")


class ConsoleConsumer(AsyncWebsocketConsumer):
    """`/ws/console/<page>/?...`: refuses sockets without the owner's session."""

    page: str
    params: dict[str, str]
    groups_joined: list[str]
    live: dict[str, dict[str, Any]] | None = None
    counted = False  # in a2aconsole_websocket_clients

    async def connect(self) -> None:
        user = self.scope.get("user")
        self.groups_joined = []
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        self.page = self.scope["url_route"]["kwargs"]["page"]
        raw = parse_qs(self.scope.get("query_string", b"").decode())
        self.params = {k: v[-1] for k, v in raw.items()}
        groups = self._groups()
        if groups is None:
            await self.close(code=4404)
            return
        await self.accept()
        self.counted = True
        WEBSOCKET_CLIENTS.labels(self.page).inc()
        for g in groups:
            await self.channel_layer.group_add(g, self.channel_name)
            self.groups_joined.append(g)
        await self.send_state()
        if self.page in ("chat", "inbox"):
            self._flush_kept(self.params["target"])

    @staticmethod
    def _flush_kept(target: str) -> None:
        """A tab opened this chat: it is reachable now, so results kept for it go out (a second later)."""
        try:
            from a2aconsole.web.runtime import get_runtime

            get_runtime().request_flush(target)
        except Exception as e:  # kept results stay for the next chance
            log.warning("flushing kept results of %s failed: %s", target, type(e).__name__)

    async def disconnect(self, code: int) -> None:
        if self.counted:
            self.counted = False
            WEBSOCKET_CLIENTS.labels(self.page).dec()
        for g in self.groups_joined:
            await self.channel_layer.group_discard(g, self.channel_name)

    def _groups(self) -> list[str] | None:
        p = self.params
        if self.page in ("dashboard", "watches", "agents", "tasks"):
            return [ALL_GROUP]
        if self.page in ("chat", "inbox") and p.get("target"):
            return [target_group(p["target"])]
        if self.page == "task" and p.get("agent") and p.get("task"):
            return [task_group(p["agent"], p["task"])]
        return None

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """htmx `ws-send` forms: the watch table's search box sends `{"q": ...}`."""
        try:
            data = json.loads(text_data or "{}")
        except ValueError:
            return
        if self.page == "watches" and isinstance(data, dict) and isinstance(data.get("q", ""), str):
            self.params["q"] = data.get("q", "")
            await self.send_state()

    async def a2a_event(self, message: dict[str, Any]) -> None:
        """Something changed (the event is stored already): send the page's fragments again."""
        await self.send_state()

    async def send_state(self) -> None:
        try:
            if self.page == "watches":
                from a2aconsole.web.views.watches import live_watches

                self.live = await live_watches()
            html = await database_sync_to_async(self.render)()
        except Exception:
            log.exception("rendering %s fragments failed", self.page)
            return
        if html:
            await self.send(text_data=html)

    def render(self) -> str:
        """The page's live fragments, each an element with the id it replaces."""
        from a2aconsole.web import history
        from a2aconsole.web.views import dashboard, inbox, scope, watches

        p = self.params
        if self.page == "watches":
            return render_to_string(
                "web/watches.html#watch-table", {**watches.table(p.get("q", ""), self.live), "oob": True}
            )
        if self.page == "agents":  # agents.json changed (by hand, another tab, the CLI): the list as it is now
            from a2aconsole.web.views.agent_cards import list_state

            return render_to_string("web/agents/list.html#agent-list", {**list_state(), "oob": True})
        if self.page == "dashboard":
            ctx = {**dashboard.state(), "target": scope.console_target(), "oob": True}
            return "".join(
                render_to_string(f"web/dashboard.html#{name}", ctx)
                for name in ("attention", "watch-summary", "latest-results")
            )
        if self.page == "chat":  # the conversation's render hook (views/conversation.py)
            from a2aconsole.web.views import conversation

            ctx = conversation.log_context(p["target"], p.get("context", ""), conversation.before_of(p))
            return conversation.live_fragment(p, ctx) + self._task_states(ctx["events"])
        if self.page == "inbox":
            from a2aconsole.web.models import ChatTarget

            t = ChatTarget.objects.filter(id=p["target"]).first()
            return (
                render_to_string("web/inbox.html#inbox-list", {**inbox.items(t), "target": t, "oob": True}) if t else ""
            )
        if self.page == "tasks":  # the Tasks page's render hook (views/tasklist.py)
            from a2aconsole.web.views import tasklist

            return tasklist.live_fragment(p)
        if self.page == "task":
            events = history.timeline(p["agent"], p["task"])
            states = [ev.state for ev in events if ev.state]
            ctx = {
                "events": events,
                "open_ids": history.open_question_ids(events),
                "target": {"id": p.get("target", "")},
                "agent": p["agent"],
                "task_id": p["task"],
                "context_id": next((ev.context_id for ev in reversed(events) if ev.context_id), ""),
                "state": states[-1] if states else "unknown",
                "finished": bool(states) and states[-1] in history.TERMINAL,
                "full_dates": True,
                "answer_target": "this",
                "oob": True,
            }
            return "".join(
                render_to_string(f"web/task.html#{name}", ctx) for name in ("timeline", "task-state", "task-actions")
            )
        return ""

    def _task_states(self, events: list[Any]) -> str:
        """The state badge of each recent task (the answer panel shows one: `#state-<task>`)."""
        from a2aconsole.web.history import dom_id

        latest: dict[str, str] = {}
        for ev in events:
            if ev.state and ev.task_id:
                latest[dom_id(ev.agent, ev.task_id)] = ev.state
        return "".join(
            format_html(
                '<span id="state-{}" class="badge state-{}" data-task-state="{}" hx-swap-oob="true">{}</span>',
                d,
                s,
                s,
                s,
            )
            for d, s in list(latest.items())[-10:]
        )
