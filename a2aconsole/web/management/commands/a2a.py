"""`manage.py a2a agents|send|status|cancel|unwatch ...`: the `a2a` tool from a shell, printing its result as JSON.

Any tool result, an error result too, exits 0: the JSON says what happened. Only a usage error (an unknown
action or option) exits non-zero. A task still running when the wait ends is written to `pending.json`
for the watch worker of a serving process to pick up; this command arms nothing itself.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from a2aconsole.core.chat import CONSOLE_TARGET, ChatTarget
from a2aconsole.core.remote import Remote, new_http_client
from a2aconsole.core.tool import ACTIONS, ARGUMENTS, TARGET_HELP, TOOL_SCHEMA, A2ATool, Argument
from a2aconsole.core.watches import PendingFileWatches
from a2aconsole.web.chats import resolve, unknown, value_of
from a2aconsole.web.process.runtime import console_state_paths


def target_of(target_id: str) -> ChatTarget | None:
    """The chat target, resolved once before the loop starts (workspace, inbound hops); None when unknown."""
    try:
        return resolve(target_id)
    except DatabaseError:  # no database yet (not migrated): only the console target is known
        return value_of(None, target_id)


async def run_tool(action: str, args: dict[str, Any], target: ChatTarget) -> dict:
    client = settings.A2A_CLIENT
    http = new_http_client(client.response_limit, client.call_timeout)
    try:
        remote = Remote(http, call_timeout=client.call_timeout, card_timeout=client.card_timeout_seconds)
        tool = A2ATool(remote, client, PendingFileWatches(), private_paths=console_state_paths())
        return await tool.run(action, args, target, by="shell")
    finally:
        await http.aclose()


def capped(arg: Argument) -> Callable[[str], str]:
    """An option's parser: the value as given, refused (a usage error) when over the argument's limit."""

    def parse(value: str) -> str:
        if len(value) > arg.max_length:
            raise argparse.ArgumentTypeError(f"at most {arg.max_length} characters (this has {len(value)})")
        return value

    return parse


def json_object(arg: Argument) -> Callable[[str], dict[str, Any]]:
    """An option's parser for a JSON object (`--data '{"date": "2026-12-06"}'`), its length capped."""

    def parse(value: str) -> dict[str, Any]:
        text = capped(arg)(value)
        try:
            found = json.loads(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(f"not JSON: {e}") from None
        if not isinstance(found, dict):
            raise argparse.ArgumentTypeError('a JSON object, e.g. {"amount": 12}')
        return found

    return parse


class Command(BaseCommand):
    help = "Run one a2a tool action (agents, send, status, cancel, unwatch) and print its result as JSON."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "action", choices=ACTIONS, help=TOOL_SCHEMA["parameters"]["properties"]["action"]["description"]
        )
        for arg in ARGUMENTS:  # one option per argument of the tool, its limit checked as it is parsed
            if arg.is_list:
                parser.add_argument(
                    *arg.flags,
                    dest=arg.name,
                    action="append",
                    default=[],
                    type=capped(arg),
                    metavar="PATH",
                    help=f"{arg.description}; one path each, at most {arg.max_items} (repeatable)",
                )
            elif arg.is_object:
                parser.add_argument(
                    *arg.flags, dest=arg.name, type=json_object(arg), metavar="JSON", help=arg.description
                )
            else:
                parser.add_argument(
                    *arg.flags, dest=arg.name, type=capped(arg), metavar=arg.field.upper(), help=arg.description
                )
        parser.add_argument("--target", default=CONSOLE_TARGET, help=f"{TARGET_HELP} (default: {CONSOLE_TARGET})")

    def handle(self, *args: Any, **options: Any) -> None:
        action: str = options["action"]
        tool_args = {a.name: options[a.name] for a in ARGUMENTS if options[a.name] not in (None, [])}
        for arg in ARGUMENTS:
            if arg.is_list and len(tool_args.get(arg.name, ())) > arg.max_items:
                raise CommandError(f"{arg.flags[0]} may be given at most {arg.max_items} times")
        target = target_of(options["target"])
        if target is None:
            result: dict[str, Any] = {"error": unknown(options["target"])}
        else:
            result = asyncio.run(run_tool(action, tool_args, target))
        self.stdout.write(json.dumps(result, indent=2, ensure_ascii=False))
