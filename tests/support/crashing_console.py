"""`manage.py` that SIGKILLs itself at one instant of finishing a watch, for the crash tests:
`python -m tests.support.crashing_console serve --port 0` with `A2ACONSOLE_TEST_CRASH_AT=<phase>`.

The phases, in the order a finishing watch passes them (the claim has written the result to pending.json):
`before-result` (the result or question event is not stored), `before-ended` (the result is, `watch.ended`
is not), `before-delivery` (both are, the chat has nothing), `after-delivery` (the chat has the result, the
record is still kept). The process dies the way a power cut or the OOM killer kills it: no cleanup runs.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

CRASH_ENV = "A2ACONSOLE_TEST_CRASH_AT"
PHASES = ("before-result", "before-ended", "before-delivery", "after-delivery")


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def arm(phase: str) -> None:
    """Wrap the console's event sink and delivery so that the process dies at `phase`."""
    from a2aconsole.web import broadcast
    from a2aconsole.web.delivery import targets as delivery

    if phase not in PHASES:
        raise SystemExit(f"{CRASH_ENV}={phase!r}: expected one of {', '.join(PHASES)}")
    real_emit = broadcast.ChannelsBroadcast.emit
    real_deliver = delivery.TargetDelivery.deliver

    async def emit(self: Any, event: Any) -> None:
        if (phase, event.kind) in (("before-result", "result"), ("before-result", "question")):
            die()
        if (phase, event.kind) == ("before-ended", "watch.ended"):
            die()
        await real_emit(self, event)

    async def deliver(self: Any, target: str, text: str, record: Any = None) -> bool:
        if phase == "before-delivery":
            die()
        ok = await real_deliver(self, target, text, record)
        if phase == "after-delivery" and ok:
            die()
        return ok

    broadcast.ChannelsBroadcast.emit = emit  # type: ignore[method-assign]
    delivery.TargetDelivery.deliver = deliver  # type: ignore[method-assign]


def main(argv: list[str]) -> None:
    import django
    from django.core.management import execute_from_command_line

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "a2aconsole.settings")
    django.setup()
    phase = os.environ.get(CRASH_ENV, "")
    if phase:
        arm(phase)
    execute_from_command_line(["manage.py", *argv])


if __name__ == "__main__":
    main(sys.argv[1:])
