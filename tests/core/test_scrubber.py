"""The scrubber: which secrets it masks, how, and where it finds them."""

from __future__ import annotations

import json
import random
import secrets
from datetime import UTC, datetime
from pathlib import Path

from a2aconsole.core import pending
from a2aconsole.core import scrubber as scrubber_module
from a2aconsole.core.events import Event
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.records import WatchRecord, dump_pending
from a2aconsole.core.results import PREVIEW_CHARS, json_preview
from a2aconsole.core.scrubber import MASK, Scrubber, Scrubbers, field_values


def test_masks_every_occurrence_longest_first_and_keeps_the_rest() -> None:
    s = Scrubber(["abcdefgh", "abcdefgh-longer"])
    assert s.text("x abcdefgh-longer y abcdefghabcdefgh z") == f"x {MASK} y {MASK}{MASK} z"


def test_short_secrets_are_not_masked() -> None:
    s = Scrubber(["a", "k3y", "1234567"])
    assert len(s) == 0
    assert s.text("a k3y 1234567") == "a k3y 1234567"


def test_many_secrets_use_the_prefix_index_and_agree_with_the_regex() -> None:
    tokens = [secrets.token_urlsafe(32) for _ in range(10_000)]
    text = f"start {tokens[7]}{tokens[9_999]} and {tokens[42][:20]} {tokens[0]}!"
    expect = f"start {MASK}{MASK} and {tokens[42][:20]} {MASK}!"
    assert Scrubber(tokens).text(text) == expect
    assert Scrubber([tokens[7], tokens[9_999], tokens[0]]).text(text) == expect


def test_overlapping_secrets_mask_the_first_and_longest() -> None:
    few = ["12345678", "45678901", "x-12345678-y"]
    many = few + [str(n) * 8 for n in range(70)]  # past the regex: the prefix index
    for s in (Scrubber(few), Scrubber(many)):
        assert s.text("a 123456789012 b x-12345678-y c") == f"a {MASK}9012 b {MASK} c"


def test_nested_values_and_events_are_scrubbed(tmp_path) -> None:
    root = tmp_path / "ws"
    s = Scrubber(["secret-key-123"], root)
    value = {"a": ["x secret-key-123", ("secret-key-123",)], "secret-key-123": 3, "n": None, "f": 1.5}
    assert s(value) == {"a": [f"x {MASK}", (MASK,)], MASK: 3, "n": None, "f": 1.5}
    assert (
        s.text(f"{root}/.volcanic/a2a/agents.json is bad; {root}2/x") == f".volcanic/a2a/agents.json is bad; {root}2/x"
    )
    ev = Event(
        "result",
        str(root),
        "bot",
        "secret-key-123",
        datetime.now(UTC),
        text="secret-key-123",
        data={"m": "secret-key-123"},
    )
    out = s.event(ev)
    assert (out.task_id, out.text, out.data, out.workspace) == (MASK, MASK, {"m": MASK}, str(root))


def test_keys_of_broken_files_are_still_found() -> None:
    assert field_values(b'[{"name": "Bad Name", "key": "k-of-a-bad-entry"}]', "key") == ["k-of-a-bad-entry"]
    broken = b'[{"name": "a", "key": "first-key-\\"quoted\\""}, {"key": "second-key-xx",'
    assert field_values(broken, "key") == ['first-key-"quoted"', "second-key-xx"]
    assert field_values(None, "key") == [] and field_values(b"", "key") == []


def test_the_workspace_scrubber_follows_the_files(workspace: Workspace) -> None:
    scrubbers = Scrubbers()
    first = scrubbers.for_workspace(workspace)
    assert len(first) == 0 and scrubbers.for_workspace(workspace) is first  # unchanged files: reused
    workspace.save_agents([{"name": "a", "url": "http://127.0.0.1:1/", "key": "agent-key-1234"}], None)
    rec = WatchRecord("w", "t", "a", "task", push_token="push-token-5678", source="push")
    pending.file_path(workspace).write_bytes(dump_pending([rec]))
    s = scrubbers.for_workspace(workspace)
    assert s.text("agent-key-1234 push-token-5678") == f"{MASK} {MASK}"
    workspace.save_agents([], None)
    pending.file_path(workspace).write_text(json.dumps([]), encoding="utf-8")
    assert len(scrubbers.for_workspace(workspace)) == 0


