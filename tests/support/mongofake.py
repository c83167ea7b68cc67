"""mongomock as a stand-in for MongoDB (no server runs on the test machines).

mongomock 4.3 predates pymongo 4.9's ``sort=`` argument of bulk updates;
:func:`install_pymongo_compat` teaches its bulk builder to accept (and ignore) it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mongomock.collection import BulkOperationBuilder


def install_pymongo_compat() -> Callable[[], None]:
    """Patch mongomock's bulk builder; returns a function that undoes it."""
    original = BulkOperationBuilder.add_update

    def add_update(
        self: Any,
        selector: Any,
        doc: Any,
        multi: bool = False,
        upsert: bool = False,
        sort: Any = None,
        **kwargs: Any,
    ) -> Any:
        return original(self, selector, doc, multi, upsert, **kwargs)

    BulkOperationBuilder.add_update = add_update  # type: ignore[method-assign]

    def undo() -> None:
        BulkOperationBuilder.add_update = original  # type: ignore[method-assign]

    return undo
