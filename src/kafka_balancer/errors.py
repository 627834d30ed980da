"""Errors that reach the user: one line that names what is wrong, plus a hint on how to fix it.

Every command catches :class:`BalancerError` at the CLI edge and prints it without a traceback
(exit code 2 for bad input, 1 for a failed operation).
"""

from __future__ import annotations


class BalancerError(Exception):
    """Base of all errors meant for the user."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def render(self) -> str:
        text = f"error: {self.message}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class InputError(BalancerError):
    """The user's input (a file, a flag, a plan) is invalid. Exit code 2."""

    exit_code = 2


class ClusterError(BalancerError):
    """A live cluster refused or failed an operation, or could not be reached."""

    exit_code = 1
