"""The tool's arguments, checked: which agent (from `agents.json`), and what a send carries.

Every failure is a ToolError saying what to pass instead; nothing is sent until the arguments hold.
"""

from __future__ import annotations

from typing import Any

from a2aconsole.core.data_parts import send_data
from a2aconsole.core.errors import ToolError
from a2aconsole.core.files import AgentEntry, AgentsFile, Workspace
from a2aconsole.core.tool.schema import SEND_NEEDS


def agent_entry(workspace: Workspace, args: dict[str, Any], agents: AgentsFile | None = None) -> AgentEntry:
    """The entry of `args["agent"]` in the workspace's agents.json: `agents` (the file as it is now, e.g. the
    connection pool's stat-checked view), else read now."""
    name = args.get("agent")
    if not isinstance(name, str) or not name:
        raise ToolError("agent is required: pass the agent's name from action=agents")
    af = agents if agents is not None else workspace.read_agents()
    if af.parse_error:
        raise ToolError(f"{af.parse_error}; no agents can be used until the file is fixed")
    entry = af.get(name)
    if entry is None:
        bad = [p for p in af.problems if f'("{name}")' in p]
        if bad:
            raise ToolError(f'agent "{name}" has an invalid entry: {"; ".join(bad)}')
        known = ", ".join(e.name for e in af.entries) or "none"
        where = workspace.relative(af.path)
        raise ToolError(f'unknown agent "{name}" (known: {known}); use action=agents, or add it to {where}')
    return entry


def opt_str(args: dict[str, Any], key: str) -> str:
    v = args.get(key)
    if v is None or v == "":
        return ""
    if not isinstance(v, str):
        raise ToolError(f"{key} must be a string")
    return v


def send_args(args: dict[str, Any]) -> tuple[str, list[str], dict[str, Any] | None, str, str]:
    """A send's text, files, data (a JSON object, e.g. a filled form), contextId and taskId."""
    text = args.get("message")
    if text is not None and not isinstance(text, str):
        raise ToolError("message must be a string")
    files = args.get("files") or []
    if not isinstance(files, list) or not all(isinstance(f, str) and f for f in files):
        raise ToolError("files must be a list of workspace paths")
    data = send_data(args.get("data"))
    if not text and not files and data is None:
        raise ToolError(SEND_NEEDS)
    return text or "", files, data, opt_str(args, "contextId"), opt_str(args, "taskId")


def task_id_of(args: dict[str, Any], action: str) -> str:
    task_id = opt_str(args, "taskId")
    if not task_id:
        raise ToolError(f"taskId is required for {action}")
    return task_id
