"""The agents that refused a push config: one entry per agent, bounded, forgotten once push is accepted."""

from __future__ import annotations

from datetime import UTC, datetime

from a2aconsole.core.watches.push_refusals import PushRefusal, PushRefusals, refusal_reason

AT = datetime(2026, 1, 1, tzinfo=UTC)


def refusal(agent: str, said: str = "Invalid push notification URL", source: str = "poll") -> PushRefusal:
    return PushRefusal("/ws", agent, said, source, AT)


def test_one_entry_per_agent_the_latest() -> None:
    kept = PushRefusals()
    kept.refused(refusal("a", "first"))
    kept.refused(refusal("a", "second", "subscribe"))
    assert [(r.agent, r.reason) for r in kept.all()] == [("a", "second")]
    latest = kept.of("/ws", "a")
    assert latest is not None and latest.text == "push refused by the agent: second; following by stream"
    assert latest.said("poll") == "push refused by the agent: second; following by polling"  # as its row says now


def test_bounded_oldest_forgotten_and_accepted_forgets() -> None:
    kept = PushRefusals(limit=2)
    for name in ("a", "b", "c"):
        kept.refused(refusal(name))
    assert [r.agent for r in kept.all()] == ["b", "c"]
    kept.accepted("/ws", "b")
    assert [r.agent for r in kept.all()] == ["c"] and kept.of("/ws", "b") is None


def test_reason_is_the_agents_words_on_one_line_and_cut() -> None:
    said = 'agent "bot" answered an error to push setup: InvalidParams: Invalid push\nnotification URL'
    assert refusal_reason(said) == "InvalidParams: Invalid push notification URL"
    long = refusal_reason("x" * 5000)
    assert len(long) == 200 and long.endswith("…")
