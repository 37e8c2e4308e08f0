"""The bearer tokens as API calls check them: a valid token is kept in memory for a moment, its use noted now and then.

A host calling many times a second would otherwise cost a hop to a database thread and a read per call, before any
work (1-2 ms apiece on a loaded machine). So a token found live is kept for CACHE_SECONDS, keyed by its SHA-256
(never the token itself) and the target it was presented for, with its row and its target's row. Any save or delete
of a token or a target in this process (a revoke, a disabled target, a new workspace, new inbound hops) clears
what is kept, at once and again when its transaction commits; a lookup that was under way when that happened is
not kept. A change made by another process (`manage.py targets revoke` while `serve` runs) is not seen by these
signals: it takes effect here within CACHE_SECONDS, the bound docs/api.md states.

A token's `last_used_at` is written at most once per TOKEN_USE_SECONDS per token and process: a record for the
owner, not a condition of the call, so a write that fails is logged and the call goes on.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import DatabaseError, transaction
from django.db.models.signals import post_delete, post_save
from django.utils import timezone

from a2aconsole.web import db_threads
from a2aconsole.web.models import ApiToken, ChatTarget

log = logging.getLogger(__name__)

CACHE_SECONDS = 2.0  # how long a live token is taken on trust; another process's revoke is honoured within it
TOKEN_USE_SECONDS = 60.0  # a token's `last_used_at` is written at most this often (per token and process)


@dataclass(frozen=True)
class _Kept:
    row: ApiToken  # with its target (`row.target`)
    until: float  # monotonic


class TokenCache:
    """The live tokens of the last CACHE_SECONDS, and when each one's use was last written."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._kept: dict[tuple[str, str], _Kept] = {}  # (token hash, target id) -> its rows
        self._noted: dict[str, float] = {}  # token hash -> when (monotonic) its use was last written
        self._changes = 0  # counts the clears: a lookup begun before one is not kept
        self._lock = threading.Lock()  # clears come from whichever thread saved the row

    async def live(self, token_hash: str, target_id: str) -> ApiToken | None:
        """The live token's row (with its target) if `token_hash` is `target_id`'s live token, else None: from
        memory when it was found live within CACHE_SECONDS and its use needs no writing, else from the database."""
        now = self.clock()
        kept = self._kept.get((token_hash, target_id))
        if kept is not None and now < kept.until and not self._use_due(token_hash, now):
            return kept.row
        changes = self._changes
        row = await db_threads.run(self._read, token_hash, target_id, now)
        with self._lock:
            if row is None:
                self._kept.pop((token_hash, target_id), None)
            elif changes == self._changes:  # no token or target changed meanwhile: what was read is still true
                self._kept[(token_hash, target_id)] = _Kept(row, now + CACHE_SECONDS)
        return row

    def clear(self) -> None:
        """Forget every kept token (a token or a target changed)."""
        with self._lock:
            self._changes += 1
            self._kept.clear()

    def _use_due(self, token_hash: str, now: float) -> bool:
        return now - self._noted.get(token_hash, -TOKEN_USE_SECONDS) >= TOKEN_USE_SECONDS

    def _read(self, token_hash: str, target_id: str, now: float) -> ApiToken | None:
        """In a database thread: the live token's row with its target, its use written if due."""
        try:  # the hash is unique: `get`, not `first`, which orders the one row (a sort the query compiles for nothing)
            row = ApiToken.objects.select_related("target").get(
                token_hash=token_hash, revoked_at__isnull=True, target_id=target_id
            )
        except ApiToken.DoesNotExist:
            return None
        if self._use_due(token_hash, now):
            try:
                ApiToken.objects.filter(pk=row.pk).update(last_used_at=timezone.now())
                self._noted[token_hash] = now
            except DatabaseError as e:
                log.warning("noting the use of a token of target %s failed (%s)", target_id, type(e).__name__)
        return row


CACHE = TokenCache()


def _changed(sender: Any, **kwargs: Any) -> None:
    """A token or a target was saved or deleted: forget the kept tokens now, and again once that is committed (a
    lookup between the two read the row as it was before)."""
    CACHE.clear()
    transaction.on_commit(CACHE.clear, using=kwargs.get("using"))


def connect() -> None:
    """Clear the cache on every save and delete of a token or a target (`ApiConfig.ready`)."""
    for model in (ApiToken, ChatTarget):
        post_save.connect(_changed, sender=model, dispatch_uid=f"api-tokens-{model.__name__}-save")
        post_delete.connect(_changed, sender=model, dispatch_uid=f"api-tokens-{model.__name__}-delete")
