"""A host of loopback A2A test agents on Python `a2a-sdk` 0.3 (the last 0.3 release: its own server, request handler,
in-memory task store and push sender), for the pytest fixtures in tests/support/py03_agents.py.

It runs in a virtual environment of its own (tests/py03/.venv, built by `make test` from requirements.txt): 0.3 and
the console's 1.3 cannot share one. One process, one port on 127.0.0.1 (printed as the only line on stdout); agents
are made and dropped over the control API of the JS host (tests/js/agent.js), each served under its own path prefix
`/<id>/` with its own card, task store and recordings, so one process serves every test of a session:

  POST   /_control/agents          {key, bearerOnly, streaming, push, messageOnly, binding, name, cancelAnswer}
                                   -> {id, url}
  GET    /_control/agents/<id>     -> {received, requests, methods, finished, tapped (tasks subscribed to)}
  POST   /_control/agents/<id>/release/<gate>
  POST   /_control/agents/<id>/cancel-answer {answer}   ('' cancels, 'working' answers the task as it is, 'refuse')
  POST   /_control/agents/<id>/restart         (every task forgotten, as by a restart with an in-memory store)
  POST   /_control/agents/<id>/hold-methods {methods}  (calls of these methods (1.0 names) wait for release/calls)
  DELETE /_control/agents/<id>     (releases its gates, ends its running work, drops it)

Methods are recorded under their 1.0 names (`tasks/resubscribe` is `SubscribeToTask`), as the other hosts do, so a
test counts them the same way on every implementation. The command language is the Python test agent's
(tests/support/agents.py): `hello ...` echoes, `slow N`, `hold <gate>`, `steps <n> <gate> <end>`, `ask` (an answer
`hold <gate>` works until released), `later <gate>` (works until the gate, then asks), `auth`, `data`, `file`,
`fail`, `message`. It exits when stdin closes.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2ARESTFastAPIApplication, A2AStarletteApplication
from a2a.server.events import EventQueue, InMemoryQueueManager
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    APIKeySecurityScheme,
    DataPart,
    FilePart,
    FileWithBytes,
    FileWithUri,
    HTTPAuthSecurityScheme,
    In,
    Part,
    SecurityScheme,
    Task,
    TaskIdParams,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskQueryParams,
    TaskState,
    TextPart,
)
from a2a.utils import new_agent_text_message, new_task
from a2a.utils.errors import ServerError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

PDF_BYTES = b"%PDF-1.4\n% a2aconsole test file\n" + b"x" * 64
DATA = json.loads((Path(__file__).resolve().parents[1] / "support" / "data_parts.json").read_text())["data"]
CARD_PATH = "/.well-known/agent-card.json"
INTERRUPTED = (TaskState.input_required, TaskState.auth_required)

# the 0.3 JSON-RPC methods under their 1.0 names
METHODS = {
    "message/send": "SendMessage",
    "message/stream": "SendStreamingMessage",
    "tasks/get": "GetTask",
    "tasks/cancel": "CancelTask",
    "tasks/resubscribe": "SubscribeToTask",
    "tasks/pushNotificationConfig/set": "CreateTaskPushNotificationConfig",
    "tasks/pushNotificationConfig/get": "GetTaskPushNotificationConfig",
    "tasks/pushNotificationConfig/list": "ListTaskPushNotificationConfigs",
    "tasks/pushNotificationConfig/delete": "DeleteTaskPushNotificationConfig",
    "agent/getAuthenticatedExtendedCard": "GetExtendedAgentCard",
}


def rest_method(verb: str, path: str) -> str:
    """The A2A method a 0.3 REST call (`/v1/...`) stands for, or `REST <verb> <path>`."""
    p = path.removeprefix("/v1")
    if p == "/message:send":
        return "SendMessage"
    if p == "/message:stream":
        return "SendStreamingMessage"
    if p.endswith(":subscribe"):
        return "SubscribeToTask"
    if p.endswith(":cancel"):
        return "CancelTask"
    if "/pushNotificationConfigs" in p:
        if verb == "POST":
            return "CreateTaskPushNotificationConfig"
        if verb == "DELETE":
            return "DeleteTaskPushNotificationConfig"
        return "GetTaskPushNotificationConfig" if p.count("/") > 3 else "ListTaskPushNotificationConfigs"
    if verb == "GET" and p.startswith("/tasks/"):
        return "GetTask"
    return f"REST {verb} {path}"


def text_part(text: str) -> Part:
    return Part(root=TextPart(text=text))


class FinishingTaskStore(InMemoryTaskStore):
    """Moves a task of `agent.finishing` to `agent.finished` once this store holds it completed."""

    def __init__(self, agent: TestAgent) -> None:
        super().__init__()
        self.agent = agent

    async def save(self, task: Task, context: Any = None) -> None:
        await super().save(task, context)
        if task.status.state == TaskState.completed and task.id in self.agent.finishing:
            self.agent.finishing.discard(task.id)
            self.agent.finished.append(task.id)


class TapRecordingQueueManager(InMemoryQueueManager):
    """Records the tasks whose events a subscription now receives (`agent.tapped`): a 0.3 subscription sends nothing
    until the task's next event, so a test waits for this before the task moves on."""

    def __init__(self, agent: TestAgent) -> None:
        super().__init__()
        self.agent = agent

    async def tap(self, task_id: str) -> EventQueue | None:
        queue = await super().tap(task_id)
        if queue is not None:
            self.agent.tapped.append(task_id)
        return queue


