"""Run workers against one mongomock database: the Mongo fake cannot cross processes.

    python -m tests.support.mongomock_workers --workers w1,w2 --dump out.json \
        [--load in.json] [-s NAME=VALUE]

Runs one ``ecommerce`` crawler per worker id in this process (same reactor,
same Redis, same fake database), with the real project settings and
``MONGO_URI`` set, then writes the fake's ``products`` and ``price_history``
collections to ``--dump``. ``--load`` restores a previous dump first, so a
re-crawl can be tested across two runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import mongomock
from bson import json_util
from scrapy.crawler import Crawler, CrawlerProcess
from scrapy.utils.project import get_project_settings

from crawler.pipelines.mongo import MongoUpsertPipeline
from crawler.spiders.ecommerce import EcommerceSpider
from tests.support.mongofake import install_pymongo_compat

COLLECTIONS = ("products", "price_history")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", required=True)
    parser.add_argument("--dump", type=Path, required=True)
    parser.add_argument("--load", type=Path)
    parser.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args(argv)

    install_pymongo_compat()
    client: Any = mongomock.MongoClient()
    settings = get_project_settings()
    for assignment in args.set:
        name, value = assignment.split("=", 1)
        settings.set(name, value, priority="cmdline")
    database = client[settings.get("MONGO_DATABASE") or "crawler"]
    if args.load:
        saved = json_util.loads(args.load.read_text())
        for name in COLLECTIONS:
            if saved[name]:
                database[name].insert_many(saved[name])
    MongoUpsertPipeline.client_factory = staticmethod(lambda uri: client)

    process = CrawlerProcess(settings)
    for n, worker in enumerate(args.workers.split(",")):
        worker_settings = settings.copy()
        worker_settings.set("WORKER_ID", worker, priority="cmdline")
        # the first crawler installs the reactor, as CrawlerProcess would
        process.crawl(Crawler(EcommerceSpider, worker_settings, init_reactor=n == 0))
    process.start()
    args.dump.write_text(
        json_util.dumps({name: list(database[name].find()) for name in COLLECTIONS})
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
