"""Delivery backends for chat targets that live outside the console: Telegram and webhooks.

Each backend has `async deliver(target, text, record) -> bool`; False keeps the result for a retry with
backoff (the watch registry's job), so a backend never raises and never retries on its own except where
the remote says when (Telegram's 429 `retry_after`).
"""

from __future__ import annotations

import httpx

_fallback: httpx.AsyncClient | None = None


def shared_http() -> httpx.AsyncClient:
    """The process's shared httpx client (the runtime's), or one made here when no runtime is up."""
    global _fallback
    try:
        from a2aconsole.web.runtime import get_runtime

        client = getattr(get_runtime(), "http", None)
        if isinstance(client, httpx.AsyncClient):
            return client
    except Exception:  # no runtime yet (a command, a test): use our own client
        pass
    if _fallback is None or _fallback.is_closed:
        from a2aconsole.core.remote.client import new_http_client

        _fallback = new_http_client()
    return _fallback
