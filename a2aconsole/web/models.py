"""What the database holds: chat targets with their API tokens, their web inbox, each task's event history, and
the audit log. A target's inbound hop count is on its row (`inbound_hops`); `web.inbound` sets it.

Agents and watches are NOT here: `agents.json` and `pending.json` are the truth for those. The cards the agents
published are kept (a bounded history per agent) to show what changed, never to stand in for the file.
"""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone

target_id_validator = RegexValidator(
    r"^[a-z0-9][a-z0-9_-]{0,63}$", "Use 1-64 of a-z, 0-9, _ and -, starting with a letter or digit."
)


class ChatTarget(models.Model):
    """A chat that asks agents for work and receives their results (the spec's session / target)."""

    BACKENDS = [("web", "Console inbox"), ("telegram", "Telegram"), ("webhook", "Webhook")]

    id = models.CharField(primary_key=True, max_length=64, validators=[target_id_validator])
    name = models.CharField(max_length=200)
    workspace = models.CharField(max_length=1000, help_text="Absolute path of the workspace folder")
    backend = models.CharField(max_length=20, choices=BACKENDS, default="web")
    backend_settings = models.JSONField(default=dict, blank=True)
    inbound_hops = models.PositiveIntegerField(default=0)
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.id})"


TOKEN_PREFIX = "a2ac_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class ApiToken(models.Model):
    """A bearer token for `POST /api/v1/targets/<id>/tool`: how an agent host proves it speaks for one chat target.

    Only a SHA-256 of each token is stored; the token itself is shown once, when it is made. A token is bound to
    one target, so a host holding it can only use that target's workspace and hops. Revoked tokens are kept for
    the record. (The table keeps its first name, from when the API app held it.)
    """

    target = models.ForeignKey(ChatTarget, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=200, blank=True)
    token_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=16, help_text="The token's first characters, to tell tokens apart")
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "api_apitoken"
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.target_id})"

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    @classmethod
    def issue(cls, target: ChatTarget, name: str = "") -> tuple[ApiToken, str]:
        """A new token for `target`: the row, and the token itself (shown once, never stored)."""
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        row = cls.objects.create(target=target, name=name, token_hash=hash_token(token), prefix=token[:12])
        return row, token

    def revoke(self) -> None:
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])


class InboxItem(models.Model):
    """A result delivered to a chat target's inbox (the `web` backend), or a copy of one sent elsewhere."""

    target = models.ForeignKey(ChatTarget, on_delete=models.CASCADE, related_name="inbox")
    watch_id = models.CharField(max_length=100, blank=True, db_index=True)
    agent = models.CharField(max_length=40, blank=True)
    task_id = models.CharField(max_length=200, blank=True, db_index=True)
    context_id = models.CharField(max_length=200, blank=True)
    state = models.CharField(max_length=40, blank=True)
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["target", "watch_id"], condition=~models.Q(watch_id=""), name="inbox_once_per_watch"
            )
        ]


class TaskEvent(models.Model):
    """One thing that happened to a remote task: state change, message, artifact, watch armed/ended, delivery."""

    workspace = models.CharField(max_length=1000)
    agent = models.CharField(max_length=40, db_index=True)
    task_id = models.CharField(max_length=200, db_index=True)
    context_id = models.CharField(max_length=200, blank=True)
    target = models.CharField(max_length=64, blank=True, db_index=True)
    kind = models.CharField(max_length=40)
    state = models.CharField(max_length=40, blank=True)
    text = models.TextField(blank=True)
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(db_index=True)
    # A watch's result, end and delivery carry a stable key (`core.events.watch_event_key`): emitted again after
    # a crash, they are kept once. Other events have none.
    key = models.CharField(max_length=100, blank=True, default="")
    # When the owner saw it (a result, answer or question shown in a browser tab): the inbox's unread ones are
    # those without. Other events are never read.
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["key"], condition=~models.Q(key=""), name="task_event_once_per_key")
        ]
        indexes = [
            models.Index(fields=["target", "context_id", "id"], name="task_event_thread"),
            models.Index(  # the inbox and its unread count: a few rows, however long the history
                fields=["target", "id"],
                condition=models.Q(kind__in=["result", "message", "question"]),
                name="task_event_said",
            ),
            models.Index(
                fields=["target"],
                condition=models.Q(kind__in=["result", "message", "question"], read_at__isnull=True),
                name="task_event_unread",
            ),
            models.Index(  # the open questions (every page's badge): the latest few, not a scan of the history
                fields=["created_at", "id"], condition=models.Q(kind="question"), name="task_event_questions"
            ),
        ]


