"""A process's memory as Linux tells it: the resident size now and its peak, for tests that bound what an
operation costs in memory."""

from __future__ import annotations

from pathlib import Path


def status_kb(field: str, pid: int | str = "self") -> int:
    """A field of /proc/<pid>/status in kB: VmRSS (resident now) or VmHWM (the peak)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise LookupError(field)


def reset_peak(pid: int | str = "self") -> None:
    """Make VmHWM (the peak RSS) start again from the current RSS (Linux >= 4.0)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")
