"""The `a2a` tool's actions and its JSON schema: what the model is offered, what the API and the CLI check."""

from __future__ import annotations

from typing import Any

ACTIONS = ("agents", "send", "status", "cancel")

TOOL_SCHEMA: dict[str, Any] = {
    "name": "a2a",
    "description": (
        "Use remote agents over the A2A protocol. action=agents lists them with their skills; action=send hands "
        "one a message (and workspace files) and returns its answer, its question (answer with send and the "
        "taskId), or, for long work, a note that the result will arrive in this conversation by itself; "
        "action=status checks a task; action=cancel cancels one."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS), "description": "what to do"},
            "agent": {"type": "string", "description": "the agent's name from action=agents (send, status, cancel)"},
            "message": {"type": "string", "description": "the text to send (send)"},
            "contextId": {"type": "string", "description": "continue this conversation with the agent (send)"},
            "taskId": {
                "type": "string",
                "description": "the task to answer (send after a question), check (status) or cancel (cancel)",
            },
            "files": {
                "type": "array",
                "items": {"type": "string"},
                "description": "workspace-relative paths of files to attach (send)",
            },
        },
        "required": ["action"],
        "additionalProperties": False,
    },
}
