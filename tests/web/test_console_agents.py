"""The agents pages over agents.json: list, add, edit, delete, conflicts, the raw editor, keys never shown."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from a2aconsole.core.files.workspace import Workspace
from a2aconsole.web.views.agents import CONFLICT_PAGE
from tests.support.console import create_owner

pytestmark = pytest.mark.django_db

KEY = "k_secret_value_123"


@pytest.fixture
def owner(client: Client) -> Client:
    client.force_login(create_owner())
    return client


def write_agents(ws: Workspace, entries: list[dict]) -> None:
    ws.save_agents(entries, None)


def test_logged_out_is_sent_to_login(client: Client, ws: Workspace) -> None:
    r = client.get("/agents/")
    assert r.status_code == 302 and r["Location"].startswith("/login/")


def test_empty_state_says_add_one(owner: Client, ws: Workspace) -> None:
    r = owner.get("/agents/")
    assert r.status_code == 200
    assert "No agents yet" in r.text and "add one" in r.text


def test_list_masks_url_and_never_shows_key(owner: Client, ws: Workspace) -> None:
    write_agents(ws, [{"name": "travel", "url": "https://u:pw@travel.example:8443/a2a?token=zz#f", "key": KEY}])
    r = owner.get("/agents/")
    assert "https://travel.example:8443/a2a" in r.text
    assert "key set" in r.text
    assert KEY not in r.text and "token=zz" not in r.text and "pw@" not in r.text


def test_add_validates_like_the_file_layer(owner: Client, ws: Workspace) -> None:
    version = ws.read_agents().version
    r = owner.post("/agents/add/", {"name": "Bad Name", "url": "ftp://x", "version": version})
    assert r.status_code == 400
    assert "a-z, 0-9 and -" in r.text and "http" in r.text
    assert not ws.agents_path.exists()


def test_add_then_edit_keeps_key_and_unknown_fields(owner: Client, ws: Workspace) -> None:
    version = ws.read_agents().version
    r = owner.post("/agents/add/", {"name": "bot", "url": "http://127.0.0.1:1/", "key": KEY, "version": version})
    assert r.status_code == 302 and r["Location"] == "/agent/bot/"
    raw = json.loads(ws.agents_path.read_text())
    raw[0]["x-extra"] = {"keep": True}
    ws.agents_path.write_text(json.dumps(raw))
    page = owner.get("/agent/bot/edit/")
    assert KEY not in page.text
    version = ws.read_agents().version
    r = owner.post(
        "/agent/bot/edit/",
        {"name": "bot", "url": "http://127.0.0.1:2/", "description": "d", "version": version},
    )
    assert r.status_code == 302
    saved = json.loads(ws.agents_path.read_text())[0]
    assert saved == {
        "name": "bot",
        "url": "http://127.0.0.1:2/",
        "key": KEY,
        "description": "d",
        "x-extra": {"keep": True},
    }


def test_stale_edit_gets_conflict_view_not_overwrite(owner: Client, ws: Workspace) -> None:
    write_agents(ws, [{"name": "bot", "url": "http://127.0.0.1:1/", "key": KEY}])
    stale = ws.read_agents().version
    write_agents(ws, [{"name": "bot", "url": "http://127.0.0.1:9/other", "key": KEY}])
    r = owner.post("/agent/bot/edit/", {"name": "bot", "url": "http://127.0.0.1:5/", "version": stale})
    assert r.status_code == CONFLICT_PAGE
    assert "changed" in r.text and "http://127.0.0.1:9/other" in r.text
    assert KEY not in r.text
    assert ws.read_agents().get("bot").url == "http://127.0.0.1:9/other"
    # the conflict view's form carries the current version, so applying again works
    r = owner.post(
        "/agent/bot/edit/", {"name": "bot", "url": "http://127.0.0.1:5/", "version": ws.read_agents().version}
    )
    assert r.status_code == 302 and ws.read_agents().get("bot").url == "http://127.0.0.1:5/"


def test_delete_with_version(owner: Client, ws: Workspace) -> None:
    write_agents(ws, [{"name": "a", "url": "http://127.0.0.1:1/"}, {"name": "b", "url": "http://127.0.0.1:2/"}])
    stale = ws.read_agents().version
    write_agents(ws, [{"name": "a", "url": "http://127.0.0.1:1/"}, {"name": "b", "url": "http://127.0.0.1:3/"}])
    assert owner.post("/agent/a/delete/", {"version": stale}).status_code == CONFLICT_PAGE
    assert [e.name for e in ws.read_agents().entries] == ["a", "b"]
    r = owner.post("/agent/a/delete/", {"version": ws.read_agents().version})
    assert r.status_code == 302
    assert [e.name for e in ws.read_agents().entries] == ["b"]


def test_malformed_file_shown_and_fixed_in_raw_editor(owner: Client, ws: Workspace) -> None:
    ws.agents_path.parent.mkdir(parents=True, exist_ok=True)
    ws.agents_path.write_text('[{"name": "bot", "url": "http://127.0.0.1:1/", "key": "' + KEY + '"},')
    r = owner.get("/agents/")
    assert "not valid JSON" in r.text and "Fix the file" in r.text and KEY not in r.text
    r = owner.get("/agents/file/")
    assert KEY not in r.text and "only when you ask" in r.text
    r = owner.get("/agents/file/?show=1")
    assert KEY in r.text  # the owner asked to see the file to fix it
    version = ws.read_agents().version
    r = owner.post("/agents/file/", {"text": '[{"name": "Bad"}]', "version": version})
    assert r.status_code == 400 and "not valid" in r.text
    assert ws.agents_path.read_text().endswith(",")
    fixed = '[{"name": "bot", "url": "http://127.0.0.1:1/", "key": "' + KEY + '"}]'
    r = owner.post("/agents/file/", {"text": fixed, "version": version})
    assert r.status_code == 302
    assert ws.read_agents().get("bot") is not None


def test_other_pages_render_empty_states(owner: Client, ws: Workspace) -> None:
    for url, text in [
        ("/", "Nothing needs you"),
        ("/watches/", "No watches"),
        ("/a2a", "A2A status"),
        ("/chat/console/", "No agents yet"),
        ("/inbox/console/", "No results yet"),
    ]:
        r = owner.get(url, follow=True)
        assert r.status_code == 200, url
        assert text in r.text, url


def test_edit_shows_the_url_masked_and_keeps_its_hidden_parts(owner: Client, ws: Workspace) -> None:
    secret_url = "https://u:pw-hidden@travel.example:8443/a2a?token=tok-hidden"
    write_agents(ws, [{"name": "travel", "url": secret_url, "key": KEY}])
    page = owner.get("/agent/travel/edit/")
    assert 'value="https://travel.example:8443/a2a"' in page.text and "never shown" in page.text
    assert "pw-hidden" not in page.text and "tok-hidden" not in page.text and KEY not in page.text
    version = ws.read_agents().version
    url = "https://travel.example:8443/a2a"
    r = owner.post("/agent/travel/edit/", {"name": "travel", "url": url, "description": "d", "version": version})
    assert r.status_code == 302
    assert ws.read_agents().get("travel").url == secret_url  # unchanged address: hidden parts kept
    version = ws.read_agents().version
    r = owner.post("/agent/travel/edit/", {"name": "travel", "url": "https://new.example/", "version": version})
    assert r.status_code == 302 and ws.read_agents().get("travel").url == "https://new.example/"


def test_raw_editor_hides_keys_and_keeps_them_on_save(owner: Client, ws: Workspace) -> None:
    from a2aconsole.web.views.agents import HIDDEN_KEY

    secret_url = "https://u:pw-zz@h.example/a?t=tok-zz"
    write_agents(
        ws,
        [
            {"name": "bot", "url": "http://127.0.0.1:1/", "key": KEY},
            {"name": "b", "url": "http://x/"},
            {"name": "s", "url": secret_url},
        ],
    )
    r = owner.get("/agents/file/")
    assert r.status_code == 200 and r["Cache-Control"] == "no-store"
    assert KEY not in r.text and HIDDEN_KEY in r.text and "<textarea" in r.text
    assert "pw-zz" not in r.text and "tok-zz" not in r.text and "https://h.example/a (+ hidden parts" in r.text
    text = r.context["form"].initial["text"]
    version = ws.read_agents().version
    # a renamed entry cannot take its hidden key along: said in words, nothing written
    r = owner.post("/agents/file/", {"text": text.replace('"bot"', '"bot2"'), "version": version})
    assert r.status_code == 400 and "type the key" in r.text and KEY not in r.text
    r = owner.post("/agents/file/", {"text": text.replace("http://x/", "http://y/"), "version": version})
    assert r.status_code == 302
    af = ws.read_agents()
    assert af.get("bot").key == KEY and af.get("b").url == "http://y/" and af.get("s").url == secret_url
    # a conflict shows the current file with its keys hidden too
    r = owner.post("/agents/file/", {"text": text, "version": version})
    assert r.status_code == CONFLICT_PAGE and KEY not in r.text and HIDDEN_KEY in r.text
