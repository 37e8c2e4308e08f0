"""What the benchmarks' stand-in agents share: a task store in memory (counting GetTask reads, listing as the SDK's
own in-memory store does) and an executor that does nothing (the bench sets each task's state itself)."""

from __future__ import annotations

from typing import Any

from a2a.server.agent_execution import AgentExecutor
from a2a.server.tasks import TaskStore
from a2a.server.tasks.inmemory_task_store import _InMemoryTaskStoreImpl
from a2a.types import Task


class Store(TaskStore):
    def __init__(self) -> None:
        self.tasks: dict[str, Task] = {}
        self.gets = 0

    async def save(self, task: Task, context: Any = None) -> None:
        self.tasks[task.id] = task

    async def get(self, task_id: str, context: Any = None) -> Task | None:
        self.gets += 1
        return self.tasks.get(task_id)

    async def delete(self, task_id: str, context: Any = None) -> None:
        self.tasks.pop(task_id, None)

    async def list(self, params: Any, context: Any = None) -> Any:
        """ListTasks as the SDK's in-memory store answers it (filters, order, pages), over these tasks."""
        listing = _InMemoryTaskStoreImpl(lambda context: "")
        listing.tasks = {"": self.tasks}
        return await listing.list(params, context)


class Idle(AgentExecutor):
    async def execute(self, context: Any, event_queue: Any) -> None:
        return None

    async def cancel(self, context: Any, event_queue: Any) -> None:
        return None
