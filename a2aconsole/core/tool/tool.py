"""The `a2a` tool: `agents`, `send`, `status`, `cancel`, `unwatch`, one object for the model, the console, the CLI
and the API; and `watch` (a task the console did not send, `adopt.py`), the console's own.

`run` never raises: every failure becomes `{"error": "..."}` naming the agent and what to do. The key
goes out only in `client.py`'s per-call headers, and whatever the answer (an agent may echo its key or
push token), the result, errors and events pass one `Scrubber` on their way out: secrets masked, files
named relative to the workspace. Files under `.volcanic/` or the console's data folder are never
attached (`attachments.py`). `agents.json` is read afresh on every call. A send that outlives
`WaitSeconds` is handed to a watch: its record is written to `pending.json` first (the files are the
truth), then the watch control is told to arm it. A watch the tool ends (`cancel`, a settled `status`, `unwatch`)
has its push config removed from the agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from a2aconsole.core.chat import ChatTarget
from a2aconsole.core.clock import Clock, SystemClock, wait_done
from a2aconsole.core.config import ClientSettings
from a2aconsole.core.errors import A2AConsoleError, FileFormatError, ToolError
from a2aconsole.core.events import MESSAGE, QUESTION, RESULT, SENT, STATE, EventSink
from a2aconsole.core.files import AgentEntry, AgentsFile, Workspace, read_attachments
from a2aconsole.core.pending import WatchRecord
from a2aconsole.core.remote import (
    Connection,
    ConnectionPool,
    MessageValue,
    OutgoingMessage,
    Remote,
    RemoteError,
    StatusValue,
    TaskSnapshot,
    card_json,
    outgoing_message,
)
from a2aconsole.core.results import (
    has_files,
    is_interrupted,
    is_message,
    is_settled,
    is_terminal,
    message_outcome,
    outcome_event,
    task_outcome,
)
from a2aconsole.core.scrubber import Scrubbers
from a2aconsole.core.tool import adopt, cancel, unwatch
from a2aconsole.core.tool.args import agent_entry, send_args, task_id_of
from a2aconsole.core.tool.events import ToolEvents
from a2aconsole.core.tool.schema import ACTIONS
from a2aconsole.core.tool.send import (
    SendHost,
    done,
    drop_runner,
    first_check,
    hand_over,
    new_record,
    new_task_note,
    stale_marker,
    stale_status,
    told_already,
    unrecord,
    unwatchable_answer,
    watched_in_context,
    working_answer,
    write_sending,
)
from a2aconsole.core.watches import Follower, PendingFileWatches, WatchControl, end_push

log = logging.getLogger(__name__)

CLIENT_OFF = "the A2A client is off (A2AClient__Enabled=false): nothing was sent; ask the owner to turn it on"
HOPS_KEY = "volcanic.hops"
# a running task's status, when this chat watches it: what comes, and how to stop it coming
WATCHED_NOTE = (
    "this chat watches the task: its result will arrive here by itself; action=unwatch stops watching "
    "(the task goes on at the agent)"
)


def _err(message: str, **extra: Any) -> dict[str, Any]:
    return {"error": message, **extra}


class A2ATool:
    """The tool. Parts are passed in; one instance serves every target and workspace of the process: each call
    names its chat target as a value the caller resolved (`chat.ChatTarget`)."""

    def __init__(
        self,
        remote: Remote,
        settings: ClientSettings,
        watches: WatchControl | None = None,
        events: EventSink | None = None,
        clock: Clock | None = None,
        private_paths: Sequence[str | Path] = (),
        pool: ConnectionPool | None = None,
    ) -> None:
        """`private_paths`: the console's own files and folders besides each workspace's `.volcanic/` (the data
        folder, the database): never attachable."""
        self.remote = remote
        self.settings = settings
        # `is None`, not `or`: a WatchRegistry with no watches yet is empty (len 0), hence falsy
        self.watches: WatchControl = watches if watches is not None else PendingFileWatches()
        self.events = events
        self.clock: Clock = clock or SystemClock()
        self.private_paths = [Path(p) for p in private_paths]
        self.scrubbers = Scrubbers()
        self._events = ToolEvents(events, self.clock, self.scrubbers)
        self._emit = self._events.emit
        # one pool (with the card TTL) for the tool and the watch registry of the process
        self.pool = pool if pool is not None else ConnectionPool(remote, self.clock)

    # entry point

    async def run(self, action: str, args: dict[str, Any] | None, chat: ChatTarget, *, by: str = "") -> dict[str, Any]:
        """Do one action for a chat target; never raises (except cancellation of the caller). The answer is
        scrubbed of the workspace's keys, push tokens and absolute path. `by`: who asks (`STOPPED_BY`: the
        owner, an API host, the shell), which a stopped watch's history names."""
        agents, signature = self.pool.agents_signed(chat.workspace)  # one stat: the call's agents and the keys
        result = await self._run(action, args, chat, agents, by)
        return self.scrubbers.for_workspace(chat.workspace, signature)(result)

    async def _run(
        self, action: str, args: dict[str, Any] | None, chat: ChatTarget, agents: AgentsFile, by: str = ""
    ) -> dict[str, Any]:
        args = dict(args or {})
        agent = args.get("agent") if isinstance(args.get("agent"), str) else ""
        try:
            if action not in ACTIONS and action != adopt.WATCH:  # `watch`: the console's own (adopt.py)
                return _err(f"unknown action {action!r}: use one of {', '.join(ACTIONS)}")
            if not self.settings.enabled and action != "agents":  # off: nothing is sent; cards can still be read
                return _err(CLIENT_OFF)
            workspace, target = chat.workspace, chat.id
            if action == "agents":
                return await self._agents(workspace, agents)
            if action == "send":
                return await self._send(workspace, args, target, chat.hops, agents)
            if action == "status":
                return await self._status(workspace, args, target, agents)
            if action == "unwatch":
                return await unwatch.run(self, workspace, args, target, agents, by)
            if action == adopt.WATCH:
                return await adopt.run(self, workspace, args, target, agents)
            return await self._cancel(workspace, args, target, agents)
        except (ToolError, RemoteError) as e:
            await self._events.error(chat.workspace, chat.id, agent, args, str(e))
            return _err(str(e))
        except FileFormatError as e:
            return _err(f"{e}; fix the file (nothing was changed)")
        except A2AConsoleError as e:
            return _err(str(e))
        except Exception as e:  # the tool never throws into the loop
            log.exception("a2a %s failed", action)
            who = f'agent "{agent}": ' if agent else ""
            return _err(f"{who}{action} failed unexpectedly ({type(e).__name__}); try again, or check the server log")

    # agents

    async def _agents(self, workspace: Workspace, af: AgentsFile) -> dict[str, Any]:
        if af.parse_error:
            return _err(f"{af.parse_error}; no agents can be used until the file is fixed")
        listed = await asyncio.gather(*(self._describe(e) for e in af.entries))
        result: dict[str, Any] = {"agents": list(listed)}
        if af.problems:
            result["problems"] = af.problems
        if not af.entries and not af.problems:
            result["note"] = f"no agents yet: add them to {workspace.relative(af.path)}"
        return result

    async def _describe(self, entry: AgentEntry) -> dict[str, Any]:
        info: dict[str, Any] = {"name": entry.name, "url": entry.masked_url}
        try:
            card = await self.remote.fetch_card(entry)
        except RemoteError as e:
            info["unreachable"] = str(e)
            if entry.description:
                info["description"] = entry.description
            return info
        except Exception as e:
            info["unreachable"] = f"{type(e).__name__}"
            return info
        if entry.key and card.extended_card:
            try:
                conn = await self.remote.connect(entry, card)
                async with self.remote.clock.timeout(self.remote.card_timeout):
                    card = await conn.extended_card()
                info["extendedCard"] = True
            except RemoteError as e:
                info["note"] = f"extended card not available: {e}"
            except TimeoutError:  # its text is empty
                info["note"] = f"extended card not available: timed out after {self.remote.card_timeout:g} s"
        info["description"] = entry.description or card.description
        info["cardName"] = card.name
        info["skills"] = [
            {"id": s.id, "name": s.name, "description": s.description, "examples": list(s.examples)}
            for s in card.skills
        ]
        info["streaming"], info["push"] = card.streaming, card.push
        if entry.key_missing(card_json(card)):
            info["needsKey"] = True
        if card.protocol_versions:
            info["protocolVersions"] = list(card.protocol_versions)
        return info

    # send

    async def _send(
        self, workspace: Workspace, args: dict[str, Any], target: str, hops: int, agents: AgentsFile
    ) -> dict[str, Any]:
        started = self.clock.monotonic()
        entry = agent_entry(workspace, args, agents)
        text, files, data, context_id, task_id = send_args(args)
        cap = self.settings.max_file_bytes
        attached = await asyncio.to_thread(read_attachments, workspace, files, cap, self.private_paths) if files else []
        message = outgoing_message(text, attached, context_id, task_id, {HOPS_KEY: max(0, hops) + 1}, data)
        conn = await self.pool.get(workspace, entry)
        sent_at = self.clock.now()
        try:
            reply = await self._reply(conn, message, started)
        except RemoteError as e:
            self.pool.forget_if_broken(workspace, entry.name, e)
            if context_id and e.kind in ("rpc", "protocol", "unsupported"):
                busy = watched_in_context(workspace, target, entry.name, context_id)
                if busy is not None:
                    raise ToolError(
                        f'{e}. This chat already watches task {busy.task_id} of "{entry.name}" in context '
                        f"{context_id}: its result will arrive here by itself; wait for it, or send without "
                        "contextId to start a new conversation"
                    ) from None
            raise
        # the history keeps what was sent, for a re-send
        sent = {k: v for k, v in (("files", list(files)), ("data", data)) if v} or None
        if is_message(reply):
            if has_files(reply):
                out = await asyncio.to_thread(
                    message_outcome, reply, entry.name, workspace, self.settings.max_file_bytes
                )
            else:
                out = message_outcome(reply, entry.name, workspace, self.settings.max_file_bytes)
            await self._emit(SENT, workspace, target, entry.name, "", reply.context_id, text=text or "", data=sent)
            said = outcome_event({**out, "text": out.get("message")})  # kept in the history like a result
            await self._emit(MESSAGE, workspace, target, entry.name, "", reply.context_id, **said)
            return out
        await self._emit(SENT, workspace, target, entry.name, reply.id, reply.context_id, text=text or "", data=sent)
        moved = new_task_note(task_id, reply.id, context_id)
        if moved:  # the old task's question is answered (by a new task): its history says so
            said = {**(sent or {}), "newTaskId": reply.id, "note": moved}
            await self._emit(
                SENT, workspace, target, entry.name, task_id, context_id or reply.context_id, text=text, data=said
            )
        out = await self._task_reply(workspace, target, entry, conn, reply, message, started, sent_at)
        if moved:
            out.update(newTask=moved, previousTaskId=task_id)
        return out

    async def _reply(self, conn: Connection, message: OutgoingMessage, started: float) -> TaskSnapshot | MessageValue:
        """The send's reply. A follow-up's that has not come by the end of the wait is read from its task once the
        task holds the message sent (`Connection.task_holding`), and the call is dropped: an agent answering
        `returnImmediately` only at its first event (@a2a-js/sdk 0.3) says nothing while it works on a follow-up
        silently, and the send failed at the call timeout, its task unwatched. The task read is the one before the
        answer, still asking: a stale reply (`stale_status`), which the watch follows to the outcome."""
        if not message.task_id:
            return await conn.send(message)
        call = asyncio.ensure_future(conn.send(message))
        try:
            await wait_done(self.clock, call, self._left(started))
            if not call.done():
                with contextlib.suppress(RemoteError):  # the task not read: the call's own answer decides
                    held = await conn.task_holding(message.task_id, message.message_id)
                    if held is not None and not call.done():
                        call.cancel()
                        return held
            return await call
        except BaseException:
            call.cancel()
            raise

    async def _task_reply(
        self,
        workspace: Workspace,
        target: str,
        entry: AgentEntry,
        conn: Connection,
        reply: TaskSnapshot,
        message: OutgoingMessage,
        started: float,
        sent_at: datetime,
    ) -> dict[str, Any]:
        """A send answered with a task: its outcome when it ends within the wait, else its watch."""
        text = message.text
        stale = stale_status(reply, message, sent_at)
        if done(reply, stale):  # answered at once: nothing to record
            return await self._finish(reply, entry.name, workspace, target)
        # The task exists from here on: its record goes to pending.json before any wait (issue 11), marked as
        # sending, so a process dying during the wait leaves a watch a worker adopts. The follower goes on in a
        # task of its own, which the watch of the chat takes over when the wait runs out.
        record = self._new_record(conn, reply, target, text, stale, sent_at)
        written, unwritable = await write_sending(workspace, record, self.clock.now(), self.settings.wait_seconds)
        follower = self._follower(record, workspace, stale)
        runner: asyncio.Future[TaskSnapshot] | None = None
        try:
            task, failure = await first_check(conn, reply.id, self.clock, self._left(started))
            if task is not None:
                await follower.saw_first(task)
                task = task if done(task, stale) else None
            if task is None and failure is None:
                runner = asyncio.ensure_future(follower.follow(conn))
                await wait_done(self.clock, runner, self._left(started))
        except BaseException:  # cancelled: the caller gave up, the chat gets the result
            if runner is None:
                runner = asyncio.ensure_future(follower.follow(conn))
            await asyncio.shield(hand_over(self.watches, workspace, reply.state, written, follower, runner))
            raise
        if runner is not None and runner.done():
            try:
                task = runner.result()
            except Exception as e:
                failure = e
        if failure is not None:
            if isinstance(failure, RemoteError) and failure.kind == "too_big":  # a watch would read it again
                if written is not None:
                    await unrecord(workspace, written)
                raise failure
            # the task runs on remotely: hand it to a watch, which retries, rather than lose it; its kind, not its
            # text (an agent's error may echo its key)
            log.warning("following task %s failed (%s); a watch takes over", reply.id, getattr(failure, "kind", ""))
        elif task is not None:
            if written is None or await unrecord(workspace, written):
                return await self._finish(task, entry.name, workspace, target)
            # a worker adopted the record (the wait outlived its sender mark): it delivers to the chat
            return working_answer(entry.name, task.id, task.context_id)
        task = follower.latest or reply
        if unwritable is not None:
            drop_runner(runner)
            return unwatchable_answer(unwritable, entry.name, task.id, task.context_id)
        if stale is None or task.status != stale:
            follower.record.extra.pop("staleStatus", None)
        return await hand_over(self.watches, workspace, task.state, written, follower, runner)

    def _left(self, started: float) -> float:
        """What is left of the send's wait (`WaitSeconds` from the send)."""
        return self.settings.wait_seconds - (self.clock.monotonic() - started)

    def _follower(self, record: WatchRecord, workspace: Workspace, stale: StatusValue | None) -> Follower:
        async def emit(kind: str, f: Follower, **kw: Any) -> None:
            rec = f.record
            await self._emit(kind, workspace, rec.target, rec.agent, rec.task_id, rec.context_id, **kw)

        host = SendHost(self.pool, self.settings, self.clock, emit if self.events is not None else None)
        follower = Follower(record, workspace, float("inf"), host)
        follower.state = told_already(stale)  # not the record's: it may be marked "sending" by now
        return follower

    async def _finish(self, task: TaskSnapshot, agent: str, workspace: Workspace, target: str) -> dict[str, Any]:
        if has_files(task):  # saving files blocks: off the loop
            out = await asyncio.to_thread(task_outcome, task, agent, workspace, self.settings.max_file_bytes)
        else:
            out = task_outcome(task, agent, workspace, self.settings.max_file_bytes)
        if self.events is not None:  # the event's preview is built only for a sink
            kind = QUESTION if is_interrupted(out["state"]) else RESULT if is_terminal(out["state"]) else STATE
            await self._emit(
                kind, workspace, target, agent, task.id, task.context_id, state=out["state"], **outcome_event(out)
            )
        return out

    def _new_record(
        self, conn: Connection, task: TaskSnapshot, target: str, text: str, stale: StatusValue | None, sent_at: datetime
    ) -> WatchRecord:
        source = "push" if conn.push and self.settings.push_base_url else "subscribe" if conn.streaming else "poll"
        record = new_record(target, conn.entry.name, task.id, task.context_id, source, sent_at)
        record.state, record.message = task.state, text
        if stale is not None:
            record.extra["staleStatus"] = stale_marker(stale)
        return record

    # status

    async def _status(
        self, workspace: Workspace, args: dict[str, Any], target: str, agents: AgentsFile
    ) -> dict[str, Any]:
        entry = agent_entry(workspace, args, agents)
        task_id = task_id_of(args, "status")
        conn = await self.pool.get(workspace, entry)
        try:
            task = await conn.get_task(task_id)
        except RemoteError as e:
            if e.kind in ("network", "protocol"):
                self.pool.forget(workspace, entry.name)
            raise
        out = await self._finish(task, entry.name, workspace, target)
        if is_settled(out["state"]):
            try:
                stopped = await self.watches.stop_watching(workspace, target, entry.name, task_id)
            except FileFormatError as e:
                out["warning"] = f"{e}; a watch of this task may still deliver its result"
            else:
                await end_push(conn, stopped)
                if stopped is not None:
                    out["watch"] = out["state"]  # the watch ended with the task's own word
        elif cancel.watched(workspace, target, entry.name, task_id):
            out["note"] = WATCHED_NOTE
        return out

    # cancel

    async def _cancel(
        self, workspace: Workspace, args: dict[str, Any], target: str, agent_file: AgentsFile
    ) -> dict[str, Any]:
        return await cancel.run(self, workspace, args, target, agent_file)

    def watch_record(self, conn: Connection, task: TaskSnapshot, target: str) -> WatchRecord:
        """A new watch of the chat for a running task the console did not send (`adopt.py`), as a send's."""
        return self._new_record(conn, task, target, "", None, self.clock.now())

    async def finish(self, task: TaskSnapshot, agent: str, workspace: Workspace, target: str) -> dict[str, Any]:
        """A task's outcome as an answer, its event emitted (for `cancel.run`)."""
        return await self._finish(task, agent, workspace, target)
