"""The console's test setup: the owner's login, its WebSocket, agents.json entries and recorded task events."""

from __future__ import annotations

from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.test import Client
from django.utils import timezone

from a2aconsole.asgi import application
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.models import TaskEvent
from tests.support.agents import TestAgent

# long enough for an agent to answer within the request, short enough that failing tests end quickly
CONSOLE_SETTINGS = ClientSettings(wait_seconds=3, card_timeout_seconds=3, call_timeout=10)


def create_owner() -> AbstractBaseUser:
    """The one console user every page requires."""
    return get_user_model().objects.create_user("owner", password="a long password 1")


def owner_client() -> Client:
    """A test client logged in as the owner."""
    c = Client()
    c.force_login(create_owner())
    return c


def owner_session() -> str:
    """The owner logged in: its session cookie, for async clients and WebSockets alike."""
    return owner_client().cookies["sessionid"].value


async def connect_socket(path: str, cookie: str | None) -> tuple[WebsocketCommunicator, bool]:
    """A console tab's WebSocket through the routed ASGI app, from the console's own page, logged in with `cookie`."""
    headers = [(b"host", b"127.0.0.1"), (b"origin", b"http://127.0.0.1")]
    if cookie:
        headers.append((b"cookie", f"sessionid={cookie}".encode()))
    comm = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await comm.connect(timeout=5)
    return comm, connected


def add_agent(ws: Workspace, agent: TestAgent, name: str = "bot", **extra: str) -> None:
    """agents.json with one entry for the test agent."""
    ws.save_agents([{"name": name, "url": agent.url, **extra}], None)


def record_event(ws: Workspace | None, task_id: str, kind: str, state: str, text: str) -> TaskEvent:
    """A task event of bot's for the console chat, as the history records it (without a workspace when `ws` is None)."""
    from django.db import transaction

    from a2aconsole.web import task_index

    where = {"workspace": str(ws.root)} if ws is not None else {}
    with transaction.atomic():  # as the event sink stores it: with its task's row of the index
        row = TaskEvent.objects.create(
            **where,
            agent="bot",
            task_id=task_id,
            target="console",
            kind=kind,
            state=state,
            text=text,
            created_at=timezone.now(),
        )
        rows = task_index.TaskRows([(row.agent, row.task_id)])
        rows.note(row)
        rows.save()
    return row