def reference(text: str, found: list[str]) -> str:
    """What masking means: from the left, at each position the longest secret that starts there."""
    ordered = sorted((s for s in found if len(s) >= 8), key=len, reverse=True)
    out, i = [], 0
    while i < len(text):
        hit = next((s for s in ordered if text.startswith(s, i)), None)
        if hit is None:
            out.append(text[i])
            i += 1
        else:
            out.append(MASK)
            i += len(hit)
    return "".join(out)


def test_many_secrets_of_every_kind_mask_as_one_regex_would() -> None:
    """Past the regex: secrets of word characters are looked for within runs of them, the others (a key with a
    dot, a space) everywhere; overlapping and nested ones, side by side or inside a longer run, as the rule says."""
    rng = random.Random(3)
    alphabet = "abAB01-_"
    words = [secrets.token_urlsafe(32) for _ in range(200)] + [
        "".join(rng.choices(alphabet, k=rng.randint(8, 12))) for _ in range(60)
    ]
    others = ["key.with.dots", "two words!", "ab01.AB01", "k=" + "a" * 10]
    for found in (words + others, words, words + [f"other {n:04}" for n in range(70)]):
        scrubber = Scrubber(found)
        for _ in range(300):
            pieces = [rng.choice(found) for _ in range(rng.randint(0, 4))]
            pieces += ["".join(rng.choices(alphabet + " .=!", k=rng.randint(0, 20))) for _ in range(4)]
            rng.shuffle(pieces)
            text = "".join(pieces) if rng.random() < 0.5 else " ".join(pieces)
            assert scrubber.text(text) == reference(text, found), text


def test_a_secret_starting_inside_one_left_unmasked_is_still_masked() -> None:
    """Of two overlapping secrets only one can go; the next one starting inside the one that did not must."""
    text = "AAAAAAAAAA.b.cdefgh.ij"
    found = ["AAAAAAAAAA", "AAAAA.b.cd", "cdefgh.ij"]  # [0, 10) masked, [5, 15) not, [13, 22) masked
    padding = [secrets.token_urlsafe(32) for _ in range(70)]  # past the regex: the index
    for scrubber in (Scrubber(found), Scrubber(found + padding)):
        assert scrubber.text(text) == f"{MASK}.b.{MASK}" == reference(text, found)


def reference_cut(text: str, keep: int, found: list[str]) -> str:
    """The first `keep` characters of `text` masked as the whole text is: a secret starting there goes whole."""
    ordered = sorted((s for s in found if len(s) >= 8), key=len, reverse=True)
    out, i = [], 0
    while i < keep:
        hit = next((s for s in ordered if text.startswith(s, i)), None)
        out.append(text[i] if hit is None else MASK)
        i += 1 if hit is None else len(hit)
    return "".join(out)


def test_a_cut_text_is_scrubbed_as_its_whole_would_be_up_to_the_cut() -> None:
    rng = random.Random(5)
    tokens = [secrets.token_urlsafe(32) for _ in range(100)]
    for found in (tokens[:3] + ["key.with.dots"], tokens + ["key.with.dots"]):  # the regex, the index
        scrubber = Scrubber(found)
        for _ in range(300):
            pieces = [rng.choice(found) for _ in range(3)] + ["".join(rng.choices("ab .", k=30)) for _ in range(3)]
            rng.shuffle(pieces)
            text = "".join(pieces)
            keep = rng.randint(0, len(text))
            assert scrubber.cut(text, keep) == reference_cut(text, keep, found), (text, keep)


