"""What a console page is about: the console's workspace, a chat target, the running tool.

The console edits the agents of its own workspace (`settings.WORKSPACE_DIR`); watches and inboxes span
every chat target's workspace.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import Http404

from a2aconsole.core.files import Workspace
from a2aconsole.web.bootstrap import ensure_console_target
from a2aconsole.web.chats import aresolve, unknown
from a2aconsole.web.history import dom_id
from a2aconsole.web.models import ChatTarget
from a2aconsole.web.process.runtime import get_runtime

# The tool's hints name its actions as an agent host calls them; a page names the buttons that do the same.
BUTTON_WORDS = {
    "action=unwatch stops watching": "Stop watching ends the watch",
    "with action=status": "with Re-check",
}


def in_console_words(answer: dict[str, Any]) -> dict[str, Any]:
    """A tool's answer as a page shows it: its note and error name the console's buttons, not `action=...`."""
    for field in ("note", "error"):
        text = answer.get(field)
        if isinstance(text, str):
            for hint, button in BUTTON_WORDS.items():
                text = text.replace(hint, button)
            answer[field] = text
    return answer


def console_workspace() -> Workspace:
    return Workspace(settings.WORKSPACE_DIR)


def console_target() -> ChatTarget:
    """The default chat of the console (created on first use, like `manage.py serve` does at start)."""

    return ensure_console_target()


def target_or_404(target_id: str) -> ChatTarget:
    try:
        return ChatTarget.objects.get(id=target_id)
    except ChatTarget.DoesNotExist:
        raise Http404("no such chat") from None


def all_workspaces() -> list[Workspace]:
    """Every workspace the console knows: its own and each chat target's, once each."""
    seen: dict[Workspace, None] = {console_workspace(): None}
    for path in ChatTarget.objects.order_by().values_list("workspace", flat=True).distinct():
        if path:
            seen.setdefault(Workspace(path), None)
    return list(seen)


def tool() -> Any:
    """The process's tool object (the same the CLI and the API use)."""

    return get_runtime().tool


async def run_tool(action: str, args: dict[str, Any], target_id: str) -> dict[str, Any]:
    """One tool action for a chat target, resolved here once, its answer in the console's words; the tool never
    raises, but an unknown target or a missing runtime is reported the same way."""
    try:
        target = await aresolve(target_id)
        if target is None:
            return {"error": unknown(target_id)}
        result = await tool().run(action, args, target, by="owner")
    except Exception as e:  # the runtime could not be built: say so in the result, like the tool does
        return {"error": f"the console could not run {action}: {e}"}
    if result.get("taskId"):
        result["dom_id"] = dom_id(result.get("agent", args.get("agent", "")), result["taskId"])
    return in_console_words(result)
