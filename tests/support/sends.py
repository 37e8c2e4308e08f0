"""A console send as a test sees it: the POST returns at once (`web.sends`); what the owner then reads is the
answer to the POST and, once the send has come back from the tool, the chat page."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.test import AsyncClient

from a2aconsole.web import broadcast, sends


@dataclass
class Seen:
    status_code: int  # the POST's (after its redirect, for a form without htmx)
    answer: str  # the POST's own answer
    page: str  # the chat page after the send settled

    @property
    def text(self) -> str:
        return self.answer + self.page

    @property
    def content(self) -> bytes:
        return self.text.encode()


async def send(
    owner: AsyncClient, data: dict[str, Any], target: str = "console", headers: dict[str, str] | None = None
) -> Seen:
    r = await owner.post(f"/chat/{target}/send/", data, headers=headers or {}, follow=not headers)
    await sends.settled()
    await broadcast.flush()
    page = await owner.get(f"/chat/{target}/")
    return Seen(r.status_code, r.content.decode(), page.content.decode())
