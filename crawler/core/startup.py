"""Errors that stop a worker before it crawls, reported as one clean line.

A component that finds, while it is built, that the worker cannot run (the
shared Redis does not answer, its ``WORKER_ID`` is taken by a live worker)
raises a :class:`StartupError` whose message says what is wrong and what to
do. The project's ``scrapy crawl`` (:mod:`crawler.commands.crawl`) logs that
message as one ERROR line, without a traceback, and exits with status 1.
"""

from __future__ import annotations


class StartupError(RuntimeError):
    """The worker cannot start; the message is the whole explanation."""
