"""The `webhook` backend: a signed JSON POST of each result to the agent host's URL.

The host verifies `X-A2AConsole-Signature: sha256=<hex>`, an HMAC-SHA256 with the target's secret over
`<timestamp>.<body>` (timestamp in `X-A2AConsole-Timestamp`, Unix seconds), refuses old timestamps, and
uses `watchId` (also sent as `Idempotency-Key`) to drop a result it already has: delivery is at least once.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
from typing import TYPE_CHECKING, Any

import httpx

from a2aconsole.core.clock import Clock, SystemClock
from a2aconsole.core.files import is_http_url, mask_url
from a2aconsole.core.pending import WatchRecord
from a2aconsole.web.delivery.http import fallback_http

if TYPE_CHECKING:
    from a2aconsole.web.models import ChatTarget

log = logging.getLogger(__name__)

TIMESTAMP_HEADER = "X-A2AConsole-Timestamp"
SIGNATURE_HEADER = "X-A2AConsole-Signature"


def new_secret() -> str:
    """A fresh signing secret for a webhook target (shown to the owner once)."""
    return "whsec_" + secrets.token_urlsafe(32)


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The signature header value for `body` sent at `timestamp`."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def payload(target_id: str, text: str, record: WatchRecord | None, delivered_at: str) -> dict[str, Any]:
    r = record
    return {
        "target": target_id,
        "watchId": r.watch_id if r else "",
        "agent": r.agent if r else "",
        "taskId": r.task_id if r else "",
        "contextId": r.context_id if r else "",
        "state": r.state if r else "",
        "text": text,
        "deliveredAt": delivered_at,
    }


class WebhookBackend:
    """POSTs results to `backend_settings["url"]`, signed with `backend_settings["secret"]`; 2xx = delivered."""

    def __init__(
        self, http: httpx.AsyncClient | None = None, clock: Clock | None = None, timeout: float = 15.0
    ) -> None:
        self.http = http
        self.clock: Clock = clock or SystemClock()
        self.timeout = timeout

    async def deliver(self, target: ChatTarget, text: str, record: WatchRecord | None = None) -> bool:
        settings = target.backend_settings or {}
        url, secret = settings.get("url"), settings.get("secret")
        if not is_http_url(url) or not isinstance(secret, str) or not secret:
            log.warning("webhook target %s has no valid url or secret; result kept", target.id)
            return False
        now = self.clock.now()
        body = json.dumps(
            payload(target.id, text, record, now.isoformat()), ensure_ascii=False, separators=(",", ":")
        ).encode()
        timestamp = str(int(now.timestamp()))
        headers = {
            "Content-Type": "application/json",
            TIMESTAMP_HEADER: timestamp,
            SIGNATURE_HEADER: sign(secret, timestamp, body),
        }
        if record is not None:
            headers["Idempotency-Key"] = record.watch_id
        try:
            resp = await (self.http or fallback_http()).post(url, content=body, headers=headers, timeout=self.timeout)
        except httpx.HTTPError as e:
            log.warning("webhook delivery to %s (target %s) failed: %s", mask_url(url), target.id, type(e).__name__)
            return False
        if 200 <= resp.status_code < 300:
            return True
        log.warning("webhook delivery to %s (target %s): HTTP %s", mask_url(url), target.id, resp.status_code)
        return False
