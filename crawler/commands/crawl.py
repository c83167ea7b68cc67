"""``scrapy crawl``: Scrapy's own command, with start-up errors as one clean line.

Scrapy builds the spider and its components inside an asyncio task; an
exception raised there (e.g. the shared Redis does not answer) reaches the user
as "Task exception was never retrieved" and a traceback. This command collects
that exception itself: a :class:`crawler.startup.StartupError` is logged as its
one-line message at ERROR, anything else at ERROR with its traceback, and the
exit status is 1 either way (as Scrapy's own ``bootstrap_failed`` says).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from twisted.internet.defer import Deferred

from crawler.startup import StartupError

if TYPE_CHECKING:
    import argparse

logger = logging.getLogger(__name__)


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


class Command(ScrapyCrawlCommand):
    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            super().run(args, opts)  # Scrapy's usage errors
            return
        assert self.crawler_process
        started: Any = self.crawler_process.crawl(self._create_crawler(args[0]), **opts.spargs)
        if isinstance(started, asyncio.Future):
            started.add_done_callback(_task_done)
        elif isinstance(started, Deferred):
            started.addErrback(_deferred_failed)
        self.crawler_process.start()
        if self.crawler_process.bootstrap_failed:
            self.exitcode = 1
