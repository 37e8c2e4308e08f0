"""What the API looks like, as data: the tool definition for a model and the OpenAPI 3.1 document."""

from __future__ import annotations

from typing import Any

from .calls import call_schema


def tool_definition() -> dict[str, Any]:
    """The core tool's definition: `name`, `description` and `parameters` (the JSON schema of its arguments)."""
    from a2aconsole.core.tool import TOOL_SCHEMA

    return TOOL_SCHEMA


def _error(description: str, with_field: bool = False) -> dict[str, Any]:
    props: dict[str, Any] = {"error": {"type": "string"}}
    if with_field:
        props["field"] = {"type": ["string", "null"]}
    return {
        "description": description,
        "content": {"application/json": {"schema": {"type": "object", "properties": props, "required": ["error"]}}},
    }


def openapi_document(server_url: str) -> dict[str, Any]:
    """OpenAPI 3.1 for the agent-host API (see docs/api.md for the prose)."""
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "a2aconsole agent-host API",
            "version": "1",
            "description": "Give an agent host's model the a2a tool of one chat target. See docs/api.md.",
        },
        "servers": [{"url": server_url}],
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {"ToolCall": call_schema()},
        },
        "paths": {
            "/api/v1/targets/{targetId}/tool": {
                "post": {
                    "operationId": "callTool",
                    "summary": "Run one a2a tool action for a chat target",
                    "security": [{"bearer": []}],
                    "parameters": [{"name": "targetId", "in": "path", "required": True, "schema": {"type": "string"}}],
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ToolCall"}}},
                    },
                    "responses": {
                        "200": {
                            "description": "The tool's result; a failed action is a result with an `error` member",
                            "content": {"application/json": {"schema": {"type": "object"}}},
                        },
                        "400": _error("The body is invalid: `field` names the member, `error` the problem", True),
                        "401": _error("Missing, wrong or revoked token, or another target's token"),
                        "403": _error("The chat target is disabled"),
                        "413": _error("The body is over the server's upload limit"),
                        "503": _error("The console cannot check the token right now; try again shortly"),
                    },
                }
            },
            "/api/v1/tool-schema": {
                "get": {
                    "operationId": "toolSchema",
                    "summary": "The a2a tool definition (name, description, parameters) for a model's tool list",
                    "security": [],
                    "responses": {
                        "200": {
                            "description": "The tool definition",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "required": ["name", "description", "parameters"],
                                        "properties": {
                                            "name": {"type": "string"},
                                            "description": {"type": "string"},
                                            "parameters": {"type": "object"},
                                        },
                                    }
                                }
                            },
                        }
                    },
                }
            },
            "/api/v1/openapi.json": {
                "get": {
                    "operationId": "openapi",
                    "summary": "This document",
                    "security": [],
                    "responses": {
                        "200": {
                            "description": "OpenAPI 3.1 document",
                            "content": {"application/json": {"schema": {"type": "object"}}},
                        }
                    },
                }
            },
        },
    }