class AuditEntry(models.Model):
    """One change that matters later (an agent edit, an API token, a login or password change): who, when,
    what. Written right after the change itself succeeded; it names agents and tokens, never a key, token
    or password."""

    ACTIONS = [
        ("login", "Logged in"),
        ("owner-created", "Created the owner account"),
        ("password-changed", "Changed the password"),
        ("agent-added", "Added an agent"),
        ("agent-edited", "Edited an agent"),
        ("agent-deleted", "Deleted an agent"),
        ("agent-origin-trusted", "Let an agent's card send calls to another origin"),
        ("agent-origin-revoked", "Stopped an agent's calls to another origin"),
        ("agents-file-saved", "Saved agents.json as text"),
        ("agents-file-kept", "Kept agents.json as it was after a conflict"),
        ("token-created", "Made an API token"),
        ("token-revoked", "Revoked an API token"),
    ]

    at = models.DateTimeField(default=timezone.now, db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    username = models.CharField(max_length=150, blank=True, help_text="Kept when the account is gone")
    address = models.GenericIPAddressField(null=True, blank=True)
    action = models.CharField(max_length=40, choices=ACTIONS)
    subject = models.CharField(max_length=200, blank=True, help_text="The agent's name or the token's label")
    target = models.CharField(max_length=64, blank=True, help_text="The chat target, for tokens")
    detail = models.CharField(max_length=1000, blank=True)

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.username or '-'} {self.action} {self.subject}"


class CardSnapshot(models.Model):
    """One version of an agent's card as the console fetched it, so a refetch can say what changed since.

    A refetch of the same card only moves `fetched_at`; a different card is a new row with `changes` against
    the one before. Bounded: the newest `card_history.KEEP` rows per agent, each card capped in size. Cards
    are stored scrubbed (the entry's key blanked, URLs as scheme, host, port and path). `checked_at` and
    `error` on an agent's newest row say whether it answered the last time it was asked.
    """

    workspace = models.CharField(max_length=1000)
    agent = models.CharField(max_length=40)
    card = models.JSONField(default=dict, blank=True, help_text="The scrubbed card; {} when never reached")
    digest = models.CharField(max_length=64, blank=True, help_text="sha256 of the whole scrubbed card")
    trimmed = models.BooleanField(default=False, help_text="The card was too big: only its summary is kept")
    extended = models.BooleanField(default=False, help_text="The extended card, read with the key")
    changes = models.JSONField(default=dict, blank=True, help_text="What changed from the version before")
    first_fetched_at = models.DateTimeField(null=True, blank=True)
    fetched_at = models.DateTimeField(null=True, blank=True, help_text="The last fetch that returned this card")
    checked_at = models.DateTimeField(help_text="The last time the agent was asked")
    error = models.CharField(max_length=500, blank=True, help_text="Why the last fetch failed; empty when it worked")

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["agent", "workspace"], name="card_snapshot_agent")]

    def __str__(self) -> str:
        return f"{self.agent} card {self.digest[:8] or '(none)'}"


