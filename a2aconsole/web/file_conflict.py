"""A conflict on agents.json: the owner's text against the file as it is now, compared and merged.

Both sides are the editor's texts (keys and URL secrets as placeholders, see `agents_text`), so neither the
diff nor the merge ever holds a secret. The comparison is difflib's (side by side, long unchanged runs
folded, and a unified diff); the merge is merge3's three-way merge from the text the owner started from,
with git-style markers where both sides changed the same lines.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import merge3

CONTEXT = 3  # unchanged lines shown around each change
FOLD_MIN = 2  # this many unchanged lines or fewer between changes are shown, not folded
START, MID, END = "<<<<<<< yours", "=======", ">>>>>>> the file now"
_MARKERS = ("<<<<<<<", "=======", ">>>>>>>")


@dataclass(frozen=True)
class Line:
    """One row of the side-by-side view: the file's line and yours (number 0: no line on that side)."""

    kind: str  # same, changed, removed (only in the file), added (only in yours), skip (unchanged lines folded)
    file_no: int = 0
    file_text: str = ""
    your_no: int = 0
    your_text: str = ""
    skipped: int = 0


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").splitlines()


def side_by_side(file_text: str, your_text: str) -> list[Line]:
    """The two texts line against line, each change marked, unchanged runs beyond CONTEXT lines folded."""
    a, b = _lines(file_text), _lines(your_text)
    rows: list[Line] = []
    done = 0  # the file's lines shown or folded so far
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(CONTEXT):
        _, start, _, j_start, _ = group[0]
        rows += _unchanged(a, b, done, start, j_start - start)
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows += [
                    Line("same", i + 1, a[i], j + 1, b[j]) for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
                ]
                continue
            for k in range(max(i2 - i1, j2 - j1)):
                i, j = i1 + k, j1 + k
                theirs, mine = i < i2, j < j2
                kind = "changed" if mine and theirs else "removed" if theirs else "added"
                rows.append(
                    Line(
                        kind, i + 1 if theirs else 0, a[i] if theirs else "", j + 1 if mine else 0, b[j] if mine else ""
                    )
                )
        done = group[-1][2]
    return rows + _unchanged(a, b, done, len(a), len(b) - len(a))


def _unchanged(a: list[str], b: list[str], start: int, end: int, shift: int) -> list[Line]:
    """The unchanged lines start..end of the file (at +shift in yours): folded unless there are only a few."""
    if end - start > FOLD_MIN:
        return [Line("skip", skipped=end - start)]
    return [Line("same", i + 1, a[i], i + shift + 1, b[i + shift]) for i in range(start, end)]


def unified(file_text: str, your_text: str) -> str:
    """The same comparison as a unified diff (what `diff -u` prints), for copying or reading as text."""
    return "\n".join(
        difflib.unified_diff(_lines(file_text), _lines(your_text), "agents.json now", "yours", n=CONTEXT, lineterm="")
    )


def merged(base: str | None, your_text: str, file_text: str) -> tuple[str, int]:
    """Your text and the file's merged from `base` (the text you started from), and how many places both
    changed (marked START/MID/END). Without a base, your text as it is and -1."""
    if base is None:
        return your_text, -1
    m = merge3.Merge3(_lines(base), _lines(your_text), _lines(file_text))
    conflicts = sum(1 for g in m.merge_groups() if g[0] == "conflict")
    out = m.merge_lines(start_marker=START, mid_marker=MID, end_marker=END)
    return "\n".join(line.rstrip("\n") for line in out) + "\n", conflicts


def marker_lines(text: str) -> list[int]:
    """The numbers of the lines that are still merge markers (a merge saved with them is refused)."""
    return [n for n, line in enumerate(_lines(text), 1) if line.startswith(_MARKERS)]
