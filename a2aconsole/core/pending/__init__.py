"""The watch records of a workspace (`pending.json` and its journal): a small database with one door.

`read(ws)` reads them; `transaction(ws)` (or `transaction_sync`) changes them under the workspace lock through
a `PendingTx`. Nothing else opens these files.
"""

from a2aconsole.core.pending.batch import PendingBatcher
from a2aconsole.core.pending.changes import PendingTx
from a2aconsole.core.pending.door import PendingFile, read, stamp, transaction, transaction_sync
from a2aconsole.core.pending.keys import watch_key
from a2aconsole.core.pending.paths import file_path, journal_path
from a2aconsole.core.pending.records import WatchRecord
from a2aconsole.core.pending.sending import clear_sending, is_mine, is_sending, mark_sending, sender_alive
from a2aconsole.core.pending.store import STORE

__all__ = [
    "PendingBatcher",
    "PendingFile",
    "PendingTx",
    "STORE",
    "WatchRecord",
    "clear_sending",
    "file_path",
    "is_mine",
    "is_sending",
    "journal_path",
    "mark_sending",
    "read",
    "sender_alive",
    "stamp",
    "transaction",
    "transaction_sync",
    "watch_key",
]
