"""The agents.json conflict page: a diff of the file now and the owner's text (keys hidden on both sides), and
its three ways out (keep yours, keep the file's, a merge), each posted as the page's own form carries it, each
refusing to overwrite a file that changed again (the conflict page comes back), each in the audit log."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.test import Client

from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.models import AuditEntry
from a2aconsole.web.views.agents import CONFLICT_PAGE
from tests.support.console import create_owner
from tests.support.csp import assert_strict_csp, inline_code
from tests.web.test_console_pages import check_page

pytestmark = pytest.mark.django_db

KEY = "k-conflict-NEVER-SHOWN-71"
TYPED = "k-typed-NEVER-SHOWN-93"
SECRET_URL = "https://u:pw-NEVER-SHOWN@s.example/a2a?token=tok-NEVER-SHOWN"
SECRETS = (KEY, TYPED, "pw-NEVER-SHOWN", "tok-NEVER-SHOWN")


@pytest.fixture
def owner(client: Client) -> Client:
    client.force_login(create_owner())
    return client


def agents(*entries: dict) -> list[dict]:
    return [
        {"name": "bot", "url": "http://127.0.0.1:1/", "key": KEY, "description": "the bot"},
        {"name": "s", "url": SECRET_URL},
        *entries,
    ]


def form_of(page: str, resolution: str) -> dict[str, str]:
    """What the conflict page's form for `resolution` posts: its hidden inputs and its textarea."""
    for body in re.findall(r"<form\b[^>]*>(.*?)</form>", page, re.S):
        fields = {
            n: html.unescape(v) for n, v in re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', body)
        }
        if fields.get("resolution") == resolution:
            for name, text in re.findall(r'<textarea[^>]*name="(\w+)"[^>]*>(.*?)</textarea>', body, re.S):
                fields[name] = html.unescape(text)
            return fields
    raise AssertionError(f"no {resolution} form on the page")


def no_secret(page: str) -> None:
    """No key or URL secret, and the page is plain (labelled controls, CSRF tokens, no inline code)."""
    for s in SECRETS:
        assert s not in page
    check_page("conflict page", page)


def open_editor(owner: Client) -> dict[str, str]:
    page = owner.get("/agents/file/")
    form = page.context["form"]
    return {"text": form.initial["text"], "version": form.initial["version"], "base": form.initial["base"]}


def behind_your_back(ws: Workspace, **bot: str) -> None:
    entries = agents()
    entries[0].update(bot)
    ws.save_agents(entries, None)


def test_conflict_shows_a_diff_with_keys_hidden_on_both_sides(owner: Client, ws: Workspace) -> None:
    ws.save_agents(agents(), None)
    mine = open_editor(owner)
    behind_your_back(ws, description="changed behind your back")
    text = mine["text"].replace('"the bot"', '"my description"')
    text = text.replace("\n]", f',\n  {{"name": "new", "url": "http://127.0.0.1:3/", "key": "{TYPED}"}}\n]')
    r = owner.post("/agents/file/", {**mine, "text": text})
    assert r.status_code == CONFLICT_PAGE and r["Cache-Control"] == "no-store"
    page = r.text
    no_secret(page)
    assert_strict_csp("conflict", r)
    assert not inline_code(page)
    assert "nothing was saved" in page
    changed = re.search(r'<tr class="diff-changed">(.*?)</tr>', page, re.S).group(1)  # type: ignore[union-attr]
    assert "changed behind your back" in changed and "my description" in changed
    assert re.search(r'<tr class="diff-added">.*?&quot;name&quot;: &quot;new&quot;', page, re.S)
    assert "(a key you typed: type it again)" in page and "(hidden: the key stays as it is)" in page
    assert '<th scope="col">The file now</th>' in page and '<th scope="col">Yours</th>' in page
    assert "-    &quot;description&quot;: &quot;changed behind your back&quot;" in page  # the unified diff
    # nothing changed on disk
    assert ws.read_agents().get("bot").description == "changed behind your back"
    # a typed key cannot be kept from this page: the merge holds your text to type it in again
    assert 'name="resolution" value="yours"' not in page and "type them again in the merge below" in page
    merge = form_of(page, "merge")
    ours = re.sub(r"<<<<<<< yours\n(.*?)=======\n.*?>>>>>>> the file now\n", r"\1", merge["text"], flags=re.S)
    r = owner.post("/agents/file/", {**merge, "text": ours})
    assert r.status_code == CONFLICT_PAGE and 'entry "new": type its key again' in html.unescape(r.text)
    no_secret(r.text)
    assert ws.read_agents().get("new") is None


