"""`manage.py a2a agents|send|status|cancel ...`: the `a2a` tool from a shell, printing its result as JSON.

Any tool result, an error result too, exits 0: the JSON says what happened. Only a usage error (an unknown
action or option) exits non-zero. A task still running when the wait ends is written to `pending.json`
for the watch worker of a serving process to pick up; this command arms nothing itself.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from django.db import DatabaseError

from a2aconsole.core.chat import CONSOLE_TARGET, ChatTarget
from a2aconsole.core.client import Remote, new_http_client
from a2aconsole.core.tool import A2ATool
from a2aconsole.core.tool_schema import ACTIONS
from a2aconsole.core.watch_control import PendingFileWatches
from a2aconsole.web.chats import resolve, unknown, value_of
from a2aconsole.web.runtime import console_state_paths


def target_of(target_id: str) -> ChatTarget | None:
    """The chat target, resolved once before the loop starts (workspace, inbound hops); None when unknown."""
    try:
        return resolve(target_id)
    except DatabaseError:  # no database yet (not migrated): only the console target is known
        return value_of(None, target_id)


async def run_tool(action: str, args: dict[str, Any], target: ChatTarget) -> dict:
    client = settings.A2A_CLIENT
    http = new_http_client(client.response_limit)
    try:
        remote = Remote(http, call_timeout=client.call_timeout, card_timeout=client.card_timeout_seconds)
        tool = A2ATool(remote, client, PendingFileWatches(), private_paths=console_state_paths())
        return await tool.run(action, args, target)
    finally:
        await http.aclose()


class Command(BaseCommand):
    help = "Run one a2a tool action (agents, send, status, cancel) and print its result as JSON."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=ACTIONS, help="what to do")
        parser.add_argument("--agent", help="the agent's name in agents.json (send, status, cancel)")
        parser.add_argument("--message", "-m", help="the text to send (send)")
        parser.add_argument("--context-id", help="continue this conversation (send)")
        parser.add_argument("--task-id", help="the task to answer (send), check (status) or cancel (cancel)")
        parser.add_argument(
            "--file", action="append", default=[], dest="files", help="a workspace path to attach (repeatable)"
        )
        parser.add_argument("--target", default=CONSOLE_TARGET, help="the chat target (default: console)")

    def handle(self, *args: Any, **options: Any) -> None:
        action: str = options["action"]
        tool_args: dict[str, Any] = {
            "agent": options["agent"],
            "message": options["message"],
            "contextId": options["context_id"],
            "taskId": options["task_id"],
            "files": options["files"],
        }
        tool_args = {k: v for k, v in tool_args.items() if v not in (None, [])}
        target = target_of(options["target"])
        if target is None:
            result: dict[str, Any] = {"error": unknown(options["target"])}
        else:
            result = asyncio.run(run_tool(action, tool_args, target))
        self.stdout.write(json.dumps(result, indent=2, ensure_ascii=False))
