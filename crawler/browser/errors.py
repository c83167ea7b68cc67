"""What a page that could not be rendered fails with."""

from __future__ import annotations

#: Kinds of rendering failure (stat ``browser/errors/<kind>``).
KINDS = ("timeout", "crash", "too_large", "launch", "error")


class RenderFailed(Exception):
    """A page could not be rendered: ``kind`` (one of :data:`KINDS`) and why.

    It is in ``RETRY_EXCEPTIONS`` (``crawler/settings.py``): the request is retried
    through the shared queue like a failed download, then becomes a dead letter
    whose reason is this message (``RenderFailed: timeout: ...``).
    """

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(f"{kind}: {reason}")
        self.kind = kind
        self.reason = reason
