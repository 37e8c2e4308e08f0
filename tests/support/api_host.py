"""An agent host of the JSON tool API: one chat target, its token, and an HTTP client that calls the API."""

from __future__ import annotations

import json
from typing import Any

from asgiref.sync import sync_to_async
from django.test import AsyncClient

from a2aconsole.api.openapi import TOOL_PATH
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.models import ApiToken, ChatTarget
from tests.support.api_contract import check_answer


class Host:
    """An agent host: one target, its token, and an HTTP client that calls the API."""

    def __init__(self, target: ChatTarget, token: str) -> None:
        self.target, self.token = target, token
        self.client = AsyncClient(enforce_csrf_checks=True)  # hosts have no CSRF token

    async def call(
        self,
        body: Any,
        *,
        token: str | None = None,
        target: str | None = None,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        """POST a call; the answer is checked against openapi.json (its status listed, its body valid)."""
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        auth = {"Authorization": f"Bearer {self.token if token is None else token}"} if token != "" else {}
        resp = await self.client.post(
            f"/api/v1/targets/{target or self.target.id}/tool",
            raw,
            content_type=content_type,
            headers={**auth, **(headers or {})},
        )
        return resp.status_code, check_answer(TOOL_PATH, "POST", resp.status_code, resp["Content-Type"], resp.content)


async def make_host(workspace: Workspace, target_id: str = "bot", **fields: Any) -> Host:
    """A chat target over `workspace` (needs a django_db mark) with a fresh API token: its host."""
    target = await ChatTarget.objects.acreate(id=target_id, name=target_id, workspace=str(workspace.root), **fields)
    _, token = await sync_to_async(ApiToken.issue)(target, "test host")
    return Host(target, token)
