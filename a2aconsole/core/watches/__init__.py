"""The watches wing: following tasks until their results are delivered. The registry (restore, arm, end, deliver),
a follower per watch (push, subscribe, poll), the watch control the tool uses, push configs, last heard, leases
between workers, and the `ResultDelivery` protocol the web implements."""

from a2aconsole.core.watches.control import PendingFileWatches, WatchControl, same_watch
from a2aconsole.core.watches.delivery import ResultDelivery
from a2aconsole.core.watches.file_watch import WorkspaceFileWatch
from a2aconsole.core.watches.follower import Follower
from a2aconsole.core.watches.heard import News, news_of, parse_at
from a2aconsole.core.watches.lease import HEARTBEAT, RedisLeaseStore, WorkerLeases
from a2aconsole.core.watches.push import (
    PUSH_REMOVAL_TIMEOUT,
    end_push,
    push_json,
    push_task_id,
    remove_push_config,
    token_matches,
)
from a2aconsole.core.watches.push_refusals import PushRefusal
from a2aconsole.core.watches.registry import AWAY, FLUSH_DELAY, WatchRegistry

__all__ = [
    "AWAY",
    "FLUSH_DELAY",
    "Follower",
    "HEARTBEAT",
    "News",
    "PUSH_REMOVAL_TIMEOUT",
    "PendingFileWatches",
    "PushRefusal",
    "RedisLeaseStore",
    "ResultDelivery",
    "WatchControl",
    "WatchRegistry",
    "WorkerLeases",
    "WorkspaceFileWatch",
    "end_push",
    "news_of",
    "parse_at",
    "push_json",
    "push_task_id",
    "remove_push_config",
    "same_watch",
    "token_matches",
]
