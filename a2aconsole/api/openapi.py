"""What the API looks like, as data: the tool definition for a model and the OpenAPI 3.1 document.

The document lists every status each operation can answer (a test holds it to what the endpoints really
answer) and the schema of each answer (a test validates the answers against it).
"""

from __future__ import annotations

from typing import Any

from a2aconsole.api.answers import RESULT, SCHEMAS
from a2aconsole.api.calls import call_schema
from a2aconsole.api.idempotency import HEADER, MAX_KEY, REPLAYED
from a2aconsole.core.tool import TARGET_HELP, TOOL_SCHEMA

TOOL_PATH = "/api/v1/targets/{targetId}/tool"


def tool_definition() -> dict[str, Any]:
    """The core tool's definition: `name`, `description` and `parameters` (the JSON schema of its arguments)."""
    return TOOL_SCHEMA


def _json(description: str, schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}, **extra}


def _error(description: str, **extra: Any) -> dict[str, Any]:
    return _json(description, {"$ref": "#/components/schemas/Error"}, **extra)


_ALLOW = {"Allow": {"description": "the methods this path takes", "schema": {"type": "string"}}}


def _method_not_allowed(allowed: str) -> dict[str, Any]:
    return _error(f"Any method but {allowed}; the `Allow` header names it", headers=_ALLOW)


def _tool_responses() -> dict[str, Any]:
    return {
        "200": _json(
            "The tool's result, exactly what the model should see. A failed action is a result with an `error` "
            "member (ToolError), still a 200",
            RESULT,
            headers={
                REPLAYED: {
                    "description": f"`true` when this is the stored answer of an earlier call with the same {HEADER}",
                    "schema": {"type": "string", "enum": ["true"]},
                }
            },
        ),
        "400": _error("The body is invalid: `field` names the member, `error` the problem. Nothing was sent"),
        "401": _error(
            "Missing, wrong or revoked token, or another target's token (always `unauthorized`)",
            headers={"WWW-Authenticate": {"schema": {"type": "string"}}},
        ),
        "403": _error("The chat target is disabled"),
        "405": _method_not_allowed("POST"),
        "409": _error(
            f"A call with this {HEADER} is still in progress (retry after `Retry-After` seconds), or it never "
            "answered (the console stopped during it: check with action=status, or use a new key)"
        ),
        "413": _error("The body is over the server's upload limit"),
        "415": _error("A Content-Type other than application/json"),
        "422": _error(f"This {HEADER} was used in the last 24 h for a call with another body"),
        "500": _error("The console failed on this call; the server log has why"),
        "503": _error("The console cannot check the token right now; try again shortly"),
    }


def _get(operation_id: str, summary: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        "get": {
            "operationId": operation_id,
            "summary": summary,
            "security": [],
            "responses": {"200": _json(description, schema), "405": _method_not_allowed("GET")},
        }
    }


def openapi_document(server_url: str) -> dict[str, Any]:
    """OpenAPI 3.1 for the agent-host API (see docs/api.md for the prose)."""
    tool_schema = {
        "type": "object",
        "required": ["name", "description", "parameters"],
        "properties": {"name": {"type": "string"}, "description": {"type": "string"}, "parameters": {"type": "object"}},
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "a2aconsole agent-host API",
            "version": "1",
            "description": (
                "Give an agent host's model the a2a tool of one chat target. See docs/api.md. Every answer under "
                "/api/ is JSON; errors are `{error, field}`."
            ),
        },
        "servers": [{"url": server_url}],
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {"ToolCall": call_schema(), **SCHEMAS},
        },
        "paths": {
            TOOL_PATH: {
                "post": {
                    "operationId": "callTool",
                    "summary": "Run one a2a tool action for a chat target",
                    "security": [{"bearer": []}],
                    "parameters": [
                        {
                            "name": "targetId",
                            "in": "path",
                            "required": True,
                            "description": TARGET_HELP,
                            "schema": {"type": "string"},
                        },
                        {
                            "name": HEADER,
                            "in": "header",
                            "required": False,
                            "description": (
                                "Any unique string (a UUID) naming this call. The same key and body within 24 h "
                                "answer the first call's answer without sending again; see docs/api.md"
                            ),
                            "schema": {"type": "string", "minLength": 1, "maxLength": MAX_KEY, "pattern": "^[ -~]+$"},
                        },
                    ],
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ToolCall"}}},
                    },
                    "responses": _tool_responses(),
                }
            },
            "/api/v1/tool-schema": _get(
                "toolSchema",
                "The a2a tool definition (name, description, parameters) for a model's tool list",
                tool_schema,
                "The tool definition",
            ),
            "/api/v1/openapi.json": _get("openapi", "This document", {"type": "object"}, "OpenAPI 3.1 document"),
        },
    }
