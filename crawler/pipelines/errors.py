"""What can go wrong when a store writes: the store is away, or it refuses the data."""

from __future__ import annotations

import enum


class ErrorKind(enum.Enum):
    """How a backend's error is handled (:meth:`StoreBackend.error_kind`)."""

    OUTAGE = "outage"  # the store is away: keep the batch, retry later
    DATA = "data"  # the store refuses this data: find the bad rows, keep the rest


class RowRejected(Exception):
    """An item that cannot be stored as it is (bad data)."""


class StoreUnavailable(Exception):
    """The store cannot be reached (or failed in an unexpected way); the batch is kept."""

    def __init__(self, message: str, *, unexpected: bool = False) -> None:
        super().__init__(message)
        self.unexpected = unexpected


def describe_error(exc: BaseException) -> str:
    """``Type: first line of the message`` (at most 200 characters), for logs and records."""
    lines = str(exc).strip().splitlines()
    text = lines[0] if lines else ""
    if len(text) > 200:
        text = text[:197] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