class CancelAnsweringHandler(DefaultRequestHandler):
    """The SDK's handler, with tasks/cancel answered as `agent.cancel_answer` says."""

    def __init__(self, agent: TestAgent, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.agent = agent

    async def on_cancel_task(self, params: TaskIdParams, context: Any = None) -> Task | None:
        if self.agent.cancel_answer == "refuse":
            raise ServerError(error=TaskNotCancelableError(message="this agent cannot cancel the task now"))
        if self.agent.cancel_answer == "working":
            task = await self.on_get_task(TaskQueryParams(id=params.id), context)
            if task is None:
                raise ServerError(error=TaskNotFoundError())
            return task
        return await super().on_cancel_task(params, context)


class ScriptedExecutor(AgentExecutor):
    def __init__(self, agent: TestAgent) -> None:
        self.agent = agent

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        agent = self.agent
        text = context.get_user_input()
        msg = context.message
        headers = dict((context.call_context.state or {}).get("headers", {})) if context.call_context else {}
        agent.received.append(
            {
                "text": text,
                "parts": [p.model_dump(mode="json", exclude_none=True) for p in msg.parts] if msg else [],
                "metadata": (msg.metadata or {}) if msg else {},
                "headers": headers,
                "taskId": context.task_id or "",
                "contextId": context.context_id or "",
            }
        )
        if agent.options.get("messageOnly") or text.startswith("message"):
            await event_queue.enqueue_event(new_agent_text_message(f"echo: {text}", context_id=context.context_id))
            return
        task = context.current_task
        if task is None:
            task = new_task(msg)
            await event_queue.enqueue_event(task)
        up = TaskUpdater(event_queue, task.id, task.context_id)

        def said(t: str) -> Any:
            return up.new_agent_message([text_part(t)])

        word, _, rest = text.strip().partition(" ")
        if task.status.state in INTERRUPTED:
            if word == "hold":  # an answer worked on until the test releases the gate
                await up.start_work(said(f"holding {rest}"))
                await agent.gate(rest).wait()
            await up.add_artifact([text_part(f"got answer: {text}")], name="answer")
            await up.complete(said(f"got answer: {text}"))
            return
        if word == "slow":
            await up.start_work(said("working..."))
            await asyncio.sleep(float(rest or "1"))
            await up.add_artifact([text_part("slow result")], name="result")
            await up.complete(said("slow result"))
        elif word == "hold":
            await up.start_work(said(f"holding {rest}"))
            await agent.gate(rest).wait()
            await up.add_artifact([text_part(f"released {rest}")], name="result")
            agent.finishing.add(task.id)
            await up.complete(said(f"released {rest}"))
        elif word == "steps":
            n, gate, end = rest.split(" ")
            await up.start_work(said(f"ready for {n} steps"))
            await agent.gate(gate).wait()
            for i in range(1, int(n) + 1):
                await up.start_work(said(f"working {i}/{n}"))
            await agent.gate(end).wait()
            agent.finishing.add(task.id)
            await up.complete(said(f"{n} steps done"))
        elif word == "later":
            await up.start_work(said(f"thinking until {rest}"))
            await agent.gate(rest).wait()
            await up.requires_input(said("Which colour?"))
        elif word == "ask":
            await up.requires_input(said("Which colour?"))
        elif word == "auth":
            await up.requires_auth(said("Please sign in at the agent"))
        elif word == "data":
            await up.add_artifact([Part(root=DataPart(data=DATA))], name="order")
            await up.complete(said("here is the order"))
        elif word == "file":
            pdf = FileWithBytes(
                bytes=base64.b64encode(PDF_BYTES).decode(), mime_type="application/pdf", name="report.pdf"
            )
            link = FileWithUri(uri="https://files.example/r.pdf", mime_type="application/pdf", name="r.pdf")
            await up.add_artifact([Part(root=FilePart(file=pdf)), Part(root=FilePart(file=link))], name="report")
            await up.complete(said("here is the report"))
        elif word == "fail":
            await up.failed(said("boom: cannot do that"))
        else:
            await up.add_artifact([text_part(f"echo: {text}")], name="result")
            await up.complete(said(f"echo: {text}"))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        up = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await up.cancel(up.new_agent_message([text_part("cancelled by request")]))


class TestAgent:
    """One agent of the host: its card, handler, app (JSON-RPC or 0.3 REST) and recordings."""

    def __init__(self, agent_id: str, base: str, options: dict[str, Any]) -> None:
        self.id, self.options = agent_id, options
        self.url = f"{base}/{agent_id}/"
        self.received: list[dict[str, Any]] = []
        self.requests: list[list[Any]] = []
        self.methods: list[str] = []
        self.finished: list[str] = []
        self.finishing: set[str] = set()
        self.tapped: list[str] = []
        self.hold_methods: set[str] = set()  # calls of these methods wait for `release("calls")`
        self.gates: dict[str, asyncio.Event] = {}
        self.cancel_answer = options.get("cancelAnswer") or ""
        self.rest = options.get("binding") == "HTTP+JSON"
        self.push_http = httpx.AsyncClient()
        self.store = FinishingTaskStore(self)
        push_store = InMemoryPushNotificationConfigStore()
        push = options.get("push", True) is not False
        self.handler = CancelAnsweringHandler(
            self,
            agent_executor=ScriptedExecutor(self),
            task_store=self.store,
            queue_manager=TapRecordingQueueManager(self),
            push_config_store=push_store if push else None,
            push_sender=BasePushNotificationSender(self.push_http, push_store) if push else None,
        )
        card = self.card(push)
        if self.rest:
            self.app: Any = A2ARESTFastAPIApplication(card, self.handler).build(agent_card_url=CARD_PATH)
        else:
            self.app = A2AStarletteApplication(card, self.handler).build(agent_card_url=CARD_PATH, rpc_url="/")

    def card(self, push: bool) -> AgentCard:
        o = self.options
        schemes: dict[str, SecurityScheme] = {}
        security: list[dict[str, list[str]]] = []
        if o.get("key"):
            if o.get("bearerOnly"):
                schemes["bearer"] = SecurityScheme(root=HTTPAuthSecurityScheme(scheme="bearer"))
                security.append({"bearer": []})
            else:
                schemes["apikey"] = SecurityScheme(root=APIKeySecurityScheme(in_=In.header, name="X-API-Key"))
                security.append({"apikey": []})
        return AgentCard(
            name=o.get("name") or "Loopback test agent",
            description=o.get("description") or "A scripted agent for tests",
            url=self.url,
            version="1.0.0",
            protocol_version="0.3.0",
            preferred_transport="HTTP+JSON" if self.rest else "JSONRPC",
            capabilities=AgentCapabilities(streaming=o.get("streaming", True) is not False, push_notifications=push),
            default_input_modes=["text/plain"],
            default_output_modes=["text/plain"],
            skills=[
                AgentSkill(
                    id="echo",
                    name="Echo",
                    description="Repeats what it is told",
                    tags=["test"],
                    examples=["hello there", "hello again"],
                ),
                AgentSkill(
                    id="files", name="Files", description="Returns a PDF report", tags=["test"], examples=["file"]
                ),
            ],
            security_schemes=schemes or None,
            security=security or None,
        )

    def gate(self, name: str) -> asyncio.Event:
        return self.gates.setdefault(name, asyncio.Event())

    def key_ok(self, headers: dict[str, str]) -> bool:
        key = self.options["key"]
        if self.options.get("bearerOnly"):
            return headers.get("authorization") == f"Bearer {key}"
        return headers.get("x-api-key") == key

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Record the request (and its method), refuse it without the key (401), then hand it to the SDK's app."""
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        path, verb = scope["path"], scope["method"]
        self.requests.append([verb, path, headers])
        if self.options.get("key") and path != CARD_PATH and not self.key_ok(headers):
            await JSONResponse({"error": "unauthorized"}, status_code=401)(scope, receive, send)
            return
        if self.rest and path.startswith("/v1/"):
            self.methods.append(rest_method(verb, path))
        elif verb == "POST":
            body = b""
            more = True
            while more:
                message = await receive()
                body += message.get("body", b"")
                more = message.get("more_body", False)
            try:
                method = json.loads(body).get("method", "")
            except (ValueError, AttributeError):
                method = ""
            self.methods.append(METHODS.get(method, method) if isinstance(method, str) else "")
            replayed, original = False, receive

            async def replay() -> Any:
                nonlocal replayed
                if not replayed:
                    replayed = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await original()

            receive = replay
            if self.methods[-1] in self.hold_methods:
                await self.gate("calls").wait()
        await self.app(scope, receive, send)

    def restart(self) -> None:
        self.store.tasks.clear()

    async def stop(self) -> None:
        for ev in self.gates.values():
            ev.set()
        for running in list(self.handler._running_agents.values()):
            running.cancel()
        await self.push_http.aclose()

    def snapshot(self) -> dict[str, Any]:
        return {
            "received": self.received,
            "requests": self.requests,
            "methods": self.methods,
            "finished": self.finished,
            "tapped": self.tapped,
        }


class Host:
    """The control API and every agent under its prefix."""

    def __init__(self) -> None:
        self.agents: dict[str, TestAgent] = {}
        self.base = ""
        self.control = Starlette(
            routes=[
                Route("/agents", self.make, methods=["POST"]),
                Route("/agents/{id}", self.state, methods=["GET"]),
                Route("/agents/{id}", self.drop, methods=["DELETE"]),
                Route("/agents/{id}/release/{gate}", self.release, methods=["POST"]),
                Route("/agents/{id}/cancel-answer", self.set_cancel_answer, methods=["POST"]),
                Route("/agents/{id}/restart", self.restart, methods=["POST"]),
                Route("/agents/{id}/hold-methods", self.set_hold_methods, methods=["POST"]),
            ]
        )

    async def make(self, request: Request) -> JSONResponse:
        body = await request.json()
        agent_id = body.get("id") or uuid.uuid4().hex[:12]
        agent = self.agents[agent_id] = TestAgent(agent_id, self.base, body)
        return JSONResponse({"id": agent_id, "url": agent.url})

    def known(self, request: Request) -> TestAgent | JSONResponse:
        agent = self.agents.get(request.path_params["id"])
        return agent if agent is not None else JSONResponse({"error": "no such agent"}, status_code=404)

    async def state(self, request: Request) -> JSONResponse:
        agent = self.known(request)
        return agent if isinstance(agent, JSONResponse) else JSONResponse(agent.snapshot())

    async def drop(self, request: Request) -> JSONResponse:
        agent = self.known(request)
        if isinstance(agent, JSONResponse):
            return agent
        del self.agents[agent.id]
        await agent.stop()
        return JSONResponse({"ok": True})

    async def release(self, request: Request) -> JSONResponse:
        agent = self.known(request)
        if isinstance(agent, JSONResponse):
            return agent
        agent.gate(request.path_params["gate"]).set()
        return JSONResponse({"ok": True})

    async def set_cancel_answer(self, request: Request) -> JSONResponse:
        agent = self.known(request)
        if isinstance(agent, JSONResponse):
            return agent
        agent.cancel_answer = (await request.json()).get("answer") or ""
        return JSONResponse({"ok": True})

    async def set_hold_methods(self, request: Request) -> JSONResponse:
        agent = self.known(request)
        if isinstance(agent, JSONResponse):
            return agent
        agent.hold_methods = set((await request.json()).get("methods") or [])
        return JSONResponse({"ok": True})

    async def restart(self, request: Request) -> JSONResponse:
        agent = self.known(request)
        if isinstance(agent, JSONResponse):
            return agent
        agent.restart()
        return JSONResponse({"ok": True})

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        first, _, rest = scope["path"].lstrip("/").partition("/")
        inner = {**scope, "path": "/" + rest, "raw_path": ("/" + rest).encode()}
        if first == "_control":
            await self.control(inner, receive, send)
            return
        agent = self.agents.get(first)
        if agent is None:
            await JSONResponse({"error": "no such agent"}, status_code=404)(scope, receive, send)
            return
        await agent(inner, receive, send)


def main() -> None:
    host = Host()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", int(os.environ.get("A2A_TEST_PORT") or 0)))
    port = sock.getsockname()[1]
    host.base = f"http://127.0.0.1:{port}"
    server = uvicorn.Server(uvicorn.Config(host, log_level="warning", lifespan="off"))

    def watch_stdin() -> None:  # the test run closed our stdin (or died): stop
        sys.stdin.buffer.read()
        server.should_exit = True

    async def serve() -> None:
        threading.Thread(target=watch_stdin, daemon=True).start()
        sys.stdout.write(f"{port}\n")
        sys.stdout.flush()
        await server.serve(sockets=[sock])
        for agent in list(host.agents.values()):
            await agent.stop()

    asyncio.run(serve())


if __name__ == "__main__":
    main()
