"""The watch records of a workspace (`pending.json` and its journal): a small database with one door.

`read(ws)` reads them; `transaction(ws)` (or `transaction_sync`) changes them under the workspace lock through
a `PendingTx`. Nothing else opens these files.
"""

from a2aconsole.core.pending.changes import PendingTx
from a2aconsole.core.pending.door import PendingFile, read, stamp, transaction, transaction_sync
from a2aconsole.core.pending.paths import file_path, journal_path
from a2aconsole.core.pending.records import WatchRecord

__all__ = [
    "PendingFile",
    "PendingTx",
    "WatchRecord",
    "file_path",
    "journal_path",
    "read",
    "stamp",
    "transaction",
    "transaction_sync",
]
