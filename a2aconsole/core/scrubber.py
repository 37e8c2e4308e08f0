"""The scrubber: a workspace's agent keys and push tokens masked out of everything the core sends out.

An agent may echo the key it was sent (in its answer, an error, a task id) and it knows its push token.
The tool's results and errors, the watches' delivered texts and every event go through one `Scrubber`
at the boundary, which replaces each secret with `***`, and cuts the workspace's absolute path out of
file names (`<workspace>/.volcanic/a2a/agents.json` -> `.volcanic/a2a/agents.json`): answers go to API
hosts and models, which need neither.

Secrets shorter than MIN_SECRET characters are not masked: they cannot be told from ordinary words (a
1-character key would mask every such letter of every answer). Use long random keys.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from a2aconsole.core import pending
from a2aconsole.core.events import Event
from a2aconsole.core.files import Signature, Workspace, file_signature
from a2aconsole.core.pending import STORE

MASK = "***"
MIN_SECRET = 8
# Up to this many secrets, one compiled alternation (C speed). Beyond (thousands of push tokens), an index of
# their first MIN_SECRET characters: built in 5 ms for 10,000 tokens where an Aho-Corasick automaton
# (pyahocorasick) took 150 ms, and the set is rebuilt after every change of pending.json.
_REGEX_MAX = 64
# A secret made only of these (push tokens, most keys) lies within a run of them in any text that holds it: a
# regex finds the runs long enough at C speed, and only their positions are looked up in the index (a 64 KB
# answer against 5,000 push tokens: 7.7 ms when every position was looked up).
_WORD = re.compile(r"[A-Za-z0-9_-]+")


class _Index:
    """Secrets by their first MIN_SECRET characters: every position of a text where one starts (the longest)."""

    def __init__(self, ordered: list[str]) -> None:
        self._by_prefix: dict[str, list[str]] = {}
        for s in ordered:  # longest first, and so in each list
            self._by_prefix.setdefault(s[:MIN_SECRET], []).append(s)

    def updated(self, gone: Iterable[str], came: Iterable[str]) -> _Index:
        """A new index without `gone` and with `came` (this one unchanged: a scrubber in use keeps working)."""
        new = object.__new__(_Index)
        new._by_prefix = by_prefix = dict(self._by_prefix)
        for s in gone:
            kept = [c for c in by_prefix.get(s[:MIN_SECRET], ()) if c != s]
            if kept:
                by_prefix[s[:MIN_SECRET]] = kept
            else:
                by_prefix.pop(s[:MIN_SECRET], None)
        for s in came:
            listed = list(by_prefix.get(s[:MIN_SECRET], ()))
            at = next((i for i, c in enumerate(listed) if len(c) < len(s)), len(listed))  # longest first
            listed.insert(at, s)
            by_prefix[s[:MIN_SECRET]] = listed
        return new

    def spans(self, s: str, start: int, end: int) -> Iterator[tuple[int, int]]:
        index = self._by_prefix
        for i in range(start, end - MIN_SECRET + 1):
            candidates = index.get(s[i : i + MIN_SECRET])
            if candidates:
                hit = next((c for c in candidates if s.startswith(c, i)), None)
                if hit is not None:
                    yield i, i + len(hit)


class Scrubber:
    """Masks a fixed set of secrets and strips one workspace path, in strings and nested JSON-like values."""

    def __init__(self, secrets: Iterable[str] = (), root: Path | None = None) -> None:
        self.secrets = frozenset(secrets)
        self._root = root
        found = {s for s in self.secrets if _maskable(s)}
        ordered = sorted(found, key=len, reverse=True)  # longest first: a key containing another masks whole
        self._count = len(ordered)
        self._longest = len(ordered[0]) if ordered else 0
        self._regex = _alternation(ordered) if 0 < len(ordered) <= _REGEX_MAX else None
        self._words: _Index | None = None  # many secrets: those of word characters, found within runs of them
        self._runs: re.Pattern[str] | None = None
        self._word_lengths: Counter[int] = Counter()  # how many word secrets of each length (the runs' shortest)
        self._others: re.Pattern[str] | _Index | None = None  # ... and the others, anywhere
        self._longest_other = 0
        if len(ordered) > _REGEX_MAX:
            words: list[str] = []
            others: list[str] = []
            for s in ordered:  # both stay longest first
                (words if _WORD.fullmatch(s) else others).append(s)
            if words:
                self._words = _Index(words)
                self._word_lengths = Counter(map(len, words))
                self._runs = _runs(len(words[-1]))
            if others:
                self._others = _lookahead(others) if len(others) <= _REGEX_MAX else _Index(others)
                self._longest_other = len(others[0])
        top = str(root) if root is not None else ""
        self._prefix = top + os.sep if top and top != os.sep else ""

    def updated(self, secrets: frozenset[str]) -> Scrubber:
        """`Scrubber(secrets, root)`, made from this one when among many secrets only a few word-like ones came
        or went (a push watch added or ended among 10,000: a fresh build took 12 ms), else built afresh. This
        one is left as it was (it may be in use)."""
        gone = [s for s in self.secrets - secrets if _maskable(s)]
        came = [s for s in secrets - self.secrets if _maskable(s)]
        words = self._word_lengths.copy()
        words.subtract(map(len, gone))
        words.update(map(len, came))
        words = +words  # the lengths some word-like secret still has
        count = self._count - len(gone) + len(came)
        if (
            self._words is None
            or not words
            or count <= _REGEX_MAX
            or len(gone) + len(came) > _REGEX_MAX
            or not all(_WORD.fullmatch(s) for s in (*gone, *came))  # the others' pattern: built afresh
        ):
            return Scrubber(secrets, self._root)
        new = copy.copy(self)
        new.secrets, new._count, new._word_lengths = secrets, count, words
        new._words = self._words.updated(gone, came)
        if min(words) != min(self._word_lengths):
            new._runs = _runs(min(words))
        new._longest = max(max(words), self._longest_other)
        return new

    def __len__(self) -> int:
        return self._count

    def text(self, s: str) -> str:
        if self._prefix and self._prefix in s:
            s = s.replace(self._prefix, "")
        if self._regex is not None:
            return self._regex.sub(MASK, s)
        if self._count and len(s) >= MIN_SECRET:
            return self._masked(s, self._spans(s), len(s))
        return s

    def cut(self, s: str, keep: int) -> str:
        """`text` of the first `keep` characters of `s` (after the workspace path is cut out): a secret that
        starts within them is masked whole, and only that much of `s` is looked at (an agent's raw task may be
        megabytes, of which a page shows a preview)."""
        window = s[: keep + self._longest + len(self._prefix)]
        if self._prefix and self._prefix in window:
            window = window.replace(self._prefix, "")
        if not self._count or len(window) < MIN_SECRET:
            return window[:keep]
        return self._masked(window, self._spans(window), keep)

    def _spans(self, s: str) -> list[tuple[int, int]]:
        """Where the secrets in `s` start and end: from the left, the longest where several start."""
        if self._regex is not None:
            return [m.span() for m in self._regex.finditer(s)]
        spans: list[tuple[int, int]] = []
        if self._words is not None and self._runs is not None:
            for run in self._runs.finditer(s):
                spans += self._words.spans(s, run.start(), run.end())
        if isinstance(self._others, _Index):
            spans += self._others.spans(s, 0, len(s))
        elif self._others is not None:
            spans += ((m.start(), m.start() + len(m.group(1))) for m in self._others.finditer(s))
        taken: list[tuple[int, int]] = []
        last = 0
        for start, end in sorted(spans, key=lambda span: (span[0], -span[1])):
            if start >= last:
                taken.append((start, end))
                last = end
        return taken

    @staticmethod
    def _masked(s: str, spans: list[tuple[int, int]], keep: int) -> str:
        """The first `keep` characters of `s`, each span starting within them masked whole."""
        if not spans and keep >= len(s):
            return s
        out: list[str] = []
        last = 0
        for start, end in spans:
            if start >= keep:
                break
            out += (s[last:start], MASK)
            last = end
        out.append(s[last:keep] if last < keep else "")
        return "".join(out)

    def __call__(self, value: Any) -> Any:
        """`value` with every string in it scrubbed: str, and dicts (keys too), lists and tuples of them."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            text = self.text  # a plain string value is scrubbed here, not through a call of this (every result)
            return {
                text(k) if type(k) is str else self(k): text(v) if type(v) is str else self(v) for k, v in value.items()
            }
        if isinstance(value, list):
            return [self(v) for v in value]
        if isinstance(value, tuple):
            return tuple([self(v) for v in value])
        return value

    def event(self, ev: Event) -> Event:
        """The event with its agent-made fields scrubbed (the workspace, kind and target are the console's)."""
        return replace(
            ev,
            task_id=self.text(ev.task_id),
            context_id=self.text(ev.context_id),
            state=self.text(ev.state),
            text=self.text(ev.text),
            data=self(ev.data),
        )


