"""What a store backend implements, and the synchronous write of one batch through it.

A backend (:mod:`~crawler.pipelines.postgres`, :mod:`~crawler.pipelines.mongo`,
:mod:`~crawler.pipelines.embedded`) only says how to connect, how to write a
list of :class:`~crawler.pipelines.product_record.ProductRecord` in one
transaction, and which of its errors mean "the database is away"
(:attr:`ErrorKind.OUTAGE`) and which mean "this data is refused"
(:attr:`ErrorKind.DATA`). :meth:`StoreBackend.store_batch` does the rest of a
write: it turns items into records, connects when needed, and splits a batch
the store refuses until the bad rows are alone. Batching, retries and signals
are :class:`crawler.pipelines.batching.BatchingStorePipeline`'s.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from crawler.core.itemkinds import LISTED_PRODUCT, PRODUCT, kind_of_item
from crawler.pipelines.errors import ErrorKind, RowRejected, StoreUnavailable, describe_error
from crawler.pipelines.listed_record import ListedRecord
from crawler.pipelines.product_record import ProductRecord

if TYPE_CHECKING:
    from scrapy.settings import Settings

logger = logging.getLogger(__name__)


@dataclass
class BatchResult:
    """What became of a batch: positions (in the batch) stored, and rejected with a reason."""

    stored: list[int] = field(default_factory=list)
    rejected: list[tuple[int, str]] = field(default_factory=list)
    seconds: float = 0.0  # how long the successful write took


class StoreBackend:
    """A store's connection and its synchronous, bisecting write of a batch.

    Subclasses implement, all blocking and called from one thread at a time:
    :meth:`is_configured`, :meth:`store_location`, :meth:`connect`,
    :meth:`disconnect`, :meth:`write_records`, :meth:`error_kind`.
    :meth:`store_batch` is the whole synchronous write of a list of items,
    usable on its own (tests, tools).
    """

    backend: ClassVar[str] = "store"

    def __init__(self, worker: str) -> None:
        #: recorded as the writer of items that do not name their worker
        self.worker = worker
        self._connected = False

    # --- to implement by each backend (blocking) -------------------------------------

    @classmethod
    def is_configured(cls, settings: Settings) -> bool:
        raise NotImplementedError

    def store_location(self) -> str:
        """Where the products go, without secrets (published in the worker's record)."""
        raise NotImplementedError

    def connect(self) -> None:
        """Open the connection and create the tables or indexes if they do not exist."""
        raise NotImplementedError

    def disconnect(self) -> None:
        """Close the connection; never raises."""
        raise NotImplementedError

    def write_records(self, records: list[ProductRecord]) -> dict[str, str]:
        """Write the records in one transaction (or one acknowledged bulk write).

        Returns the urls the store refused row by row, with the reason (a store
        that refuses whole statements raises instead and is bisected). Must
        leave no transaction open when it raises.
        """
        raise NotImplementedError

    def error_kind(self, exc: BaseException) -> ErrorKind | None:
        """``OUTAGE``, ``DATA``, or ``None`` when the error is not recognised."""
        raise NotImplementedError

    # --- synchronous write of one batch ----------------------------------------------

    def prepare(self, item: Any) -> Any:
        """The record of one item (a :class:`ProductRecord`; a store of another kind of
        item has its own record, with a ``url``); raises :class:`RowRejected` for data no
        store accepts."""
        if kind_of_item(item, PRODUCT) is LISTED_PRODUCT:  # a card: an observation
            return ListedRecord.of(item, self.worker)
        return ProductRecord.of(item, self.worker)

    def store_batch(self, items: Sequence[Any]) -> BatchResult:
        """Write ``items`` now (blocking); good rows are committed whatever the bad ones do.

        Raises :class:`StoreUnavailable` when the store is away: nothing of the
        batch can be counted as written then (a retry writes it again, which the
        upserts make harmless).
        """
        rejected: dict[int, str] = {}
        records: list[tuple[int, Any]] = []
        for position, item in enumerate(items):
            try:
                records.append((position, self.prepare(item)))
            except RowRejected as exc:
                rejected[position] = str(exc)
        self._ensure_connected()
        self._write_bisecting(records, rejected)
        stored = [position for position in range(len(items)) if position not in rejected]
        return BatchResult(stored=stored, rejected=sorted(rejected.items()))

    def _ensure_connected(self) -> None:
        if self._connected:
            return
        try:
            self.connect()
        except Exception as exc:
            self._disconnect()
            raise StoreUnavailable(
                describe_error(exc), unexpected=self.error_kind(exc) is not ErrorKind.OUTAGE
            ) from exc
        self._connected = True

    def _write_bisecting(
        self, records: list[tuple[int, Any]], rejected: dict[int, str]
    ) -> None:
        if not records:
            return
        try:
            refused = self.write_records([record for _, record in records])
        except Exception as exc:
            kind = self.error_kind(exc)
            if kind is ErrorKind.DATA:
                if len(records) == 1:
                    rejected[records[0][0]] = describe_error(exc)
                    return
                middle = len(records) // 2
                self._write_bisecting(records[:middle], rejected)
                self._write_bisecting(records[middle:], rejected)
                return
            self._disconnect()
            raise StoreUnavailable(describe_error(exc), unexpected=kind is None) from exc
        for position, record in records:
            if record.url in refused:
                rejected[position] = refused[record.url]

    def _disconnect(self) -> None:
        self._connected = False
        try:
            self.disconnect()
        except Exception:  # noqa: BLE001 - a dead connection may fail to close
            logger.debug("Error closing the %s connection", self.backend, exc_info=True)
