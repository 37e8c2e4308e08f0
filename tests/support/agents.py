"""Real A2A agents for tests, built on a2a-sdk's own server and served by uvicorn on 127.0.0.1.

One scripted executor; the first word of the user's text picks the scenario:

- `hello ...`         completes at once with `echo: <text>` (status message and a text artifact)
- `slow <seconds>`    works that long (real time), then completes with `slow result`
- `hold <gate>`       works until the test calls `agent.release(gate)` (no sleeps in tests), then completes
- `steps <n> <gate> <end>`  after the gate, n status messages `working i/n` (still working), then completes
                      after the gate <end>
- `ask`               asks "Which colour?" (input-required); the answer completes with `got answer: <text>`
                      (an answer `hold <gate>` first works until the gate is released)
- `later <gate>`      works until the gate is released, then asks as `ask` does (a question the send's wait missed)
- `auth`              asks for auth (auth-required)
- `data`              completes with a data part artifact (`DATA`: nested objects, a list, scalars)
- `form`              asks with a form data part (`FORM`, the A2A samples' `type: "form"` shape: input-required);
                      an answer with a data part completes echoing it (`got form: <json>` and the values as data)
- `rawform <json>`    asks with that JSON as its data part (a hostile form)
- `file`              completes with a PDF file artifact plus a URL part
- `bigfile <bytes>`   completes with a file artifact of that many bytes
- `bigtext <chars> [gate]`  completes with a text artifact of that many characters (after `agent.release(gate)`)
- `manyfiles <n>`     completes with n small file parts all named `part.txt` (each a different content)
- `link <url>`        completes with a URL part of that URL (any scheme: `javascript:…` too)
- `chunks <n> <chars> <gate>`  after the gate, streams n artifact updates of that many characters each
- `fail`              fails with `boom: cannot do that`
- `message`           answers with a message only (no task)
- `leak`              completes echoing the key header it got (`the key was <header>`), as a hostile agent would;
                      `leak hold <gate>` does so once released (and while held, in its status), `leak error` refuses
                      with the key in the error

`list_tasks=False` makes an agent without ListTasks (it answers method not found; the JS agent, unsupported operation).
`agent.cancel_answer` picks how CancelTask answers: "" cancels (the SDK's own way), "working" answers the task as
it is, still working (a cancel only requested: the task goes on and settles later, as fasta2a's do), "refuse"
refuses it as not cancelable while the task runs. `agent.forget()` drops every task, as an agent restarted with
an in-memory store has (GetTask then answers task-not-found).

Agent options (per server): api key required, bearer-only card, streaming, push, extended card,
message-only, a 0.3 compat server, the card's path, an HTTP+JSON card (`rest`). `change_card(...)` publishes a
different card while the agent runs. Every request is recorded (headers lower-case, message parts and metadata).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from a2a.compat.v0_3.conversions import to_compat_agent_card
from a2a.helpers import (
    new_data_part,
    new_raw_part,
    new_task_from_user_message,
    new_text_message,
    new_text_part,
    new_url_part,
)
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import BasePushNotificationSender, InMemoryPushNotificationConfigStore, InMemoryTaskStore
from a2a.server.tasks.task_updater import TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    APIKeySecurityScheme,
    CancelTaskRequest,
    GetTaskRequest,
    HTTPAuthSecurityScheme,
    ListTasksRequest,
    ListTasksResponse,
    SecurityRequirement,
    SecurityScheme,
    StringList,
    Task,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskState,
)
from a2a.utils.errors import InvalidParamsError, MethodNotFoundError
from a2a.utils.push_url_validator import validate_push_notification_url
from google.protobuf.json_format import MessageToDict
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

PDF_BYTES = b"%PDF-1.4\n% a2aconsole test file\n" + b"x" * 64
# the data part of `data` and the form of `form`, shared with the JS agent (tests/js/agent.js)
_PARTS = json.loads((Path(__file__).parent / "data_parts.json").read_text())
DATA: dict[str, Any] = _PARTS["data"]
FORM: dict[str, Any] = _PARTS["form"]


@dataclass
class Received:
    """One message the agent got: its text, parts (as JSON dicts), metadata and the request headers."""

    text: str
    parts: list[dict[str, Any]]
    metadata: dict[str, Any]
    headers: dict[str, str]
    task_id: str
    context_id: str


@dataclass
class AgentOptions:
    name: str = "Loopback test agent"
    description: str = "A scripted agent for tests"
    key: str | None = None
    bearer_only: bool = False
    streaming: bool = True
    push: bool = True
    extended: bool = False
    message_only: bool = False
    interface_url: str | None = None  # the card's interface URL, when it should point elsewhere (origin tests)
    decoy_interface: str | None = None  # an interface at this URL listed before the agent's own (origin tests)
    drop_streams: bool = False  # answer SubscribeToTask with a stream that ends at once (a dropped stream)
    snapshot_streams: bool = False  # end every SubscribeToTask right after its first event, the task snapshot
    rest: bool = False  # an HTTP+JSON card (the SDK's REST routes under `/rest`) instead of a JSON-RPC one
    legacy: bool = False  # speak protocol 0.3: a legacy card (url, protocolVersion 0.3.0) and the 0.3 JSON-RPC methods
    one_task_per_context: bool = False  # refuse a new task in a context whose `hold` task still runs ("busy")
    chunked: bool = False  # answer without Content-Length (chunked), so a reader learns the size only by reading
    gzip_calls: bool = False  # gzip every JSON-RPC answer, whatever the request's Accept-Encoding says
    naive_times: bool = False  # write every timestamp of a JSON-RPC answer without its zone, as fasta2a's storage does
    safe_push_urls: bool = False  # refuse push URLs on loopback and private addresses (the SDKs' SSRF guard)
    list_tasks: bool = True  # serve ListTasks; False answers it as an agent without it (method not found on this SDK)
    cancel_answer: str = ""  # how CancelTask answers at first ("", "working", "refuse": `TestAgent.cancel_answer`)
    port: int = 0  # serve on this port (0: any free one); an agent started again on its old port is a restart
    card_path: str = "/.well-known/agent-card.json"  # where the card is served (the legacy `/.well-known/agent.json`)
    skills: list[AgentSkill] = field(
        default_factory=lambda: [
            AgentSkill(
                id="echo",
                name="Echo",
                description="Repeats what it is told",
                tags=["test"],
                examples=["hello there", "hello again"],
            ),
            AgentSkill(id="files", name="Files", description="Returns a PDF report", tags=["test"], examples=["file"]),
        ]
    )


class FinishingTaskStore(InMemoryTaskStore):
    """Moves a task of `agent.finishing` to `agent.finished` once this store holds it completed."""

    def __init__(self, agent: TestAgent) -> None:
        super().__init__()
        self.agent = agent

    async def save(self, task: Task, context: ServerCallContext) -> None:
        await super().save(task, context)
        if task.status.state == TaskState.TASK_STATE_COMPLETED and task.id in self.agent.finishing:
            self.agent.finishing.discard(task.id)
            self.agent.finished.append(task.id)


class CancelAnsweringHandler(DefaultRequestHandler):
    """The SDK's handler, with CancelTask answered as `agent.cancel_answer` says, and ListTasks answered method not
    found when the agent's options say it has none."""

    def __init__(self, agent: TestAgent, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.agent = agent

    async def on_cancel_task(self, params: CancelTaskRequest, context: ServerCallContext) -> Task | None:
        answer = self.agent.cancel_answer
        if answer == "refuse":
            raise TaskNotCancelableError(message="this agent cannot cancel the task now")
        if answer == "working":
            task = await self.on_get_task(GetTaskRequest(id=params.id), context)
            if task is None:
                raise TaskNotFoundError
            return task
        return await super().on_cancel_task(params, context)

    async def on_list_tasks(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        if not self.agent.options.list_tasks:
            raise MethodNotFoundError(message="Method not found: ListTasks")
        return await super().on_list_tasks(params, context)


class ScriptedExecutor(AgentExecutor):
    def __init__(self, agent: TestAgent) -> None:
        self.agent = agent

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        headers = dict((context.call_context.state or {}).get("headers", {})) if context.call_context else {}
        msg = context.message
        self.agent.received.append(
            Received(
                text=text,
                parts=[MessageToDict(p) for p in msg.parts] if msg else [],
                metadata=MessageToDict(msg.metadata) if msg else {},
                headers=headers,
                task_id=context.task_id or "",
                context_id=context.context_id or "",
            )
        )
        if self.agent.options.message_only or text.startswith("message"):
            await event_queue.enqueue_event(new_text_message(f"echo: {text}", context_id=context.context_id))
            return
        word, _, rest = text.strip().partition(" ")
        leaked = headers.get("x-api-key") or headers.get("authorization", "")
        if word == "leak" and rest == "error":
            raise InvalidParamsError(message=f"refused: the key was {leaked}")
        task = context.current_task
        if task is None and self.agent.options.one_task_per_context and context.context_id in self.agent.busy:
            raise InvalidParamsError(message=f"context {context.context_id} is busy with another task")
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        up = TaskUpdater(event_queue, task.id, task.context_id)
        if task.status.state in (TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED):
            word, _, gate = text.strip().partition(" ")
            if word == "hold":  # an answer worked on until the test releases the gate
                await up.start_work(up.new_agent_message([new_text_part(f"holding {gate}")]))
                await self.agent.gate(gate).wait()
            answered = [MessageToDict(p.data) for p in msg.parts if p.HasField("data")] if msg else []
            if answered:  # a filled form: its values echoed, as text and as data
                said = f"got form: {json.dumps(answered[0], sort_keys=True, separators=(',', ':'))}"
                await up.add_artifact([new_data_part({"received": answered[0]})], name="form answer")
                await up.complete(up.new_agent_message([new_text_part(said)]))
                return
            await up.add_artifact([new_text_part(f"got answer: {text}")], name="answer")
            await up.complete(up.new_agent_message([new_text_part(f"got answer: {text}")]))
            return
        if word == "slow":
            await up.start_work(up.new_agent_message([new_text_part("working...")]))
            await asyncio.sleep(float(rest or "1"))
            await up.add_artifact([new_text_part("slow result")], name="result")
            await up.complete(up.new_agent_message([new_text_part("slow result")]))
        elif word == "hold":
            await up.start_work(up.new_agent_message([new_text_part(f"holding {rest}")]))
            self.agent.busy.add(task.context_id)
            await self.agent.gate(rest).wait()
            self.agent.busy.discard(task.context_id)
            await up.add_artifact([new_text_part(f"released {rest}")], name="result")
            self.agent.finishing.add(task.id)
            await up.complete(up.new_agent_message([new_text_part(f"released {rest}")]))
        elif word == "steps":
            n, gate, end = rest.split(" ")
            await up.start_work(up.new_agent_message([new_text_part(f"ready for {n} steps")]))
            await self.agent.gate(gate).wait()
            for i in range(1, int(n) + 1):
                await up.start_work(up.new_agent_message([new_text_part(f"working {i}/{n}")]))
            await self.agent.gate(end).wait()
            self.agent.finishing.add(task.id)
            await up.complete(up.new_agent_message([new_text_part(f"{n} steps done")]))
        elif word == "later":
            await up.start_work(up.new_agent_message([new_text_part(f"thinking until {rest}")]))
            await self.agent.gate(rest).wait()
            await up.requires_input(up.new_agent_message([new_text_part("Which colour?")]))
        elif word == "ask":
            await up.requires_input(up.new_agent_message([new_text_part("Which colour?")]))
        elif word == "data":
            await up.add_artifact([new_data_part(DATA)], name="order")
            await up.complete(up.new_agent_message([new_text_part("here is the order")]))
        elif word == "form":
            form = up.new_agent_message([new_text_part("Please fill in the expense form"), new_data_part(FORM)])
            await up.requires_input(form)
        elif word == "rawform":
            await up.requires_input(up.new_agent_message([new_data_part(json.loads(rest))]))
        elif word == "auth":
            await up.requires_auth(up.new_agent_message([new_text_part("Please sign in at the agent")]))
        elif word == "file":
            await up.add_artifact(
                [
                    new_raw_part(PDF_BYTES, media_type="application/pdf", filename="report.pdf"),
                    new_url_part("https://files.example/r.pdf", media_type="application/pdf", filename="r.pdf"),
                ],
                name="report",
            )
            await up.complete(up.new_agent_message([new_text_part("here is the report")]))
        elif word == "bigfile":
            size = int(rest or "1000")
            await up.add_artifact(
                [new_raw_part(b"b" * size, media_type="application/octet-stream", filename="big.bin")], name="big"
            )
            await up.complete(up.new_agent_message([new_text_part("big file attached")]))
        elif word == "leak":
            if rest.startswith("hold "):
                await up.start_work(up.new_agent_message([new_text_part(f"holding (the key was {leaked})")]))
                await self.agent.gate(rest.removeprefix("hold ")).wait()
            await up.add_artifact([new_text_part(f"the key was {leaked}")], name="leak")
            self.agent.finishing.add(task.id)
            await up.complete(up.new_agent_message([new_text_part(f"the key was {leaked}")]))
        elif word == "bigtext":
            size, _, gate = rest.partition(" ")
            if gate:
                await up.start_work(up.new_agent_message([new_text_part("writing a long text")]))
                await self.agent.gate(gate).wait()
            await up.add_artifact([new_text_part(long_text(int(size)))], name="long")
            await up.complete(up.new_agent_message([new_text_part("long text attached")]))
        elif word == "manyfiles":
            files = [
                new_raw_part(f"file {i}\n".encode(), media_type="text/plain", filename="part.txt")
                for i in range(int(rest))
            ]
            await up.add_artifact(files, name="files")
            await up.complete(up.new_agent_message([new_text_part(f"{len(files)} files attached")]))
        elif word == "link":
            await up.add_artifact([new_url_part(rest, filename="click-me")], name="link")
            await up.complete(up.new_agent_message([new_text_part("a link for you")]))
        elif word == "chunks":
            n, size, gate = rest.split(" ")
            await up.start_work(up.new_agent_message([new_text_part("chunks coming")]))
            await self.agent.gate(gate).wait()
            for i in range(int(n)):
                await up.add_artifact([new_text_part(long_text(int(size)))], name=f"chunk-{i + 1}")
            await up.complete(up.new_agent_message([new_text_part("all chunks sent")]))
        elif word == "fail":
            await up.failed(up.new_agent_message([new_text_part("boom: cannot do that")]))
        else:
            await up.add_artifact([new_text_part(f"echo: {text}")], name="result")
            await up.complete(up.new_agent_message([new_text_part(f"echo: {text}")]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        up = TaskUpdater(event_queue, context.task_id, context.context_id)
        await up.cancel(up.new_agent_message([new_text_part("cancelled by request")]))


def long_text(size: int) -> str:
    """`size` characters that read as what they are: `line 1 …`, `line 2 …`, 64 characters a line."""
    line = "{:<63}\n"
    lines = (size + 63) // 64
    return "".join(line.format(f"line {i + 1} of a long text") for i in range(lines))[:size]


class _KeyMiddleware:
    def __init__(self, app: Any, agent: TestAgent) -> None:
        self.app, self.agent = app, agent

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            h = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            self.agent.requests.append((scope["method"], scope["path"], h))
            key = self.agent.options.key
            public = scope["path"] == self.agent.options.card_path
            if key and not public:
                ok = (
                    h.get("authorization") == f"Bearer {key}"
                    if self.agent.options.bearer_only
                    else h.get("x-api-key") == key
                )
                if not ok:
                    await JSONResponse({"error": "unauthorized"}, status_code=401)(scope, receive, send)
                    return
            if self.agent.options.chunked:
                send = _without_length(send)
            if self.agent.options.gzip_calls and scope["method"] == "POST":
                send = _gzipped(send)
            if self.agent.options.naive_times and scope["method"] == "POST":
                send = _naive_times(send)
            if self.agent.card_delay and public:
                await asyncio.sleep(self.agent.card_delay)
            if self.agent.options.rest and scope["path"].startswith("/rest/"):
                self.agent.methods.append(rest_method(scope["method"], scope["path"].removeprefix("/rest")))
                await self._counted(scope, receive, send)
                return
            if scope["method"] == "POST":
                receive = await self._record_method(receive)
                if self.agent.extended_card_gate and self.agent.methods[-1] == "GetExtendedAgentCard":
                    await self.agent.gate(self.agent.extended_card_gate).wait()
                if self.agent.options.drop_streams and self.agent.methods[-1] == "SubscribeToTask":
                    await send(
                        {
                            "type": "http.response.start",
                            "status": 200,
                            "headers": [(b"content-type", b"text/event-stream")],
                        }
                    )
                    await send({"type": "http.response.body", "body": b""})
                    return
                if self.agent.options.snapshot_streams and self.agent.methods[-1] == "SubscribeToTask":
                    send = _first_event_only(send)
                await self._counted(scope, receive, send)
                return
        await self.app(scope, receive, send)

    async def _counted(self, scope: Any, receive: Any, send: Any) -> None:
        """A JSON-RPC call, counted while in flight (streams apart); held at the gate `calls` while `hold_calls`, or
        while its method is one of `hold_methods`."""
        agent = self.agent
        kind = "streams" if agent.methods[-1] in ("SubscribeToTask", "SendStreamingMessage") else "calls"
        agent.in_flight[kind] += 1
        if kind == "calls" and scope.get("client"):
            agent.call_ports.append(scope["client"][1])
        agent.most_in_flight[kind] = max(agent.most_in_flight[kind], agent.in_flight[kind])
        try:
            if (agent.hold_calls and kind == "calls") or agent.methods[-1] in agent.hold_methods:
                await agent.gate("calls").wait()
            await self.app(scope, receive, send)
        finally:
            agent.in_flight[kind] -= 1

    async def _record_method(self, receive: Any) -> Any:
        """Read the JSON-RPC body to record its method (`agent.methods`), then replay it to the app."""
        chunks, more = [], True
        while more:
            msg = await receive()
            chunks.append(msg.get("body", b""))
            more = msg.get("more_body", False) and msg["type"] == "http.request"
        body = b"".join(chunks)
        try:
            method = json.loads(body).get("method", "")
        except (ValueError, AttributeError):
            method = ""
        self.agent.methods.append(method if isinstance(method, str) else "")
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return replay


_REST_METHODS = [
    ("POST", re.compile(r"^/message:send$"), "SendMessage"),
    ("POST", re.compile(r"^/message:stream$"), "SendStreamingMessage"),
    ("GET", re.compile(r"^/tasks/[^/]+:subscribe$"), "SubscribeToTask"),
    ("POST", re.compile(r"^/tasks/[^/]+:subscribe$"), "SubscribeToTask"),
    ("POST", re.compile(r"^/tasks/[^/]+:cancel$"), "CancelTask"),
    ("GET", re.compile(r"^/tasks/[^/:]+$"), "GetTask"),
    ("GET", re.compile(r"^/tasks$"), "ListTasks"),
    ("POST", re.compile(r"^/tasks/[^/]+/pushNotificationConfigs$"), "CreateTaskPushNotificationConfig"),
    ("GET", re.compile(r"^/tasks/[^/]+/pushNotificationConfigs$"), "ListTaskPushNotificationConfigs"),
    ("GET", re.compile(r"^/tasks/[^/]+/pushNotificationConfigs/[^/]+$"), "GetTaskPushNotificationConfig"),
    ("DELETE", re.compile(r"^/tasks/[^/]+/pushNotificationConfigs/[^/]+$"), "DeleteTaskPushNotificationConfig"),
    ("GET", re.compile(r"^/extendedAgentCard$"), "GetExtendedAgentCard"),
]


def rest_method(verb: str, path: str) -> str:
    """The A2A method a REST call stands for (recorded as a JSON-RPC method is), or `REST <verb> <path>`."""
    return next(
        (name for v, pattern, name in _REST_METHODS if v == verb and pattern.match(path)), f"REST {verb} {path}"
    )


def _without_length(send: Any) -> Any:
    """An ASGI `send` that drops Content-Length, so the server answers chunked."""

    async def wrapped(message: Any) -> None:
        if message["type"] == "http.response.start":
            headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"content-length"]
            message = {**message, "headers": headers}
        await send(message)

    return wrapped


def _first_event_only(send: Any) -> Any:
    """An ASGI `send` that ends the response after its first body chunk with data (a stream's first event, the task
    snapshot) and drops what the app sends after."""
    ended = False

    async def wrapped(message: Any) -> None:
        nonlocal ended
        if ended:
            return
        await send(message)
        if message["type"] == "http.response.body" and message.get("body"):
            ended = True
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    return wrapped


_ZONED = re.compile(rb'("timestamp"\s*:\s*"[^"]*?)(?:Z|[+-]\d\d:\d\d)"')


def _naive_times(send: Any) -> Any:
    """An ASGI `send` that writes every timestamp without its zone (`...14.363182`, not `...14.363182Z`), each body
    chunk as it goes (an event of a stream is one chunk); Content-Length dropped, as the body shrinks."""

    async def wrapped(message: Any) -> None:
        if message["type"] == "http.response.start":
            headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"content-length"]
            message = {**message, "headers": headers}
        elif message.get("body"):
            message = {**message, "body": _ZONED.sub(rb'\1"', message["body"])}
        await send(message)

    return wrapped


def _gzipped(send: Any) -> Any:
    """An ASGI `send` that gzips the whole (non-streamed) body and says so in Content-Encoding."""
    start: dict[str, Any] = {}
    body: list[bytes] = []

    async def wrapped(message: Any) -> None:
        if message["type"] == "http.response.start":
            start.update(message)
            return
        body.append(message.get("body", b""))
        if message.get("more_body"):
            return
        data = gzip.compress(b"".join(body))
        headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
        headers += [(b"content-encoding", b"gzip"), (b"content-length", str(len(data)).encode())]
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": data})

    return wrapped


async def _end_leftover_tasks() -> None:
    """Cancel what still runs when the server stops (held work, open streams) and let it finish, so it is not
    reported as "destroyed but pending" in a later test."""
    leftover = {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}
    # Cancelled again until they end: the SDK's task loops catch one cancellation and then wait on their queue
    # (`ActiveTask`, `EventQueueSink.close`), which held a stopped agent's thread (and `stop()`) for 10 s.
    for _ in range(100):
        if not leftover:
            return
        for t in leftover:
            t.cancel()
        _, leftover = await asyncio.wait(leftover, timeout=0.05)


class TestAgent:
    """A running agent. `url` is its base URL; `received` and `requests` record what it got."""

    __test__ = False
    sdk = "python"

    def __init__(self, options: AgentOptions | None = None) -> None:
        self.options = options or AgentOptions()
        self.received: list[Received] = []
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.card_delay = 0.0
        self.extended_card_gate: str | None = None  # GetExtendedAgentCard waits for `release(<gate>)`
        self.methods: list[str] = []  # the JSON-RPC method of every POST, in order (SendMessage, GetTask, ...)
        self.busy: set[str] = set()  # contexts with a running `hold` task
        # ids of `hold`, `leak` and `steps` tasks that completed (a test can wait for one): told by the task store
        # once it holds the task completed, so a GetTask from then on returns the result (the executor's next line
        # comes sooner)
        self.finished: list[str] = []
        self.finishing: set[str] = set()
        # JSON-RPC calls and open streams in flight now, and the most at once; `hold_calls` parks every call
        # (not streams) until `release("calls")`, so a test sees how many a client sends at once
        self.in_flight: Counter[str] = Counter()
        self.most_in_flight: Counter[str] = Counter()
        self.hold_calls = False
        self.hold_methods: set[str] = set()  # calls of these JSON-RPC methods wait for `release("calls")` too
        self.call_ports: list[int] = []  # the client's port of every call: a new port is a new connection
        self.cancel_answer = self.options.cancel_answer
        self.store: FinishingTaskStore | None = None
        self._gates: dict[str, asyncio.Event] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        # proto given explicitly: asyncio sets TCP_NODELAY only on IPPROTO_TCP sockets; without it every
        # keep-alive response waits ~40 ms for a delayed ACK (Nagle)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.options.port))
        self._sock = sock
        self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/"
        self.card = self._card()
        self.server: uvicorn.Server | None = None
        self.thread: threading.Thread | None = None

    def _card(self) -> AgentCard:
        o = self.options
        card = AgentCard(
            name=o.name,
            description=o.description,
            version="1.0.0",
            supported_interfaces=[
                AgentInterface(
                    url=url + "rest" if o.rest else url,
                    protocol_binding="HTTP+JSON" if o.rest else "JSONRPC",
                    protocol_version="0.3.0" if o.legacy else "1.0",
                )
                for url in ([o.decoy_interface] if o.decoy_interface else []) + [o.interface_url or self.url]
            ],
            capabilities=AgentCapabilities(
                streaming=o.streaming, push_notifications=o.push, extended_agent_card=o.extended
            ),
            default_input_modes=["text/plain"],
            default_output_modes=["text/plain"],
            skills=o.skills,
        )
        if o.key:
            if o.bearer_only:
                scheme = SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="bearer"))
                name = "bearer"
            else:
                scheme = SecurityScheme(
                    api_key_security_scheme=APIKeySecurityScheme(location="header", name="X-API-Key")
                )
                name = "apikey"
            card.security_schemes[name].CopyFrom(scheme)
            card.security_requirements.append(SecurityRequirement(schemes={name: StringList(list=[])}))
        return card

    def change_card(
        self,
        *,
        version: str | None = None,
        skills: list[AgentSkill] | None = None,
        streaming: bool | None = None,
        push: bool | None = None,
        description: str | None = None,
    ) -> None:
        """Publish a different card from the next request on (the card route serves `self.card` as it is then),
        as an agent redeployed under the same address would. Not for `legacy` agents (their card is fixed)."""
        assert not self.options.legacy, "a legacy agent's card is serialized once at start"
        if version is not None:
            self.card.version = version
        if skills is not None:
            del self.card.skills[:]
            self.card.skills.extend(skills)
        if streaming is not None:
            self.card.capabilities.streaming = streaming
        if push is not None:
            self.card.capabilities.push_notifications = push
        if description is not None:
            self.card.description = description

    async def push_configs(self, task_id: str) -> list[dict[str, Any]]:
        """The push configs the agent holds for a task, asked through its own A2A API
        (ListTaskPushNotificationConfigs), as the agent's push sender would see them."""
        headers = {"A2A-Version": "1.0"}
        if self.options.key:
            headers["Authorization" if self.options.bearer_only else "X-API-Key"] = (
                f"Bearer {self.options.key}" if self.options.bearer_only else self.options.key
            )
        body = {"jsonrpc": "2.0", "id": 1, "method": "ListTaskPushNotificationConfigs", "params": {"taskId": task_id}}
        async with httpx.AsyncClient() as http:
            resp = await http.post(self.url, json=body, headers=headers)
        answer = resp.json()
        assert "result" in answer, answer
        return list(answer["result"].get("configs", []))

    def gate(self, name: str) -> asyncio.Event:
        ev = self._gates.get(name)
        if ev is None:
            ev = self._gates[name] = asyncio.Event()
        return ev

    def forget(self) -> None:
        """Drop every task the agent holds, as a restart with an in-memory store does (work still running goes on,
        unseen: its gates stay shut unless released)."""
        assert self.store is not None
        impl = self.store._impl
        with impl.lock:  # the store's own lock: safe from the test's thread
            impl.tasks.clear()

    def release(self, name: str) -> None:
        """Let every `hold <name>` task complete (thread-safe; callable from any loop or thread)."""
        assert self._loop is not None
        self._loop.call_soon_threadsafe(lambda: self.gate(name).set())

    def start(self) -> TestAgent:
        o = self.options
        extended = None
        if o.extended:
            extended = AgentCard()
            extended.CopyFrom(self.card)
            extended.description = o.description + " (extended)"
            extended.skills.append(
                AgentSkill(id="secret", name="Secret", description="Only for key holders", tags=["test"])
            )
        push_store = InMemoryPushNotificationConfigStore()
        push_http = httpx.AsyncClient()  # closed when the server stops, so no socket outlives the agent
        self.store = FinishingTaskStore(self)
        handler = CancelAnsweringHandler(
            self,
            agent_executor=ScriptedExecutor(self),
            task_store=self.store,
            agent_card=self.card,
            push_config_store=push_store if o.push else None,
            push_sender=BasePushNotificationSender(push_http, push_store) if o.push else None,
            extended_agent_card=extended,
            push_url_validator=validate_push_notification_url if o.safe_push_urls else None,
        )
        if o.legacy:
            legacy_card = to_compat_agent_card(self.card).model_dump(mode="json", by_alias=True, exclude_none=True)

            async def card_json(request: Any) -> JSONResponse:
                return JSONResponse(legacy_card)

            routes = [Route(o.card_path, card_json)]
            routes += create_jsonrpc_routes(handler, rpc_url="/", enable_v0_3_compat=True)
        else:
            routes = create_agent_card_routes(self.card, card_url=o.card_path) + create_jsonrpc_routes(
                handler, rpc_url="/"
            )
            if o.rest:
                routes += create_rest_routes(handler, path_prefix="/rest")
        app = _KeyMiddleware(Starlette(routes=routes), self)
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))

        serve_in_thread(self, f"agent-{self.port}", _end_leftover_tasks, push_http.aclose)
        return self

    def stop(self) -> None:
        stop_serving(self)


