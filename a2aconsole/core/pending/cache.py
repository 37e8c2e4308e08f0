"""What this process knows of one `pending.json` while the file is unchanged on disk (`PendingStore`'s)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from a2aconsole.core.files import Signature
from a2aconsole.core.pending.keys import WatchKeys
from a2aconsole.core.pending.records import WatchRecord

# a record, its JSON, its text in the file, and whether it is plain (only plain records' JSON can be trusted
# to stay as it was: a nested value may change in place behind the kept copy)
Text = tuple[WatchRecord, dict[str, Any], str, bool]
# what a journal does to the file's records: added (in order), removed (ids), replaced
Overlay = tuple[dict[str, WatchRecord], set[str], dict[str, WatchRecord]]


@dataclass
class Cache:
    """What this process knows of one `pending.json`: its records and their index (in file order), and their
    texts, one for one (None when not known, or when ids repeat), and which of those are not plain."""

    sig: Signature | None
    records: list[WatchRecord]
    index: dict[str, WatchRecord]
    texts: dict[str, Text] | None = None
    volatile: frozenset[str] = frozenset()
    # the journal as this process last read or wrote it, and what it does to the records (added, removed,
    # replaced): a send parses no line, only lines another process appended since
    journal: bytes = b""
    journal_sig: Signature | None = None  # its signature then (None: not known)
    overlay: Overlay = ({}, set(), {})
    journal_dirty: bool = False
    keys: WatchKeys | None = None  # `records` by watch key: built when first asked, then kept in step by `_fold`
    # the records' push tokens (the scrubber's): built when first asked, then kept in step by `_fold` with how
    # many records hold each (`token_counts`: None until a fold moved a token)
    tokens: frozenset[str] | None = None
    token_counts: Counter[str] | None = None

    def push_tokens(self) -> frozenset[str]:
        if self.tokens is None:
            self.tokens = frozenset(r.push_token for r in self.records if isinstance(r.push_token, str))
        return self.tokens

    def watch_keys(self) -> WatchKeys | None:
        """The records by watch key (None when ids repeat: the index holds one record per id)."""
        if self.keys is None and len(self.index) == len(self.records):
            self.keys = WatchKeys(self.records)
        return self.keys
