"""What an agent holds of a chat's tasks, asked for a console page (Tasks at the agent, a task's push configs):
the agent's entry in the chat's workspace and a connection from the tool's pool, or why there is none, in the
tool's words (the client off, an unknown agent, an unreachable one)."""

from __future__ import annotations

from dataclasses import dataclass

from asgiref.sync import sync_to_async

from a2aconsole.core.errors import A2AConsoleError
from a2aconsole.core.files import AgentEntry, Workspace
from a2aconsole.core.remote import Connection, RemoteError
from a2aconsole.core.scrubber import Scrubber
from a2aconsole.core.tool import CLIENT_OFF
from a2aconsole.web import scope
from a2aconsole.web.chats import aresolve, unknown


class UnknownAgent(A2AConsoleError):
    """The chat's agents.json has no such agent (a page answers 404)."""


@dataclass
class AgentSide:
    """A connection to the agent for the chat's workspace, and the scrubber of what it answers (its key, the
    workspace's push tokens, should the agent echo them)."""

    entry: AgentEntry
    workspace: Workspace
    conn: Connection
    scrub: Scrubber

    def forget(self, e: RemoteError) -> None:
        """A call failed as a broken connection does: the pool makes a new one next time (as the tool does)."""
        scope.tool().pool.forget_if_broken(self.workspace, self.entry.name, e)


async def connect(agent: str, target_id: str) -> AgentSide:
    """The agent `agent` of chat `target_id`'s workspace, connected; raises A2AConsoleError saying why not."""
    tool = scope.tool()
    if not tool.settings.enabled:
        raise A2AConsoleError(CLIENT_OFF)
    chat = await aresolve(target_id)
    if chat is None:
        raise A2AConsoleError(unknown(target_id))
    ws = chat.workspace
    entry = (await sync_to_async(ws.read_agents)()).get(agent)
    if entry is None:
        raise UnknownAgent(f'no agent "{agent}" in the agents.json of chat {target_id}')
    conn = await tool.pool.get(ws, entry)
    return AgentSide(entry, ws, conn, tool.scrubbers.for_workspace(ws))
