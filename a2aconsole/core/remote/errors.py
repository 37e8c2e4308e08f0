"""One map of the SDK's and httpx's failures to ours: a `RemoteError` a person can read, naming the agent and
what to do, never holding a key (URLs in an SDK's text are masked)."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Iterator

import httpx
from a2a.client import A2AClientError, A2AClientTimeoutError, AgentCardResolutionError
from a2a.types import TaskState
from a2a.utils.errors import (
    A2AError,
    InvalidParamsError,
    MethodNotFoundError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

from a2aconsole.core.errors import A2AConsoleError
from a2aconsole.core.remote.answer_budget import AnswerEncoded, AnswerTooLarge, megabytes
from a2aconsole.core.remote.log_masking import mask_urls


class RemoteError(A2AConsoleError):
    """A remote call failed. `kind` is one of: network, timeout, auth, card, not_found, not_cancelable,
    terminal, unsupported, protocol, rpc, too_big (an answer over the byte budget), not_listing (an agent without
    ListTasks: `not_listing`)."""

    def __init__(self, kind: str, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status


@contextlib.contextmanager
def remote_errors(agent: str, action: str) -> Iterator[None]:
    """Any failure of the block raised as a RemoteError naming the agent and the action (`translate`); a cancel
    stays a cancel."""
    try:
        yield
    except Exception as e:
        raise translate(e, agent, action) from None


def translate(exc: BaseException, agent: str, action: str) -> RemoteError:
    """Turn an SDK or network failure into a readable RemoteError naming the agent and what to do."""
    if isinstance(exc, RemoteError):
        return exc
    if action == LIST_TASKS:
        refused = not_listing(exc, agent)
        if refused is not None:
            return refused
    over = next((e for e in (exc, exc.__cause__) if isinstance(e, AnswerTooLarge | AnswerEncoded)), None)
    if isinstance(over, AnswerTooLarge):
        return RemoteError(
            "too_big",
            f'agent "{agent}" answered more than {megabytes(over.limit)} to {action}: the answer was not read and '
            "nothing of it was kept; ask the agent for less (files by link), or raise A2AClient__MaxResponseBytes",
        )
    if isinstance(over, AnswerEncoded):
        return RemoteError(
            "protocol",
            f'agent "{agent}" answered {action} compressed ({over.encoding}) though asked for no compression; '
            "its answer was not read",
        )
    if isinstance(exc, A2AClientTimeoutError | asyncio.TimeoutError | httpx.TimeoutException):
        return RemoteError("timeout", f'agent "{agent}" did not answer in time ({action}); try again later')
    if isinstance(exc, AgentCardResolutionError):
        status = exc.status_code
        if status in (401, 403):
            return RemoteError(
                "auth",
                f'agent "{agent}" refused to show its card (HTTP {status}); check its key in agents.json',
                status=status,
            )
        if status is not None:
            return RemoteError(
                "card", f'agent "{agent}": card fetch failed with HTTP {status}; check its url', status=status
            )
        if isinstance(exc.__cause__, httpx.RequestError) or "Network communication" in str(exc):
            return RemoteError(
                "network", f'agent "{agent}" is unreachable (its card could not be fetched); is it running?'
            )
        return RemoteError("card", f'agent "{agent}": could not read its card ({short(exc)}); check its url')
    cause = exc.__cause__
    # a REST error body the SDK read (TaskNotFound, ...) also has the HTTP error as its cause: the error wins
    mapped = isinstance(exc, A2AError) and not isinstance(exc, A2AClientError)
    if isinstance(cause, httpx.HTTPStatusError) and not mapped:
        status = cause.response.status_code
        if status in (401, 403):
            return RemoteError(
                "auth",
                f'agent "{agent}" refused the request (HTTP {status}): the key in agents.json is missing or wrong',
                status=status,
            )
        return RemoteError("network", f'agent "{agent}" answered HTTP {status} to {action}', status=status)
    if isinstance(cause, httpx.RequestError) or isinstance(exc, httpx.RequestError):
        return RemoteError("network", f'agent "{agent}" is unreachable ({type(cause or exc).__name__}); is it running?')
    if isinstance(exc, TaskNotFoundError):
        return RemoteError("not_found", f'agent "{agent}" does not know that task (it may have been deleted)')
    if isinstance(exc, TaskNotCancelableError):
        return RemoteError("not_cancelable", f'agent "{agent}": the task can no longer be canceled')
    if isinstance(exc, UnsupportedOperationError):
        msg = exc.message if hasattr(exc, "message") else str(exc)
        kind = "terminal" if "terminal" in str(msg).lower() else "unsupported"
        return RemoteError(kind, f'agent "{agent}" refused {action}: {short(msg)}')
    if isinstance(exc, InvalidParamsError) and "terminal state" in str(exc).lower():
        # a2a-sdk 0.3 refuses a subscription to a settled task so ("Task … is in terminal state: completed")
        return RemoteError("terminal", f'agent "{agent}" refused {action}: {short(exc)}')
    if isinstance(exc, A2AClientError):
        return RemoteError("protocol", f'agent "{agent}": {action} failed: {short(exc)}')
    if isinstance(exc, A2AError):
        code = type(exc).__name__.removesuffix("Error")
        return RemoteError("rpc", f'agent "{agent}" answered an error to {action}: {code}: {short(exc)}')
    if isinstance(exc, ValueError) and "transport" in str(exc):
        return RemoteError("protocol", f'agent "{agent}": its card offers no transport we speak (JSON-RPC, REST)')
    return RemoteError("protocol", f'agent "{agent}": {action} failed: {type(exc).__name__}: {short(exc)}')


LIST_TASKS = "task list"  # ListTasks' action name: its refusals say the agent does not list its tasks
DOES_NOT_LIST = "does not list its tasks"


def not_listing(exc: BaseException, agent: str) -> RemoteError | None:
    """The RemoteError of an agent that has no ListTasks, or None when `exc` says something else: a 0.3 agent (the
    SDK refuses the call before sending it), or one answering method-not-found or unsupported-operation."""
    if isinstance(exc, NotImplementedError):
        why = "it speaks A2A 0.3, which has no ListTasks (1.0 added it)"
    elif isinstance(exc, MethodNotFoundError):
        why = "it answers ListTasks with method not found"
    elif isinstance(exc, UnsupportedOperationError):
        msg = exc.message if hasattr(exc, "message") else str(exc)
        why = f"it answers ListTasks with unsupported operation ({short(msg)})"
    else:
        return None
    return RemoteError("not_listing", f'agent "{agent}" {DOES_NOT_LIST}: {why}')


_STATE_ENUM = re.compile(r"\bTASK_STATE_[A-Z_]+\b")
_STATE_NUMBER = re.compile(r"\b(state\s*[(:]\s*)(\d{1,2})\b", re.IGNORECASE)


def _state_word(value: str | int) -> str | None:
    """The spec's name of a TaskState given as its enum name or number (`completed`), or None."""
    try:
        name = TaskState.Name(int(value)) if isinstance(value, int) or value.isdigit() else value
    except ValueError:
        return None
    return name.removeprefix("TASK_STATE_").lower().replace("_", "-")


def name_states(text: str) -> str:
    """An SDK's error text with task states named as the spec does: `terminal state (3)` (@a2a-js/sdk) and
    `terminal state: TASK_STATE_COMPLETED` (a2a-sdk) both say `completed`."""
    text = _STATE_ENUM.sub(lambda m: _state_word(m.group(0)) or m.group(0), text)
    return _STATE_NUMBER.sub(lambda m: m.group(1) + (_state_word(m.group(2)) or m.group(2)), text)


def short(x: object, limit: int = 300) -> str:
    """A one-line excerpt of an error text, URLs masked (SDK errors quote the card URL, key and all), states
    named (SDKs print their enum's numbers)."""
    s = name_states(mask_urls(" ".join(str(x).split())))
    return s if len(s) <= limit else s[: limit - 1] + "…"
