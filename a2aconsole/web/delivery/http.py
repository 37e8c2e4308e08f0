"""The HTTP client of the backends that deliver outside the console (Telegram, webhooks).

Each backend has `async deliver(target, text, record) -> bool`; False keeps the result for a retry with
backoff (the watch registry's job), so a backend never raises and never retries on its own except where
the remote says when (Telegram's 429 `retry_after`). A backend uses the runtime's client (`TargetDelivery`
hands it over); one made without (a command, a test) uses the process's fallback client here.
"""

from __future__ import annotations

import httpx

from a2aconsole.core.remote import new_http_client

_fallback: httpx.AsyncClient | None = None


def fallback_http() -> httpx.AsyncClient:
    """A client for a backend given none."""
    global _fallback
    if _fallback is None or _fallback.is_closed:
        _fallback = new_http_client()
    return _fallback
