"""Hops: how many agent-to-agent steps led to a chat target's last inbound message.

The count is kept on the target (`ChatTarget.inbound_hops`, the one copy) and read with the target each time a
call resolves it (`web.chats`): there is no cache to go stale. Every outgoing message carries inbound + 1
(`volcanic.hops`), so a chain of agents calling each other can be stopped by its length.
"""

from __future__ import annotations

from a2aconsole.web.models import ChatTarget


async def set_inbound_hops(target: ChatTarget | str, hops: int) -> None:
    """Keep the hop count of the target's last inbound message (the API's `hops`, or an `a2a.inbound` message)."""
    if isinstance(target, str):
        target = await ChatTarget.objects.aget(pk=target)
    if target.inbound_hops != hops:
        target.inbound_hops = hops
        await target.asave(update_fields=["inbound_hops"])
