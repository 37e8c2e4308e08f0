"""The process's one httpx client for remote agents: no redirects, a pool sized for the watches' streams and
calls, every answer within the byte budget (`answer_budget.py`), and a key sent only to its own origin."""

from __future__ import annotations

import httpx

from a2aconsole.core.config import ClientSettings
from a2aconsole.core.files import origin
from a2aconsole.core.remote.answer_budget import bound_answers
from a2aconsole.core.remote.limits import CALLS_TOTAL, STREAMS_TOTAL

KEY_ORIGIN_HEADER = "x-a2aconsole-key-origin"
_SECRET_HEADERS = ("x-api-key", "authorization")
# Room for every stream the watches may hold open, their calls, and the tool's own calls (sends, statuses, cards).
# Every connection may stay alive: httpcore closes an idle one whenever the pool holds more connections in all
# (streams too) than its keep-alive limit, so a lower limit makes every call beside open streams connect anew.
MAX_CONNECTIONS = STREAMS_TOTAL + CALLS_TOTAL + 64


async def _guard_key(request: httpx.Request) -> None:
    """Request hook: a key header only ever goes to the origin it was meant for."""
    allowed = request.headers.pop(KEY_ORIGIN_HEADER, None)
    if allowed is not None and origin(str(request.url)) != allowed:
        for h in _SECRET_HEADERS:
            request.headers.pop(h, None)


def new_http_client(max_response_bytes: int | None = None, call_timeout: float = 60.0) -> httpx.AsyncClient:
    """The process's shared client: no redirects followed, keepalive pool, the key guard, every answer read
    within `max_response_bytes` (default: `ClientSettings().response_limit`), and each phase of a call (connect,
    each read, each write) within `call_timeout`, the remote calls' (`Remote`; each call is also bounded whole)."""
    limit = max_response_bytes or ClientSettings().response_limit
    return httpx.AsyncClient(
        follow_redirects=False,
        timeout=httpx.Timeout(call_timeout),
        limits=httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_CONNECTIONS),
        headers={"A2A-Version": "1.0", "Accept-Encoding": "identity"},
        event_hooks={"request": [_guard_key], "response": [bound_answers(limit)]},
    )