def serve_in_thread(agent: Any, name: str, *after: Callable[[], Awaitable[object]]) -> None:
    """Serve `agent.server` (uvicorn) on `agent._sock` in a thread with an event loop of its own (`agent._loop`), the
    coroutines `after` run on that loop once it stops; back once the server has started."""

    def run() -> None:
        loop = asyncio.new_event_loop()
        agent._loop = loop
        loop.run_until_complete(agent.server.serve(sockets=[agent._sock]))
        for end in after:
            loop.run_until_complete(end())
        loop.close()

    agent.thread = threading.Thread(target=run, daemon=True, name=name)
    agent.thread.start()
    deadline = time.monotonic() + 10
    while not agent.server.started:  # a thread's server: no event to wait on
        if time.monotonic() > deadline or not agent.thread.is_alive():
            raise RuntimeError(f"test agent {name} did not start")
        time.sleep(0.01)


def stop_serving(agent: Any) -> None:
    """Stop what `serve_in_thread` serves, its held tasks released first (again: nothing more, once its thread has
    ended)."""
    ended = agent.thread is not None and not agent.thread.is_alive()
    if agent.server is not None and not ended:
        if agent._loop is not None:
            for ev in list(agent._gates.values()):
                agent._loop.call_soon_threadsafe(ev.set)
        agent.server.should_exit = True
        if agent.thread is not None:
            agent.thread.join(timeout=10)
    agent._sock.close()


def start_agent(**options: Any) -> TestAgent:
    return TestAgent(AgentOptions(**options)).start()
