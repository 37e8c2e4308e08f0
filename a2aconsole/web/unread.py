"""What the owner has not seen yet: results, answers and questions in the console's own chats (web backend)
that no browser tab has shown. Counted for the menu and the tab title; marked read when a visible tab shows one
(console.js posts their ids: `seen`)."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from django.utils.functional import SimpleLazyObject

from a2aconsole.web import history
from a2aconsole.web.models import ChatTarget, TaskEvent

SAID = ("result", "message", "question")  # what an inbox holds (`TaskEvent.read_at` is kept for these only)
MAX_SEEN = 200  # ids one request may mark read: a page shows at most a hundred inbox items
MAX_QUESTIONS = 99  # the menu says "99" at most


def own_targets() -> list[str]:
    """The chats read in this console (web backend): Telegram's and webhooks' are read elsewhere."""
    return list(ChatTarget.objects.filter(backend="web").values_list("id", flat=True))


def counts() -> dict[str, int]:
    """{"inbox": unread results, answers and questions, "questions": questions waiting for an answer}."""
    targets = own_targets()
    inbox = TaskEvent.objects.filter(kind__in=SAID, read_at__isnull=True, target__in=targets).count()
    questions = len(history.open_questions(limit=MAX_QUESTIONS))
    return {"inbox": inbox, "questions": questions}


def seen(ids: list[Any]) -> int:
    """Mark these events read (those of them an inbox holds and not read yet); how many were."""
    clean = {int(i) for i in ids[:MAX_SEEN] if str(i).isdigit()}
    if not clean:
        return 0
    return TaskEvent.objects.filter(id__in=clean, kind__in=SAID, read_at__isnull=True).update(read_at=timezone.now())


def context(request: Any) -> dict[str, Any]:
    """The menu's counts for every page a logged-in owner sees (a template context processor)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"unread": SimpleLazyObject(counts)}  # counted only when the page shows the menu