def test_keep_yours_saves_over_the_change_and_keeps_the_keys(owner: Client, ws: Workspace) -> None:
    ws.save_agents(agents(), None)
    mine = open_editor(owner)
    behind_your_back(ws, description="theirs")
    page = owner.post("/agents/file/", {**mine, "text": mine["text"].replace('"the bot"', '"mine"')}).text
    r = owner.post("/agents/file/", form_of(page, "yours"))
    assert r.status_code == 302
    af = ws.read_agents()
    assert af.get("bot").description == "mine" and af.get("bot").key == KEY and af.get("s").url == SECRET_URL
    entry = AuditEntry.objects.get(action="agents-file-saved")
    assert "changed bot" in entry.detail and "after a conflict: kept yours over" in entry.detail


def test_keep_the_files_writes_nothing_and_is_audited(owner: Client, ws: Workspace) -> None:
    ws.save_agents(agents(), None)
    mine = open_editor(owner)
    behind_your_back(ws, description="theirs")
    before = ws.agents_path.read_bytes()
    page = owner.post("/agents/file/", {**mine, "text": mine["text"].replace('"the bot"', '"mine"')}).text
    r = owner.post("/agents/file/", form_of(page, "file"), follow=True)
    assert "kept as it is" in r.text
    assert ws.agents_path.read_bytes() == before
    entry = AuditEntry.objects.get(action="agents-file-kept")
    assert entry.subject == "agents.json" and "after a conflict" in entry.detail
    assert "Kept agents.json as it was after a conflict" in owner.get("/audit/").text


def test_merge_of_different_lines_saves_both_changes(owner: Client, ws: Workspace) -> None:
    ws.save_agents(agents(), None)
    mine = open_editor(owner)
    behind_your_back(ws, description="theirs")
    text = mine["text"].replace("http://127.0.0.1:1/", "http://127.0.0.1:5/")  # another line than theirs
    page = owner.post("/agents/file/", {**mine, "text": text}).text
    merge = form_of(page, "merge")
    assert "<<<<<<<" not in merge["text"] and "are merged below" in page
    assert owner.post("/agents/file/", merge).status_code == 302
    bot = ws.read_agents().get("bot")
    assert bot.url == "http://127.0.0.1:5/" and bot.description == "theirs" and bot.key == KEY
    assert "after a conflict: saved a merge with" in AuditEntry.objects.get(action="agents-file-saved").detail


def test_merge_of_the_same_lines_is_marked_and_refused_until_edited(owner: Client, ws: Workspace) -> None:
    ws.save_agents(agents(), None)
    mine = open_editor(owner)
    behind_your_back(ws, description="theirs")
    page = owner.post("/agents/file/", {**mine, "text": mine["text"].replace('"the bot"', '"mine"')}).text
    merge = form_of(page, "merge")
    assert "<<<<<<< yours" in merge["text"] and ">>>>>>> the file now" in merge["text"] and "in 1 place" in page
    r = owner.post("/agents/file/", merge)
    assert r.status_code == CONFLICT_PAGE and "still has conflict markers" in r.text
    assert ws.read_agents().get("bot").description == "theirs"
    # the owner keeps both words and removes the markers
    block = r"<<<<<<< yours\n.*?\n>>>>>>> the file now\n"
    fixed = re.sub(block, '    "description": "both"\n', merge["text"], flags=re.S)
    assert owner.post("/agents/file/", {**form_of(r.text, "merge"), "text": fixed}).status_code == 302
    assert ws.read_agents().get("bot").description == "both" and ws.read_agents().get("bot").key == KEY