def test_a_raw_task_preview_masks_a_secret_its_cut_goes_through() -> None:
    """The raw task a page shows is a preview scrubbed as it is cut: a push token across the cut is masked whole,
    never shown in part; a key too."""
    tokens = [secrets.token_urlsafe(32) for _ in range(100)]
    scrubber = Scrubber(tokens)
    blob = "A" * (PREVIEW_CHARS - 10) + tokens[5] + "B" * 10_000_000  # a 10 MB part the page shows 4 KB of
    shown = json_preview({"parts": [{"raw": blob}], tokens[6]: 1}, cut=scrubber.cut)
    assert shown["parts"][0]["raw"].startswith("A" * (PREVIEW_CHARS - 10) + MASK + "… (")
    assert tokens[5][:10] not in json.dumps(shown) and MASK in shown


async def test_push_tokens_from_the_store_are_the_file_s_through_every_kind_of_change(
    workspace: Workspace, monkeypatch
) -> None:
    """The scrubber takes a `pending.json` this process wrote last from the store's records, not the file: its
    secrets stay exactly those a reading of the files finds, through adds, removes, replacements and in-place
    edits of records with and without tokens (durable or journal lines), commits that change no token (the
    same scrubber kept, the file not read), and another process's rewrite (the file read again)."""
    rng = random.Random(7)
    workspace.save_agents([{"name": "a", "url": "http://127.0.0.1:1/", "key": "agent-key-1234"}], None)
    scrubbers = Scrubbers()
    read = scrubber_module._read
    reads: list[Path] = []
    monkeypatch.setattr(scrubber_module, "_read", lambda path: reads.append(path) or read(path))

    issued: list[str] = []

    def token() -> str | None:  # none, a new one, or one another record has too (a hand-copied record)
        if rng.random() < 0.4:
            return None
        if issued and rng.random() < 0.3:
            return rng.choice(issued)
        issued.append(secrets.token_urlsafe(12))
        return issued[-1]

    def read_from_files() -> frozenset[str]:  # the file, not the journal: as before the store was asked
        path = pending.file_path(workspace)
        records = path.read_bytes() if path.exists() else b""
        return frozenset(field_values(workspace.agents_path.read_bytes(), "key") + field_values(records, "pushToken"))

    n = 0
    for step in range(300):
        ids = [r.watch_id for r in pending.read(workspace).records]
        kind = rng.choice(["add", "remove", "replace", "edit", "state", "foreign"] if ids else ["add"])
        if kind == "foreign":  # another process rewrites the file: the store's view is no longer it
            records = pending.read(workspace).records
            records[rng.randrange(len(records))].push_token = token()
            pending.file_path(workspace).write_bytes(dump_pending(records))
            pending.journal_path(workspace).write_bytes(b"")
        else:
            async with pending.transaction(workspace, durable=rng.random() < 0.7) as tx:
                if kind == "add":
                    n += 1
                    tx.add(WatchRecord(f"w{n}", "t", "a", f"task{n}", push_token=token(), source="push"))
                elif kind == "remove":
                    tx.remove(rng.choice(ids))
                elif kind == "replace":
                    old = tx.find(rng.choice(ids))
                    assert old is not None
                    tx.replace(WatchRecord(old.watch_id, "t", "a", old.task_id, push_token=token(), source="push"))
                elif kind == "edit":
                    rec = tx.edit(rng.choice(ids))
                    assert rec is not None
                    rec.push_token = token()
                else:  # a change of state only: no token moves
                    rec = tx.edit(rng.choice(ids))
                    assert rec is not None
                    rec.state = rng.choice(["working", "input-required"])
        before = scrubbers._cache.get(workspace)
        reads.clear()
        s = scrubbers.for_workspace(workspace)
        assert s.secrets == read_from_files(), (step, kind)
        if kind != "foreign" and before is not None and pending.file_path(workspace).exists():
            assert reads == [], (step, kind)  # this process wrote the files last: neither is read
        if kind == "state" and before is not None and before[1].secrets == s.secrets:
            assert s is before[1]  # no token moved (a fold may bring the journal's into the file): kept


