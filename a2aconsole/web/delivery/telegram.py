"""The `telegram` backend: Bot API `sendMessage` to the target's chat, with a timestamp header line.

The bot token comes from the environment only (`TELEGRAM_BOT_TOKEN`, or the variable named by the
target's `token_env` setting). It sits in the Bot API's URL path, so nothing here logs a URL or an
exception text, and the log handlers' `MaskUrls` filter (settings.LOGGING) masks `/bot<token>/` in theirs.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

import httpx

from a2aconsole.core.clock import Clock, SystemClock
from a2aconsole.core.pending import WatchRecord
from a2aconsole.web.delivery.http import fallback_http

if TYPE_CHECKING:
    from a2aconsole.web.models import ChatTarget

log = logging.getLogger(__name__)

LIMIT = 4096  # Telegram's maximum message length, in UTF-16 code units
DEFAULT_API_BASE = "https://api.telegram.org"


def timestamp_header(clock: Clock) -> str:
    """The first line of every delivered message, like the spec's Telegram job delivery."""
    return f"[{clock.now():%Y-%m-%d %H:%M} UTC]"


def units(text: str) -> int:
    """Length as Telegram counts it: UTF-16 code units (an emoji outside the BMP is two)."""
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def _cut(line: str, limit: int) -> tuple[str, str]:
    """The longest head of `line` within `limit` units (never half a surrogate pair), and the rest."""
    n = 0
    for i, c in enumerate(line):
        n += 2 if ord(c) > 0xFFFF else 1
        if n > limit:
            return line[:i], line[i:]
    return line, ""


def split_text(text: str, limit: int = LIMIT) -> list[str]:
    """Pieces of at most `limit` UTF-16 units, cut at line ends; a longer line is cut where it must be."""
    chunks: list[str] = []
    current, size = "", 0
    for line in text.splitlines(keepends=True):
        while units(line) > limit:
            if current:
                chunks.append(current)
                current, size = "", 0
            head, line = _cut(line, limit)
            chunks.append(head)
        n = units(line)
        if size + n > limit:
            chunks.append(current)
            current, size = "", 0
        current += line
        size += n
    if current:
        chunks.append(current)
    return [c.rstrip("\n") for c in chunks if c.strip()] or [_cut(text, limit)[0] or " "]


class TelegramBackend:
    """Sends results to `backend_settings["chat_id"]`; a 429 waits `retry_after` (up to a bound) and retries."""

    def __init__(
        self,
        http: httpx.AsyncClient | None = None,
        clock: Clock | None = None,
        env: Mapping[str, str] | None = None,
        *,
        timeout: float = 15.0,
        max_attempts: int = 3,
        max_retry_after: float = 60.0,
    ) -> None:
        self.http = http
        self.clock: Clock = clock or SystemClock()
        self.env = env if env is not None else os.environ
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.max_retry_after = max_retry_after

    def _token(self, target: ChatTarget) -> str | None:
        name = (target.backend_settings or {}).get("token_env") or "TELEGRAM_BOT_TOKEN"
        return self.env.get(str(name)) or None

    def _api_base(self) -> str:
        return (self.env.get("TELEGRAM_API_BASE") or DEFAULT_API_BASE).rstrip("/")

    async def deliver(self, target: ChatTarget, text: str, record: WatchRecord | None = None) -> bool:
        chat_id = (target.backend_settings or {}).get("chat_id")
        token = self._token(target)
        if chat_id in (None, "") or not token:
            log.warning("telegram target %s has no chat_id or no bot token in the environment; result kept", target.id)
            return False
        url = f"{self._api_base()}/bot{token}/sendMessage"
        for chunk in split_text(f"{timestamp_header(self.clock)}\n{text}"):
            if not await self._send(target, url, chat_id, chunk):
                return False
        return True

    async def _send(self, target: ChatTarget, url: str, chat_id: object, text: str) -> bool:
        client = self.http or fallback_http()
        for attempt in range(1, self.max_attempts + 1):
            try:
                resp = await client.post(url, json={"chat_id": chat_id, "text": text}, timeout=self.timeout)
            except httpx.HTTPError as e:
                log.warning("telegram delivery to target %s failed: %s", target.id, type(e).__name__)
                return False
            if resp.status_code == 200:
                return True
            if resp.status_code == 429 and attempt < self.max_attempts:
                wait = _retry_after(resp)
                if wait is not None and wait <= self.max_retry_after:
                    log.info("telegram asks target %s to wait %ss", target.id, wait)
                    await self.clock.sleep(wait)
                    continue
            log.warning("telegram delivery to target %s: HTTP %s", target.id, resp.status_code)
            return False
        return False


def _retry_after(resp: httpx.Response) -> float | None:
    """Seconds to wait from a 429: the Bot API's `parameters.retry_after`, else the Retry-After header."""
    try:
        value = resp.json().get("parameters", {}).get("retry_after")
    except (ValueError, AttributeError):
        value = None
    if value is None:
        value = resp.headers.get("retry-after")
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and seconds >= 0 else None
