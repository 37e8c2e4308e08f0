"""How Django's request and security loggers record a client's mistake: one line, not a traceback.

A foreign `Host` header, a path outside the static folder or a malformed form are the sender's doing,
answered 4xx; Django logs them (on `django.security.<ExceptionName>` at ERROR, or on `django.request`)
with the full traceback, 31 lines each, which anyone can make the console write as often as they like.
Server errors (5xx) keep theirs.
"""

from __future__ import annotations

import logging

# Django logs a SuspiciousOperation on `django.security.<class name>`, and a logger's filters do not apply
# to its children: each is named.
CLIENT_ERROR_LOGGERS = (
    "django.request",
    "django.security.csrf",
    *(
        f"django.security.{name}"
        for name in (
            "SuspiciousOperation",
            "DisallowedHost",
            "DisallowedRedirect",
            "SuspiciousFileOperation",
            "SuspiciousMultipartForm",
            "TooManyFieldsSent",
            "TooManyFilesSent",
            "RequestDataTooBig",
            "SuspiciousSession",
            "InvalidSessionKey",
        )
    ),
)


class ClientErrorLine(logging.Filter):
    """A record about a 4xx answer loses its traceback and is a warning; anything else passes unchanged."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and 400 <= status < 500:
            record.exc_info = None
            record.exc_text = None
            record.stack_info = None
            if record.levelno > logging.WARNING:
                record.levelno, record.levelname = logging.WARNING, logging.getLevelName(logging.WARNING)
        return True