def test_a_scrubber_updated_with_a_few_secrets_masks_as_one_built_afresh() -> None:
    """`Scrubber.updated` (a push watch added or ended among many): the scrubber it makes from the old one masks
    every text exactly as one built afresh from the new secrets would, whatever came or went (word-like or
    not, longer or shorter than the others, sharing a prefix, too short to mask), and the old one still masks
    its own secrets."""
    rng = random.Random(11)
    alphabet = "abcdefgh01_-"

    def secret() -> str:
        kind = rng.random()
        if kind < 0.6:
            return secrets.token_urlsafe(rng.choice([4, 9, 12, 24]))  # word-like: 12 to 32 characters, or too short
        if kind < 0.8:  # word-like, sharing their first 8 characters
            return "shared-p" + "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
        return "k." + secrets.token_hex(rng.choice([3, 6]))  # not word-like (a key with a dot)

    # what some steps bring: a longer secret that a shorter one (there first) starts, a word-like secret shorter
    # than every other (the runs searched get shorter), one longer than all (the cut's window grows)
    planned = {5: ["shared-pq"], 6: ["shared-pqrstuvw"], 15: ["Zz9_Zz9_"], 25: [secrets.token_urlsafe(60)]}
    current = frozenset(secret() for _ in range(150))
    old = Scrubber(current)
    incremental = 0
    for step in range(60):
        gone = rng.sample(sorted(current - {"shared-pq", "Zz9_Zz9_"}), rng.randint(0, 3))
        came = planned.get(step) or [secret() for _ in range(rng.randint(0, 3))]
        new_secrets = (current - set(gone)) | set(came)
        updated, fresh = old.updated(new_secrets), Scrubber(new_secrets)
        incremental += updated._others is old._others  # made from the old one, not afresh
        assert updated.secrets == fresh.secrets and len(updated) == len(fresh)
        assert updated._longest == fresh._longest
        pool = sorted(current | new_secrets)
        texts = [f"a {c} b" for c in came] + [f"{c}.{c}" for c in came]
        for _ in range(20):
            words = [rng.choice(pool) if rng.random() < 0.5 else secrets.token_urlsafe(8) for _ in range(6)]
            texts.append(rng.choice(["", " ", "-", "/"]).join(words))
        for text in texts:
            assert updated.text(text) == fresh.text(text) == reference(text, list(new_secrets)), (step, text)
            assert old.text(text) == reference(text, list(current))  # the old one: as it was
            assert updated.cut(text, 30) == fresh.cut(text, 30)
        old, current = updated, new_secrets
    assert incremental >= 15


async def test_the_push_tokens_stay_known_while_a_transaction_holds_the_store_s_records(
    workspace: Workspace, monkeypatch
) -> None:
    """A batch of the watches holds the store's records while it writes (milliseconds, in a thread): a scrub
    meanwhile still takes the tokens of the file as this process wrote it, without reading it."""
    read = scrubber_module._read
    reads: list[Path] = []
    monkeypatch.setattr(scrubber_module, "_read", lambda path: reads.append(path) or read(path))
    scrubbers = Scrubbers()
    scrubbers.for_workspace(workspace)
    async with pending.transaction(workspace) as tx:
        tx.add(WatchRecord("w1", "t", "a", "task1", push_token="push-token-5678", source="push"))
    async with pending.transaction(workspace) as tx:  # the next batch, under way
        reads.clear()
        assert scrubbers.for_workspace(workspace).text("push-token-5678") == MASK
        assert pending.file_path(workspace) not in reads
        tx.remove("w1")
    assert scrubbers.for_workspace(workspace).text("push-token-5678") == "push-token-5678"