@pytest.mark.parametrize("resolution", ["yours", "file", "merge"])
def test_no_resolution_overwrites_a_file_changed_again(owner: Client, ws: Workspace, resolution: str) -> None:
    ws.save_agents(agents(), None)
    mine = open_editor(owner)
    behind_your_back(ws, description="theirs")
    page = owner.post("/agents/file/", {**mine, "text": mine["text"].replace("127.0.0.1:1/", "127.0.0.1:5/")}).text
    behind_your_back(ws, description="changed again")  # while the owner reads the conflict page
    newer = ws.agents_path.read_bytes()
    r = owner.post("/agents/file/", form_of(page, resolution))
    assert r.status_code == CONFLICT_PAGE and "changed again" in r.text and "nothing was saved" in r.text
    assert ws.agents_path.read_bytes() == newer
    assert not AuditEntry.objects.exclude(action="login").exists()
    no_secret(r.text)
    # the new page carries the newer version: choosing again works
    assert owner.post("/agents/file/", form_of(r.text, resolution)).status_code == 302
    bot = ws.read_agents().get("bot")
    if resolution != "file":
        assert bot.url == "http://127.0.0.1:5/" and bot.key == KEY
    assert bot.description == ("the bot" if resolution == "yours" else "changed again")


def test_editor_saves_lf_and_a_plain_conflict_free_save_still_works(owner: Client, ws: Workspace) -> None:
    ws.save_agents(agents(), None)
    mine = open_editor(owner)
    r = owner.post("/agents/file/", {**mine, "text": mine["text"].replace("\n", "\r\n")})
    assert r.status_code == 302 and b"\r\n" not in ws.agents_path.read_bytes()
    assert json.loads(ws.agents_path.read_text())[0]["key"] == KEY


def edit_form(ws: Workspace, name: str, **change: str) -> dict[str, str]:
    """What the edit form of `name` posts (its URL as the form shows it, masked) with `change` applied."""
    from a2aconsole.core.files.agents import mask_url

    entry = ws.read_agents().get(name)
    form = {"name": name, "url": mask_url(entry.url), "description": entry.description or ""}
    return {**form, "version": ws.read_agents().version, **change}


def test_form_conflict_shows_the_entry_diff_and_three_ways(owner: Client, ws: Workspace) -> None:
    ws.save_agents(agents(), None)
    mine = edit_form(ws, "s", description="mine")
    behind = agents()
    behind[1]["description"] = "theirs"
    ws.save_agents(behind, None)
    page = owner.post("/agent/s/edit/", mine).text
    no_secret(page)
    assert "nothing was saved" in page and "Edit a merge" in page
    changed = re.search(r'<tr class="diff-changed">(.*?)</tr>', page, re.S).group(1)  # type: ignore[union-attr]
    assert "theirs" in changed and "mine" in changed
    assert "https://s.example/a2a (+ hidden parts, kept)" in page
    # keep the file's: nothing written, audited
    before = ws.agents_path.read_bytes()
    r = owner.post("/agent/s/edit/", form_of(page, "file"))
    assert r.status_code == 302 and ws.agents_path.read_bytes() == before
    assert AuditEntry.objects.get(action="agents-file-kept").subject == "s"
    # keep yours, from a page whose file changed again: the conflict comes back, then it saves
    page = owner.post("/agent/s/edit/", mine).text
    behind[1]["description"] = "again"
    ws.save_agents(behind, None)
    again = owner.post("/agent/s/edit/", form_of(page, "yours"))
    assert (
        again.status_code == CONFLICT_PAGE
        and "again" in again.text
        and ws.read_agents().get("s").description == "again"
    )
    r = owner.post("/agent/s/edit/", form_of(again.text, "file"))  # keep the file's from a stale page: same
    assert r.status_code == 302
    page = owner.post("/agent/s/edit/", mine).text
    assert owner.post("/agent/s/edit/", form_of(page, "yours")).status_code == 302
    s = ws.read_agents().get("s")
    assert s.description == "mine" and s.url == SECRET_URL  # the hidden parts of its URL kept


def test_form_conflict_with_a_typed_key_asks_for_it_again(owner: Client, ws: Workspace) -> None:
    ws.save_agents(agents(), None)
    mine = edit_form(ws, "bot", description="mine", key=TYPED)
    ws.save_agents(agents({"name": "other", "url": "http://127.0.0.1:7/"}), None)
    page = owner.post("/agent/bot/edit/", mine).text
    no_secret(page)
    assert 'name="resolution" value="yours"' not in page and "type them again in the merge below" in page
    assert "(a key you typed: type it again)" in page and ws.read_agents().get("bot").key == KEY
