"""Errors that mean "bad input or parameters" (one-line message, exit code 2), as opposed to bugs."""
from __future__ import annotations


class InputError(ValueError):
    """Bad input data or parameters; the message is one line and names the file, column, row or option."""


def one_line(message) -> str:
    """Collapse a message to one line (tracebacks and Spark errors never reach the user).

    For an exception raised in a Spark Python worker, the line kept is the worker's own error
    (``SomeError: ...``), not Spark's wrapper text.
    """
    text = str(message).strip()
    if not text:
        return "unknown error"
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if "Traceback (most recent call last)" in text:
        errs = [ln for ln in lines if not ln.startswith(("File ", "at ", "^", "~")) and ":" in ln
                and ln.split(":")[0].replace(".", "").isidentifier() and ln.split(":")[0].endswith(("Error", "Exception"))]
        if errs:
            return errs[-1]
    return lines[0]
