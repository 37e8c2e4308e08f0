"""`manage.py runworker a2a-watches`: channels' runworker, which also restores the watches at start.

Channels' worker has no start-up hook, so without this the registry would only start (and restore the
watches of `pending.json`) on the first message that reaches the channel. With `A2ACONSOLE_METRICS_PORT`
it also serves its own `/metrics` and `/healthz` there (`web.metrics_server`): a worker serves no HTTP else.
"""

from __future__ import annotations

from channels.management.commands import runworker
from channels.worker import Worker
from django.conf import settings

from a2aconsole.web.process.metrics_server import start_metrics_server
from a2aconsole.web.process.runtime import WORKER_CHANNEL, start_worker, stop_worker


class WatchingWorker(Worker):
    async def handle(self) -> None:
        if WORKER_CHANNEL in self.channels:
            metrics = start_metrics_server(settings.A2A_METRICS, settings.A2A_METRICS_LISTEN)
            await start_worker()
            try:
                await super().handle()
            finally:
                await stop_worker()
                if metrics is not None:
                    metrics.stop()
        else:
            await super().handle()


class Command(runworker.Command):
    worker_class = WatchingWorker