class TaskRecord(models.Model):
    """One remote task the console has seen, folded from its events (`web.task_index`): what the Tasks page
    lists and pages through, so finished tasks stay findable after their watch is gone and after restarts.
    `TaskEvent` rows stay the full story (whole texts, files); this row is their short summary, kept in the same
    transaction: about 1 KB a task, so a free-text search scans little."""

    agent = models.CharField(max_length=40)
    task_id = models.CharField(max_length=200)
    workspace = models.CharField(max_length=1000, blank=True)
    target = models.CharField(max_length=64, blank=True)
    context_id = models.CharField(max_length=200, blank=True, db_index=True)
    state = models.CharField(max_length=40, blank=True)
    source = models.CharField(max_length=20, blank=True, help_text="How its watch followed it (push, poll...)")
    sent_text = models.TextField(blank=True, help_text="The owner's first message (a preview)")
    last_text = models.TextField(blank=True, help_text="The latest message, status or result (a preview)")
    result_text = models.TextField(blank=True, help_text="The final result or open question (its beginning)")
    progress = models.TextField(
        blank=True, help_text="What the agent said last while working: a status message or an artifact (a preview)"
    )
    progress_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True, db_index=True)
    run_seconds = models.FloatField(null=True, blank=True, help_text="Started to finished")
    events = models.PositiveIntegerField(default=0)
    search_words = models.TextField(
        blank=True, default="", help_text="What free text searches: each word of the ids and texts once, lower case"
    )

    class Meta:
        ordering = ["-started_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["agent", "task_id"], name="task_record_once")]
        # The Tasks page (`views.tasklist`) reads a page by a range of one of these, whatever the history's size:
        # each sort is (column, started_at, id) or (column, id), each filter leads one, state: with each sort.
        indexes = [
            models.Index(fields=["started_at", "id"], name="task_record_started"),
            models.Index(fields=["updated_at", "id"], name="task_record_updated"),
            models.Index(fields=["agent", "started_at", "id"], name="task_record_agent_started"),
            models.Index(fields=["target", "started_at", "id"], name="task_record_target_started"),
            models.Index(fields=["state", "started_at", "id"], name="task_record_state_started"),
            models.Index(fields=["source", "started_at", "id"], name="task_record_source_started"),
            models.Index(fields=["state", "updated_at", "id"], name="task_record_state_updated"),
            models.Index(fields=["state", "agent", "started_at", "id"], name="task_record_state_agent"),
            models.Index(fields=["state", "target", "started_at", "id"], name="task_record_state_target"),
            # sort by duration: finished by run_seconds, running (run_seconds NULL, a few) by started_at
            models.Index(
                fields=["run_seconds", "id"], condition=models.Q(run_seconds__isnull=False), name="task_record_duration"
            ),
            models.Index(
                fields=["started_at", "id"], condition=models.Q(run_seconds__isnull=True), name="task_record_running"
            ),
            # agent: and chat: (a few percent of the tasks each) with each sort, and state: by duration (it reads
            # one part only: `task_pages.read_page`): without them the matches are all read and sorted
            models.Index(
                fields=["state", "run_seconds", "id"],
                condition=models.Q(run_seconds__isnull=False),
                name="task_record_state_duration",
            ),
            models.Index(
                fields=["agent", "run_seconds", "id"],
                condition=models.Q(run_seconds__isnull=False),
                name="task_record_agent_duration",
            ),
            models.Index(
                fields=["agent", "started_at", "id"],
                condition=models.Q(run_seconds__isnull=True),
                name="task_record_agent_running",
            ),
            models.Index(
                fields=["target", "run_seconds", "id"],
                condition=models.Q(run_seconds__isnull=False),
                name="task_record_target_duration",
            ),
            models.Index(fields=["agent", "updated_at", "id"], name="task_record_agent_updated"),
            models.Index(fields=["target", "updated_at", "id"], name="task_record_target_updated"),
            models.Index(fields=["agent", "target", "started_at", "id"], name="task_record_agent_target"),
            models.Index(fields=["target", "agent", "started_at", "id"], name="task_record_target_agent"),
            # the live tabs' progress mark (`task_index.progress_at`): the latest line told, every few seconds
            models.Index(fields=["progress_at"], name="task_record_progress_at"),
        ]

    def __str__(self) -> str:
        return f"{self.agent} {self.task_id} ({self.state})"


class OutgoingMessage(models.Model):
    """A message the owner sent from the console that the agent has not taken yet (`web.sends`).

    The send goes on in the background, so the page never waits on it: while it goes out the thread shows it
    as "sending"; once the agent has the message (its `sent` event is stored) the row is gone, in the same
    transaction. A send that fails keeps its row, marked failed with the reason, so what the owner typed (and
    attached) is there for Retry and Edit.
    """

    SENDING, FAILED = "sending", "failed"
    STATES = [(SENDING, "Sending"), (FAILED, "Not sent")]

    target = models.ForeignKey(ChatTarget, on_delete=models.CASCADE, related_name="outgoing")
    agent = models.CharField(max_length=40)
    text = models.TextField(blank=True)
    files = models.JSONField(default=list, blank=True, help_text="Workspace paths of the attached files")
    data = models.JSONField(null=True, blank=True, help_text="A data part it carries (a filled form's values)")
    context_id = models.CharField(max_length=200, blank=True)
    task_id = models.CharField(max_length=200, blank=True, help_text="The task it answers, if any")
    state = models.CharField(max_length=20, choices=STATES, default=SENDING)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["target", "created_at"], name="outgoing_target_created")]

    def __str__(self) -> str:
        return f"{self.agent} {self.state}: {self.text[:40]}"
