"""Hops: how many agent-to-agent steps led to a chat target's last inbound message.

The count is kept on the target (`ChatTarget.inbound_hops`, the truth) and mirrored here in memory for
a few seconds, because the tool asks for it synchronously (`hops_for`) from inside the event loop; a
count set by another process is seen once the copy is that old. Every outgoing message carries
inbound + 1 (`volcanic.hops`), so a chain of agents calling each other can be stopped by its length.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time

from a2aconsole.web.models import ChatTarget

log = logging.getLogger(__name__)

FRESH_SECONDS = 5.0
_known: dict[str, tuple[int, float]] = {}
_db_thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="a2a-hops")


def remember(target_id: str, hops: int) -> None:
    """Note a count just read from or written to the database."""
    _known[target_id] = (hops, time.monotonic())


def forget_all() -> None:
    _known.clear()


def _read(target_id: str) -> int:
    hops = ChatTarget.objects.filter(pk=target_id).values_list("inbound_hops", flat=True).first()
    return int(hops or 0)


def hops_for(target_id: str) -> int:
    """The target's last inbound hop count (0 when none); the tool sends this + 1."""
    known = _known.get(target_id)
    if known is not None and time.monotonic() - known[1] < FRESH_SECONDS:
        return known[0]
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        hops = _read(target_id)
    else:  # inside the loop the ORM must run in another thread: one thread (one DB connection), a short read
        try:
            hops = _db_thread.submit(_read, target_id).result(timeout=10)
        except Exception as e:
            log.warning("reading the hops of target %s failed (%s); using 0", target_id, type(e).__name__)
            return 0
    remember(target_id, hops)
    return hops


async def set_inbound_hops(target: ChatTarget | str, hops: int) -> None:
    """Keep the hop count of the target's last inbound message (the API's `hops`, or an `a2a.inbound` message)."""
    if isinstance(target, str):
        target = await ChatTarget.objects.aget(pk=target)
    if target.inbound_hops != hops:
        target.inbound_hops = hops
        await target.asave(update_fields=["inbound_hops"])
    remember(target.pk, hops)
