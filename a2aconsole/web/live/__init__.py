"""Live pages: what each console page sends over its tab's WebSocket.

A page kind (`watches`, `task`, ...) is a `LivePage` registered under its name with `@register`. It says which
channel-layer groups a tab of it joins, the fragments that bring a tab fully up to date (`full`), the fragments
a batch of coalesced changes needs (`changed`, by default `full` again) and a cheap `version` (the newest event
id the page shows), with which a tab notices messages it missed. Each view module declares its own page
(`@live.register("tasks") class TasksLive(LivePage): ...`) and builds its socket's URL with `ws_url`; the app
imports those modules at start (`WebConfig.ready`). This package (with the tab's consumer, frames and shared
fragments) is the machinery only and imports no view. Every fragment is one element with an id and
`hx-swap-oob`; console.js drops those whose target is not on the page (a tab shows only some of the tasks it
hears about).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlencode

from a2aconsole.core.events import ALL_GROUP
from a2aconsole.web.models import TaskEvent
from a2aconsole.web.outgoing import KIND as OUTGOING


@dataclass
class Changes:
    """What happened since a tab's last render: tasks touched, kinds seen, and whether only a full render will do."""

    full: bool = False
    tasks: set[tuple[str, str]] = field(default_factory=set)
    kinds: set[str] = field(default_factory=set)
    count: int = 0
    outgoing: dict[int, str] = field(default_factory=dict)  # the owner's messages that changed -> their chat

    def add(self, event: dict[str, Any]) -> None:
        self.count += 1
        kind = str(event.get("kind") or "")
        self.kinds.add(kind)
        if event.get("task_id"):
            self.tasks.add((str(event.get("agent") or ""), str(event["task_id"])))
        data = event.get("data")
        row = event.get(OUTGOING) if kind == OUTGOING else data.get(OUTGOING) if isinstance(data, dict) else None
        if isinstance(row, int):  # a row changed (`sends.announce`), or a `sent` event took its place
            self.outgoing[row] = str(event.get("target") or "")

    def merge(self, other: Changes) -> None:
        """Take in what `other` noted too."""
        self.full |= other.full
        self.tasks |= other.tasks
        self.kinds |= other.kinds
        self.count += other.count
        self.outgoing.update(other.outgoing)

    def __bool__(self) -> bool:
        return self.full or self.count > 0


@dataclass
class Tab:
    """One open tab: its URL parameters, what `prepare` fetched for the next render, what its page remembers, and
    the changes the next render is for (None: a render in full)."""

    params: dict[str, str]
    prepared: dict[str, Any] = field(default_factory=dict)
    memo: dict[str, Any] = field(default_factory=dict)
    changes: Changes | None = None


class LivePage:
    """A page kind's live fragments. `full`, `changed`, `start` and `version` run in a database thread."""

    # the owner's messages on their way, as a line each where one shows (an answer panel, the question box); a
    # page that renders them itself (the chat log) says False
    outgoing_lines = True

    def groups(self, params: dict[str, str]) -> list[str] | None:
        """The groups a tab joins; None refuses the socket (missing parameters)."""
        return [ALL_GROUP]

    async def prepare(self, tab: Tab) -> None:
        """Async reads before a render (e.g. the watch registry's snapshot) go into `tab.prepared`."""

    def full(self, tab: Tab) -> list[str]:
        raise NotImplementedError

    def start(self, tab: Tab) -> None:
        """The tab holds the page as rendered at `version`: remember what `changed` needs, send nothing."""

    def changed(self, tab: Tab, changes: Changes) -> list[str]:
        return self.full(tab)

    def version(self, params: dict[str, str]) -> int:
        """The newest event id this page shows; 0 when none."""
        return TaskEvent.objects.order_by("-id").values_list("id", flat=True).first() or 0

    def told(self, tab: Tab, data: dict[str, Any]) -> Changes | None:
        """What to render for a message the tab sent (htmx `ws-send`: the form's fields, `hx-vals`); None: nothing.
        Runs on the event loop: only look at `data` and `tab`."""
        return None

    def progress_mark(self, params: dict[str, str]) -> Any:
        """When the latest progress line of the tasks this page shows was told (None: it shows none;
        `task_index.progress_at`). A status message is no event (`version` does not move): a tab that heard no
        message while this moved missed one."""
        return None


def only_progress(changes: Changes) -> bool:
    """Nothing changed but what agents said while working: pages that do not show it render nothing (an agent
    may send hundreds of status messages)."""
    return not changes.full and changes.kinds <= {"progress"}


class ProgressBlind(LivePage):
    """A page that shows nothing of what agents say while working: a batch of progress alone renders nothing."""

    def changed(self, tab: Tab, changes: Changes) -> list[str]:
        return [] if only_progress(changes) else self.full(tab)


PAGES: dict[str, LivePage] = {}
P = TypeVar("P", bound=type[LivePage])


def register(name: str) -> Callable[[P], P]:
    """Class decorator: `name` (the `<page>` of /ws/console/<page>/) is served by this LivePage."""

    def add(cls: P) -> P:
        PAGES[name] = cls()
        return cls

    return add


def page(name: str) -> LivePage | None:
    return PAGES.get(name)


def ws_url(name: str, **params: str) -> str:
    """The socket URL of a page kind, with the version the page is rendered at (`v`, and `p` its progress mark): a
    tab whose page is current at connect gets no resend of what it already shows."""
    live = page(name)
    assert live is not None, name
    v, p = live.version(params), mark_text(live.progress_mark(params))
    return f"/ws/console/{name}/?" + urlencode({**params, "v": str(v), **({"p": p} if p else {})})


def mark_text(mark: Any) -> str:
    """A page's progress mark as its socket URL carries it (`p`)."""
    return "" if mark is None else str(mark)
