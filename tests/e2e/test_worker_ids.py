"""Worker ids: unique by default, one live process per id, the dead's leases taken over."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess

import pytest

from .conftest import (
    CRAWL_TIMEOUT,
    KEYS,
    START_TIMEOUT,
    freeze_when,
    page_fetches,
    parsed_pages,
    wait_until,
)

pytestmark = pytest.mark.workers

# a pid namespace of its own (the worker is pid 1 there), killed with its unshare; a
# user other than root may make one inside a user namespace of its own, where it is root
PID_NAMESPACE = (
    "unshare",
    *(() if os.geteuid() == 0 else ("--user", "--map-root-user")),
    "--pid",
    "--fork",
    "--mount-proc",
    "--kill-child",
)


def test_workers_in_their_own_pid_namespaces_get_distinct_ids(crawl, shop_factory):
    refused = subprocess.run([*PID_NAMESPACE, "true"], capture_output=True, text=True)
    if refused.returncode:
        pytest.skip(f"this machine gives this user no pid namespace: {refused.stderr.strip()}")
    # Both workers are pid 1 on one hostname, without WORKER_ID: named
    # <hostname>-<pid>, they were one worker "vm-1" that took its twin's live leases.
    shop = shop_factory(products=120, latency_ms=30)
    crawl.pause()  # the first open waits for the second (see Crawl.wait_open)
    for n in (1, 2):
        crawl.start_worker(
            None,
            name=f"ns{n}",
            prefix=PID_NAMESPACE,
            CONCURRENT_REQUESTS=4,
            MAX_IDLE_TIME_BEFORE_CLOSE=5,
        )
    crawl.wait_open(2)
    crawl.seed(shop.url)
    crawl.resume()
    crawl.wait_workers()
    crawl.assert_clean_logs()

    fetched = page_fetches(shop)
    expected = shop.catalog.crawlable_paths()
    assert set(fetched) == expected
    twice = {path: n for path, n in fetched.items() if n > 1}
    assert not twice, f"fetched more than once: {twice}"

    records = {
        worker.decode(): json.loads(raw)
        for worker, raw in crawl.client.hgetall(KEYS.workers).items()
    }
    pattern = re.compile(rf"{re.escape(socket.gethostname())}-1-[0-9a-f]{{4}}")
    assert len(records) == 2, records
    assert all(pattern.fullmatch(worker) for worker in records), sorted(records)
    assert all(record["pid"] == 1 for record in records.values()), records
    assert sum(record["pages"] for record in records.values()) == parsed_pages(shop)
    for worker in crawl.workers:
        assert "left by an earlier run" not in worker.log(), worker.log()[-3000:]

    report = crawl.master("report", "--json")
    assert report.returncode == 0, report.stderr
    assert all(worker in report.stdout for worker in records), report.stdout
    status = json.loads(crawl.master("status", "--json").stdout)
    assert status["known_workers"] == 2, status


def test_a_live_worker_id_is_refused(crawl, shop_factory):
    first = crawl.start_worker("twin", MAX_IDLE_TIME_BEFORE_CLOSE=0)
    crawl.wait_running(1)
    second = crawl.start_worker("twin", name="twin-again")
    code = second.wait(START_TIMEOUT)
    log = second.log()
    assert code == 1, log[-3000:]
    errors = [line for line in log.splitlines() if " ERROR: " in line]
    assert len(errors) == 1, log[-3000:]
    assert "WORKER_ID 'twin' is in use by a live worker" in errors[0]
    assert "Traceback" not in log, log[-3000:]
    assert "Spider opened" not in log, log[-3000:]
    # the live worker is untouched, and still works
    assert first.running
    shop = shop_factory(products=5, latency_ms=5)
    crawl.seed(shop.url)
    wait_until(
        lambda: set(page_fetches(shop)) == shop.catalog.crawlable_paths(),
        CRAWL_TIMEOUT,
        "the shop crawled",
    )
    assert first.stop() == 0
    crawl.workers.remove(second)  # its log holds the expected ERROR
    crawl.assert_clean_logs()


@pytest.mark.timeout(600)  # two rounds of worker start-ups
def test_the_id_of_a_killed_worker_is_taken_over_with_its_leases(crawl, shop_factory):
    shop = shop_factory(products=60, latency_ms=200)
    crawl.seed(shop.url)
    # A heartbeat that outlives the successor's start-up, however long it takes, so
    # that it must wait for it (15 s was shorter than a start-up on a busy machine):
    # once the successor says it waits, the test lets the heartbeat run out.
    victim = crawl.start_worker("phoenix", CONCURRENT_REQUESTS=4, LEASE_WORKER_TIMEOUT=600)
    freeze_when(
        victim, lambda: bool(crawl.client.hlen(KEYS.inflight("phoenix"))), CRAWL_TIMEOUT, "leases"
    )
    victim.kill()  # SIGKILL: its heartbeat lives on until it expires
    assert crawl.client.exists(KEYS.alive("phoenix"))
    successor = crawl.start_worker("phoenix", name="phoenix-again")
    wait_until(
        lambda: "has a heartbeat in Redis: waiting" in successor.log() or not successor.running,
        START_TIMEOUT,
        "the successor to wait for the dead heartbeat",
    )
    crawl.client.pexpire(KEYS.alive("phoenix"), 500)  # shorter, never renewed: it runs out
    assert successor.wait(CRAWL_TIMEOUT) == 0, successor.log()[-3000:]
    log = successor.log()
    assert "has a heartbeat in Redis: waiting" in log, log[-3000:]
    assert "left by an earlier run of worker phoenix" in log, log[-3000:]
    assert set(page_fetches(shop)) == shop.catalog.crawlable_paths()
    assert not list(crawl.client.scan_iter(KEYS.inflight_pattern))
    crawl.workers.remove(victim)
    crawl.assert_clean_logs()
