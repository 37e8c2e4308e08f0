"""Whether the console's own push base (`A2AClient__PushBaseUrl`) reaches the console, as the dashboard warns.

Agents POST push updates to `<PushBaseUrl>/a2a/push/<watchId>`; a base that does not lead back to this console (a
wrong host name, a proxy not set up yet, a closed port) loses every push silently. The runtime asks once at start,
a GET of `<PushBaseUrl>/healthz` from the console itself (bounded in time on its clock), and keeps the answer for
PUSH_CHECK_TTL; the dashboard shows a warning while it says unreachable. It proves only that the console reaches
the base: an agent elsewhere may still not.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import httpx

from a2aconsole.core.clock import Clock

log = logging.getLogger(__name__)

PUSH_CHECK_SECONDS = 5.0  # the whole GET, on the runtime's clock
PUSH_CHECK_TTL = 600.0  # how long an answer is kept before the next page asks again


@dataclass(frozen=True)
class PushCheck:
    """The answer: `ok`, or `problem` in words for the owner."""

    ok: bool
    problem: str = ""


class PushBaseCheck:
    """One GET of the push base's `/healthz` at a time (a second caller joins it), its answer cached."""

    def __init__(self, http: httpx.AsyncClient, base: str | None, clock: Clock) -> None:
        self.http = http
        self.base = base
        self.clock = clock
        self._answer: PushCheck | None = None
        self._at = 0.0
        self._running: asyncio.Task[PushCheck] | None = None

    def start(self) -> None:
        """Ask now in the background (at the start of the console), so the first dashboard finds the answer."""
        if self.base and self._running is None and self._answer is None:
            self._running = asyncio.ensure_future(self._ask())

    async def result(self) -> PushCheck | None:
        """The cached answer, asked again once older than PUSH_CHECK_TTL; None when no push base is set."""
        if not self.base:
            return None
        fresh = self._answer is not None and self.clock.monotonic() - self._at < PUSH_CHECK_TTL
        if fresh:
            return self._answer
        if self._running is None or self._running.done():  # none yet, or its answer is stale: ask again
            self._running = asyncio.ensure_future(self._ask())
        return await asyncio.shield(self._running)

    async def _ask(self) -> PushCheck:
        url = f"{self.base}/healthz"
        try:
            async with self.clock.timeout(PUSH_CHECK_SECONDS):
                resp = await self.http.get(url, timeout=PUSH_CHECK_SECONDS)
            answer = (
                PushCheck(True)
                if resp.status_code == 200 and resp.text.strip() == "ok"
                else PushCheck(False, f"{url} answered HTTP {resp.status_code}, not this console's health check")
            )
        except TimeoutError:
            answer = PushCheck(False, f"{url} did not answer within {PUSH_CHECK_SECONDS:g} s")
        except httpx.HTTPError as e:
            answer = PushCheck(False, f"{url} is unreachable from the console ({type(e).__name__})")
        if not answer.ok:
            log.warning("push base check: %s; agents' pushes will not arrive", answer.problem)
        self._answer, self._at = answer, self.clock.monotonic()
        return answer

    async def aclose(self) -> None:
        if self._running is not None and not self._running.done():
            self._running.cancel()
            await asyncio.gather(self._running, return_exceptions=True)
