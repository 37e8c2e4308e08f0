"""The watch table says when each watch's agent last answered, and "no news since 21:04 (why)" in a warning style once
the silence after a failed call is past its threshold; the timeline tells the silence and the answer again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from a2aconsole.core import pending
from a2aconsole.core.files.workspace import Workspace
from a2aconsole.core.pending.records import WatchRecord
from a2aconsole.core.watches.heard import HEARD_AT, LAST_ERROR
from a2aconsole.web.event_words import describe

pytestmark = pytest.mark.django_db(transaction=True)
REFUSED = 'agent "bot" is unreachable (ConnectError); is it running?'


def hhmm(at: datetime) -> str:
    return f"{timezone.localtime(at):%H:%M}"


async def test_rows_say_last_heard_and_no_news_past_the_threshold(ws: Workspace, owner) -> None:
    now = datetime.now(UTC)
    long_ago, just_now = now - timedelta(minutes=20), now - timedelta(seconds=30)
    async with pending.transaction(ws) as tx:  # as a worker elsewhere last wrote them
        tx.add(
            WatchRecord("wq", "console", "bot", "t-quiet", started_at=long_ago.isoformat(),
                        extra={HEARD_AT: long_ago.isoformat(), LAST_ERROR: REFUSED + " <b>x</b>"}),
            WatchRecord("wn", "console", "bot", "t-new", started_at=just_now.isoformat(),
                        extra={HEARD_AT: just_now.isoformat(), LAST_ERROR: REFUSED}),
        )  # fmt: skip
    html = (await owner.get("/watches/")).content.decode()
    quiet = html[html.index('id="watch-wq"') : html.index("</tr>", html.index('id="watch-wq"'))]
    fresh = html[html.index('id="watch-wn"') : html.index("</tr>", html.index('id="watch-wn"'))]
    assert f'class="small quiet heard" role="status">no news since {hhmm(long_ago)} (agent &quot;bot&quot;' in quiet
    assert "&lt;b&gt;x&lt;/b&gt;" in quiet and "<b>x</b>" not in quiet  # the agent's bytes, escaped
    assert f"last heard {hhmm(just_now)}" in fresh and "no news" not in fresh  # a failure, not news yet


def test_the_timeline_tells_the_silence_and_the_answer_again() -> None:
    at = datetime(2026, 1, 1, 21, 4, tzinfo=UTC)
    data = {"news": "quiet", "heardAt": at.isoformat(), "error": "connection refused", "watchId": "w"}
    assert describe("watch.update", data) == f"No news since {hhmm(at)} (connection refused)"
    assert describe("watch.update", {"news": "heard", "watchId": "w"}) == "The agent answers again"
    assert describe("watch.ended", {"reason": "stopped", "by": "api"}, at=at) == (
        f"Stopped watching (by the agent host, {hhmm(at)})"
    )