def _maskable(s: object) -> bool:
    return isinstance(s, str) and len(s) >= MIN_SECRET


def _runs(shortest: int) -> re.Pattern[str]:
    """The runs of word characters long enough to hold a word-like secret."""
    return re.compile(rf"[A-Za-z0-9_-]{{{shortest},}}")


def _either(ordered: list[str]) -> str:
    return "|".join(map(re.escape, ordered))


def _alternation(ordered: list[str]) -> re.Pattern[str]:
    return re.compile(_either(ordered))


def _lookahead(ordered: list[str]) -> re.Pattern[str]:
    """Every position where one of `ordered` starts, overlapping ones too (the longest at each)."""
    return re.compile(f"(?=({_either(ordered)}))")


_STRING = r'"([^"\\]*(?:\\.[^"\\]*)*)"'  # a JSON string's body, escapes and all


def field_values(data: bytes | None, name: str) -> list[str]:
    """Every string value of the field `name` anywhere in a JSON file: valid entries or not, and in a
    malformed file too (its keys are still known to the agents). Found textually, which is also 7x faster
    than parsing a large `pending.json` (10,000 records: 5 ms), so a rebuild after each write stays cheap."""
    if not data:
        return []
    found = []
    for m in re.finditer(rf'"{re.escape(name)}"\s*:\s*{_STRING}', data.decode("utf-8", "replace")):
        body = m.group(1)
        try:
            found.append(json.loads(f'"{body}"') if "\\" in body else body)
        except ValueError:
            found.append(body)
    return found


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


