"""The core's exceptions: one module, so callers catch by meaning, not by origin."""

from __future__ import annotations


class A2AConsoleError(Exception):
    """Base of every error the core raises on purpose. Messages are for people and never carry keys."""


class ConfigError(A2AConsoleError):
    """A setting from the environment has a bad value; the message names the variable and what is expected."""


class FileFormatError(A2AConsoleError):
    """A workspace file is malformed (bad JSON or a bad shape); the message names the file and the position."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message if message.startswith(path) else f"{path}: {message}")
        self.path = path


class ConflictError(A2AConsoleError):
    """A save was made from a version of the file that is no longer current. Nothing was written."""

    def __init__(self, path: str, current_text: str | None, current_version: str) -> None:
        super().__init__(f"{path} changed since it was read; reload it and apply the change again")
        self.path = path
        self.current_text = current_text
        self.current_version = current_version


class ValidationError(A2AConsoleError):
    """Input (an agents.json entry, a tool argument) is invalid; `problems` lists each one."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class ToolError(A2AConsoleError):
    """A failure already phrased for the caller (bad arguments, unknown agent, refused attachment)."""
