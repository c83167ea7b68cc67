"""``scrapy crawl``: Scrapy's own command, with start-up errors as one clean line.

Scrapy builds the spider and its components inside an asyncio task; an
exception raised there (e.g. the shared Redis does not answer) reaches the user
as "Task exception was never retrieved" and a traceback. This command collects
that exception itself: a :class:`crawler.core.startup.StartupError` is logged as its
one-line message at ERROR, anything else at ERROR with its traceback, and the
exit status is 1 either way (as Scrapy's own ``bootstrap_failed`` says).

Ctrl-C (SIGINT) while the spider is still opening: Scrapy stops nothing then (its
engine is not running yet) and the process ends without closing the spider, so
the worker's record would say "running" and nothing held would be handed back.
This command's crawler waits, on such a stop, until the engine runs (or the
start failed), then stops it as usual: the spider closes with reason
``shutdown``, as on any other Ctrl-C.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred
from twisted.internet.task import deferLater

from crawler.core.startup import StartupError

if TYPE_CHECKING:
    import argparse

logger = logging.getLogger(__name__)

OPENING_POLL = 0.05  # seconds between two looks at an opening engine asked to stop


def report_start_failure(exc: BaseException) -> None:
    if isinstance(exc, StartupError):
        logger.error("%s", exc)
    else:
        logger.error("The worker could not start", exc_info=exc)


def _task_done(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and (exc := task.exception()) is not None:
        report_start_failure(exc)


def _deferred_failed(failure: Any) -> None:
    report_start_failure(failure.value)


def _opening(crawler: Any) -> bool:
    """Crawling, but its engine not running yet (the spider is opening)."""
    if not crawler.crawling:
        return False
    try:
        engine = crawler.engine
    except AttributeError:  # not created yet
        return True
    return not engine.running


def stop_once_open(crawler: Any) -> None:
    """Make ``crawler``'s graceful stop wait until its engine runs, then stop it."""
    stop_now = crawler.stop_async

    async def stop_async() -> None:
        from twisted.internet import reactor  # the one Scrapy installed (never at import)

        while _opening(crawler):
            await maybe_deferred_to_future(deferLater(reactor, OPENING_POLL, lambda: None))
        await stop_now()

    crawler.stop_async = stop_async


class Command(ScrapyCrawlCommand):
    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            super().run(args, opts)  # Scrapy's usage errors
            return
        assert self.crawler_process
        crawler = self._create_crawler(args[0])
        stop_once_open(crawler)
        started: Any = self.crawler_process.crawl(crawler, **opts.spargs)
        if isinstance(started, asyncio.Future):
            started.add_done_callback(_task_done)
        elif isinstance(started, Deferred):
            started.addErrback(_deferred_failed)
        self.crawler_process.start()
        if self.crawler_process.bootstrap_failed:
            self.exitcode = 1