class Scrubbers:
    """One Scrubber per workspace over its `agents.json` keys and `pending.json` push tokens, rebuilt whenever
    either file's inode, size, mtime or ctime moved (each write replaces the file, so a new inode). The push
    tokens of a `pending.json` this process wrote last come from the store's records (`PendingStore.push_tokens`),
    not from reading the file again: at 10,000 push watches that read took 20 ms of the event loop after every
    commit of the watches, and a token set that did not change keeps its scrubber without comparing it."""

    def __init__(self) -> None:
        # per workspace: the files' signatures, then the keys and the tokens the scrubber was built from
        self._cache: dict[Workspace, tuple[tuple[Any, ...], Scrubber, frozenset[str], frozenset[str]]] = {}

    def for_workspace(self, ws: Workspace, agents: Signature | None = None) -> Scrubber:
        """`agents`: agents.json's signature when the caller checked the file (`ConnectionPool.agents_signed`) before
        anything it scrubs could hold a key of it; else it is checked now."""
        if agents is None:
            agents = file_signature(ws.agents_path)
        records_path = pending.file_path(ws)
        records = file_signature(records_path)
        cached = self._cache.get(ws)
        if cached is not None and cached[0] == (agents, records):
            return cached[1]
        keys = cached[2] if cached is not None and cached[0][0] == agents else None
        if keys is None:
            keys = frozenset(field_values(_read(ws.agents_path), "key"))
        tokens = STORE.push_tokens(ws, records)
        if tokens is None:
            tokens = frozenset(field_values(_read(records_path), "pushToken"))
        if cached is not None and keys == cached[2] and (tokens is cached[3] or tokens == cached[3]):
            scrubber = cached[1]  # most writes change no secret: keep the index
        else:
            scrubber = cached[1].updated(keys | tokens) if cached is not None else Scrubber(keys | tokens, ws.root)
        self._cache[ws] = ((agents, records), scrubber, keys, tokens)
        return scrubber
