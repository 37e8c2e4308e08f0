"""The JSON schemas of what the API answers: the tool's results (one per kind) and the error shape.

They describe `a2aconsole/core/tool.py` and `core/results.py` as a host sees them (docs/tool.md has the
prose). Members the core may add later are allowed (`additionalProperties` stays open), so a host that
validates answers keeps working; the members listed here are the ones a host can rely on.
"""

from __future__ import annotations

from typing import Any

_STR = {"type": "string"}
_STRS = {"type": "array", "items": _STR}
_SKIPPED = {
    "type": "object",
    "required": ["name", "bytes"],
    "properties": {"name": _STR, "bytes": {"type": "integer"}},
    "description": "a file part over MaxFileBytes, not saved",
}
_PART = {
    "description": "a non-text part of an artifact",
    "anyOf": [
        {
            "type": "object",
            "required": ["file"],
            "properties": {"file": _STR, "bytes": {"type": "integer"}, "mediaType": _STR},
            "description": "saved under inbox/a2a/<agent>/ (workspace-relative path)",
        },
        {
            "type": "object",
            "required": ["link"],
            "properties": {"link": _STR, "name": _STR, "mediaType": _STR},
            "description": "a URL part, listed, not downloaded",
        },
        {
            "type": "object",
            "required": ["skipped"],
            "properties": {"skipped": _STR, "bytes": {"type": "integer"}},
            "description": "a file part over MaxFileBytes",
        },
        {"type": "object", "required": ["data"], "properties": {"data": {}}, "description": "a data part"},
    ],
}
_FILES = {
    "files": {**_STRS, "description": "workspace-relative paths of the files the agent sent, saved"},
    "links": {**_STRS, "description": "URLs the agent sent (not downloaded)"},
    "skipped": {"type": "array", "items": _SKIPPED},
    "maxFileBytes": {"type": "integer", "description": "present when a file was skipped"},
}

SCHEMAS: dict[str, Any] = {
    "Error": {
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {**_STR, "description": "what failed and what to do"},
            "field": {"type": ["string", "null"], "description": "the body member at fault (null: the body itself)"},
        },
    },
    "AgentsResult": {
        "type": "object",
        "required": ["agents"],
        "description": "action=agents",
        "properties": {
            "agents": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["name", "url"],
                    "properties": {
                        "name": _STR,
                        "url": {**_STR, "description": "scheme, host, port and path only"},
                        "description": _STR,
                        "cardName": _STR,
                        "skills": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["id", "name"],
                                "properties": {"id": _STR, "name": _STR, "description": _STR, "examples": _STRS},
                            },
                        },
                        "streaming": {"type": "boolean"},
                        "push": {"type": "boolean"},
                        "protocolVersions": _STRS,
                        "extendedCard": {"type": "boolean"},
                        "needsKey": {
                            "type": "boolean",
                            "description": "its card asks for a key (API key or bearer token) and agents.json has none",
                        },
                        "unreachable": {**_STR, "description": "why the card could not be fetched, and its URL tried"},
                        "note": _STR,
                    },
                },
            },
            "problems": {**_STRS, "description": "invalid agents.json entries, skipped"},
            "note": {**_STR, "description": "set when there are no agents yet"},
        },
    },
    "TaskResult": {
        "type": "object",
        "required": ["state", "agent", "taskId", "contextId"],
        "description": (
            "send (a task), status, cancel. A task still running after the wait has only state `working`, the ids "
            "and `note` (its result arrives in the chat later: the watch note)."
        ),
        "properties": {
            "state": {**_STR, "description": "completed, failed, canceled, rejected, input-required, ..."},
            "agent": _STR,
            "taskId": _STR,
            "contextId": _STR,
            "text": {**_STR, "description": "the agent's final text"},
            "artifacts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": _STR,
                        "text": _STR,
                        "description": _STR,
                        "parts": {"type": "array", "items": _PART},
                    },
                },
            },
            **_FILES,
            "question": {**_STR, "description": "input-required / auth-required: what the agent asks"},
            "hint": {**_STR, "description": "how to answer: send with this agent and taskId"},
            "newTask": {
                **_STR,
                "description": (
                    "send naming a taskId that the agent took as a new task (fasta2a does, with every message): "
                    "says so; `taskId` is the new task, the one followed from now on"
                ),
            },
            "previousTaskId": {
                **_STR,
                "description": "with newTask: the taskId sent, which the agent did not continue",
            },
            "note": {**_STR, "description": "the watch note (still working), or what cancel did"},
            "watch": {
                **_STR,
                "description": (
                    "status / cancel: how this chat's watch of the task ended (completed, failed, canceled, rejected, "
                    "input-required, auth-required), or `goes on` (a cancel only requested, or refused while the task "
                    "runs); absent when no watch was touched"
                ),
            },
            "warning": _STR,
        },
    },
    "UnwatchResult": {
        "type": "object",
        "required": ["agent", "taskId", "watch", "note"],
        "description": "unwatch: this chat's watch of the task ended; the task goes on at the agent",
        "properties": {
            "agent": _STR,
            "taskId": _STR,
            "contextId": _STR,
            "watch": {**_STR, "enum": ["stopped"]},
            "note": {**_STR, "description": "what stopping means: nothing more of the task is delivered here"},
        },
    },
    "MessageResult": {
        "type": "object",
        "required": ["agent", "message", "contextId"],
        "description": "send, when the agent answers with a message and no task",
        "properties": {"agent": _STR, "message": _STR, "contextId": _STR, **_FILES},
    },
    "ToolError": {
        "type": "object",
        "required": ["error"],
        "description": "the action failed (unknown agent, unreachable, refused, ...): readable, for the model",
        "properties": {
            "error": _STR,
            "taskId": _STR,
            "contextId": _STR,
            "state": _STR,
        },
    },
}

RESULT: dict[str, Any] = {
    "anyOf": [{"$ref": f"#/components/schemas/{name}"} for name in SCHEMAS if name != "Error"],
}
