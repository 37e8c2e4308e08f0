"""Connections shared by the tool and the watches of one process, one per (workspace, agent entry).

Ten thousand watches on one agent need one card and one SDK client, not ten thousand. A connection is
reused while the entry's url, key and trusted origins stay the same and its card is younger than CARD_TTL (an agent that
changed its card is seen within a minute), and replaced when the entry changes, the card is old, or a call
through it failed; a second request for a connection being made joins the one in flight.
"""

from __future__ import annotations

import asyncio

from a2aconsole.core.clock import Clock, SystemClock
from a2aconsole.core.files import AgentEntry, AgentsFile, Signature, Workspace, file_signature
from a2aconsole.core.remote.client import Connection, Remote
from a2aconsole.core.remote.errors import RemoteError

_Key = tuple[Workspace, str]  # (the workspace, the agent's name)
CARD_TTL = 60.0
BROKEN = frozenset({"network", "protocol", "card"})  # failures the connection itself may be to blame for


def _same(a: AgentEntry, b: AgentEntry) -> bool:
    return a.url == b.url and a.key == b.key and a.trusted_origins == b.trusted_origins


class ConnectionPool:
    """Connections by (workspace root, agent name), plus a stat-checked view of each `agents.json`."""

    def __init__(self, remote: Remote, clock: Clock | None = None, card_ttl: float = CARD_TTL) -> None:
        self.remote = remote
        self.clock: Clock = clock or SystemClock()
        self.card_ttl = card_ttl
        self._conns: dict[_Key, Connection] = {}
        self._made: dict[_Key, float] = {}  # when each connection's card was fetched (monotonic)
        self._inflight: dict[_Key, tuple[AgentEntry, asyncio.Future[Connection]]] = {}
        self._agents: dict[Workspace, tuple[Signature, AgentsFile]] = {}

    def agents(self, ws: Workspace) -> AgentsFile:
        """The workspace's agents.json as it is now: re-read whenever the file's inode, size, mtime or ctime moved.

        Every watch check looks the agent up afresh; the stat check only spares parsing an unchanged file.
        """
        return self.agents_signed(ws)[0]

    def agents_signed(self, ws: Workspace) -> tuple[AgentsFile, Signature]:
        """`agents`, and the file's signature it was checked by: the tool's call checks the file once, for its
        agent and for its scrubber's keys (`Scrubbers.for_workspace`)."""
        sig = file_signature(ws.agents_path)
        cached = self._agents.get(ws)
        if cached is not None and cached[0] == sig:
            return cached[1], sig
        try:
            af = ws.read_agents()
        except OSError as e:  # e.g. a folder in its place: a file that cannot be used, said as a malformed one is
            where = ws.relative(ws.agents_path)
            return AgentsFile(ws.agents_path, [], [], f"{where} cannot be read ({type(e).__name__})", ""), sig
        self._agents[ws] = (sig, af)
        return af, sig

    async def get(self, ws: Workspace, entry: AgentEntry) -> Connection:
        """A connection for this entry (its card fetched once); raises RemoteError when the agent can't be reached."""
        key = (ws, entry.name)
        conn = self._conns.get(key)
        if conn is not None and _same(conn.entry, entry) and self._fresh(key):
            return conn
        pending = self._inflight.get(key)
        if pending is None or not _same(pending[0], entry):
            fut = asyncio.ensure_future(self.remote.connect(entry))
            pending = self._inflight[key] = (entry, fut)
            fut.add_done_callback(lambda f, key=key, entry=entry: self._settle(key, entry, f))
        return await asyncio.shield(pending[1])

    def _fresh(self, key: _Key) -> bool:
        return self.clock.monotonic() - self._made.get(key, float("-inf")) < self.card_ttl

    def _settle(self, key: _Key, entry: AgentEntry, fut: asyncio.Future[Connection]) -> None:
        current = self._inflight.get(key)
        if current is not None and current[1] is fut:
            del self._inflight[key]
        if not fut.cancelled() and fut.exception() is None and (current is None or current[1] is fut):
            self._conns[key] = fut.result()
            self._made[key] = self.clock.monotonic()

    def cached(self, ws: Workspace, name: str) -> Connection | None:
        """The last connection made for the agent `name`, if any (it may have left `agents.json` since)."""
        return self._conns.get((ws, name))

    def drop(self, ws: Workspace, conn: Connection | None) -> None:
        """Forget a connection after a failed call, so the next check fetches the card again."""
        key = (ws, conn.entry.name if conn is not None else "")
        if conn is not None and self._conns.get(key) is conn:
            del self._conns[key]

    def forget(self, ws: Workspace, name: str) -> None:
        """Forget the agent's connection whatever it is (the tool, after a failed call)."""
        self._conns.pop((ws, name), None)

    def forget_if_broken(self, ws: Workspace, name: str, e: RemoteError) -> None:
        """After a call that failed with `e`: forget the connection when it may be to blame (`BROKEN`), so the next
        call fetches the card and connects again."""
        if e.kind in BROKEN:
            self.forget(ws, name)

    def __len__(self) -> int:
        return len(self._conns)
