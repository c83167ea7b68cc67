"""Hostile seeds reach nothing: a canary on 127.0.0.2 (only 127.0.0.1 is allowed) gets no hit.

Real processes throughout: ``python -m master seed``, a real ``scrapy crawl
ecommerce`` worker, the demo shop and a hostile site with an open redirect on
127.0.0.1, and a canary TCP server on 127.0.0.2 that counts every connection.
Linux routes all of 127.0.0.0/8 to the loopback interface, so without the
network rule each of these seeds would reach the canary.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from urllib.parse import quote

import pytest

from crawler.policy.seeds import Seed
from tests.support.canary import Canary
from tests.support.hostile_site import HostileSite

from .conftest import KEYS

pytestmark = pytest.mark.workers

SCRIPTED_DNS = "tests.support.scripted_dns.ScriptedDNSResolver"


def hostile_seeds(canary: Canary, shop_url: str) -> dict[str, str]:
    """Seed lines that would each make a worker connect to the canary (or elsewhere inside)."""
    port = canary.port
    return {
        "meta proxy": json.dumps({"url": shop_url, "meta": {"proxy": canary.url}}),
        "meta proxy, https": json.dumps(
            {"url": shop_url + "?p", "meta": {"proxy": f"127.0.0.2:{port}", "category": "x"}}
        ),
        "meta download_timeout": json.dumps({"url": shop_url, "meta": {"download_timeout": 1}}),
        "meta dont_filter": json.dumps({"url": canary.url, "meta": {"dont_filter": True}}),
        "direct": canary.url,
        "decimal": f"http://2130706434:{port}/decimal",
        "hex": f"http://0x7f000002:{port}/hex",
        "dotted hex": f"http://0x7f.0.0.2:{port}/dotted-hex",
        "octal": f"http://0177.0.0.2:{port}/octal",
        "short": f"http://127.2:{port}/short",
        "mapped IPv6": f"http://[::ffff:127.0.0.2]:{port}/mapped",
        "cloud metadata": "http://169.254.169.254/latest/meta-data/",
    }


def refused_dead_letters(crawl) -> list[dict]:  # type: ignore[no-untyped-def]
    records = [json.loads(raw) for raw in crawl.client.lrange(KEYS.dead, 0, -1)]
    assert all(record.get("refused") for record in records), records
    return records


def stored_products(crawl) -> int:  # type: ignore[no-untyped-def]
    with sqlite3.connect(crawl.workdir / "products.sqlite3") as db:
        return int(db.execute("select count(*) from products").fetchone()[0])


def test_master_rejects_every_hostile_seed_and_the_worker_refuses_the_redirect(crawl, shop_factory):
    shop = shop_factory(products=24)
    with Canary() as canary, HostileSite() as site:
        hostile = hostile_seeds(canary, shop.url)
        redirect = f"{site.url}redirect?to={quote(canary.url + 'from-redirect', safe='')}"
        lines = [shop.url, *hostile.values(), redirect]
        result = crawl.master("seed", "-", input="\n".join(lines) + "\n")
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == f"accepted 2, already seeded 0, rejected {len(hostile)}"
        errors = result.stderr.splitlines()
        assert [int(line.split(":")[0].removeprefix("line ")) for line in errors] == list(
            range(2, 2 + len(hostile))
        ), result.stderr
        for line, name in zip(errors, hostile, strict=True):
            if name.startswith("meta"):
                assert "not allowed: seed meta may only hold" in line, line
            elif name == "cloud metadata":
                assert "169.254.169.254 is a link-local address" in line, line
            else:
                assert "refused by the network rule" in line and "127.0.0.2" in line, line
        # nothing refused is recorded as seeded
        assert crawl.client.scard(KEYS.seeded) == 2

        worker = crawl.start_worker("w1")
        crawl.wait_workers(timeout=180)
        assert canary.hits == [], canary.hits
        site_requests = site.requests

    assert worker.process.returncode == 0, worker.log()[-4000:]
    crawl.assert_clean_logs()
    # robots.txt, the sitemap guessed when it names none, and the seed
    assert site_requests[0] == "/robots.txt"
    assert sorted(site_requests[1:]) == sorted(
        ["/sitemap.xml", redirect.removeprefix(site.url.rstrip("/"))]
    )
    assert stored_products(crawl) == 24

    # the redirect target was refused at the worker: a dead letter with its reason
    [dead] = refused_dead_letters(crawl)
    assert dead["url"] == canary.url + "from-redirect"
    assert "127.0.0.2 is a loopback address" in dead["reason"]
    assert dead["request"], "kept for requeueing once the network is allowed"
    log = worker.log()
    assert f"WARNING: Dead letter: {canary.url}from-redirect (refused: " in log
    status = json.loads(crawl.master("status", "--json").stdout)
    assert status["requests_refused"] == 1
    assert status["dead_letters"] == 1
    assert "requests refused" in crawl.master("status").stdout

    # seeding the refused lines again: rejected again, never "already seeded"
    again = crawl.master("seed", "-", input="\n".join(hostile.values()) + "\n")
    assert again.stdout.strip() == f"accepted 0, already seeded 0, rejected {len(hostile)}"


def test_hostile_seeds_pushed_straight_into_redis_become_dead_letters(
    crawl, shop_factory, tmp_path: Path
):
    shop = shop_factory(products=24)
    with Canary() as canary, HostileSite() as site:
        hostile = hostile_seeds(canary, shop.url)
        hostile["redirect"] = f"{site.url}redirect?to={quote(canary.url + 'redirected', safe='')}"
        # a name whose DNS answer is the canary at connection time (the system resolver,
        # which the middleware asks first, does not know it)
        hostile["rebinding name"] = f"http://canary.test:{canary.port}/rebound"
        answers = tmp_path / "dns.json"
        answers.write_text(json.dumps({"canary.test": "127.0.0.2"}))
        payloads = [Seed(shop.url).to_json()]
        payloads += [
            line if line.startswith("{") else json.dumps({"url": line}) for line in hostile.values()
        ]
        crawl.client.rpush(KEYS.start_urls, *payloads)
        # as if the master had accepted them all: refusals must take them out again
        crawl.client.sadd(KEYS.seeded, *[Seed(json.loads(p)["url"]).fingerprint for p in payloads])

        crawl.env["SCRIPTED_DNS_FILE"] = str(answers)
        worker = crawl.start_worker("w1", TWISTED_DNS_RESOLVER=SCRIPTED_DNS)
        crawl.wait_workers(timeout=180)
        assert canary.hits == [], canary.hits
        assert [p for p in site.requests if p.startswith("/redirect")], site.requests

    assert worker.process.returncode == 0, worker.log()[-4000:]
    crawl.assert_clean_logs()
    assert stored_products(crawl) == 24

    dead = refused_dead_letters(crawl)
    assert len(dead) == len(hostile), json.dumps(dead, indent=1)
    reasons = "\n".join(f"{record['url']} {record['reason']}" for record in dead)
    for name, line in hostile.items():
        if name.startswith("meta"):
            # refused as a seed (forbidden meta), never turned into a request
            assert any(
                r["url"] is None and "not allowed: seed meta" in r["reason"] and line in r["reason"]
                for r in dead
            ), (name, reasons)
    by_url = {record["url"]: record["reason"] for record in dead if record["url"]}
    assert "169.254.169.254 is a link-local address" in by_url[hostile["cloud metadata"]]
    for name in ("direct", "decimal", "hex", "dotted hex", "octal", "short", "mapped IPv6"):
        [reason] = [r for url, r in by_url.items() if url.endswith(hostile[name][-6:])]
        assert reason.startswith("refused: ") and "127.0.0.2" in reason, (name, reason)
    assert "127.0.0.2 is a loopback address" in by_url[canary.url + "redirected"]
    # caught at connection time by the resolver, with its reason, not retried
    assert by_url[hostile["rebinding name"]] == (
        "refused: at connection time: canary.test resolved to 127.0.0.2, which is a loopback "
        "address; list it in ALLOW_PRIVATE_NETWORKS to crawl it"
    )
    log = worker.log()
    assert log.count("WARNING: Dead letter:") == len(hostile)
    # its robots.txt, then the page: each refused by the resolver
    assert log.count("Refused to connect: canary.test resolved to 127.0.0.2") == 2

    status = json.loads(crawl.master("status", "--json").stdout)
    assert status["requests_refused"] == len(hostile)
    # refused seeds are no longer "seeded": seeding one again pushes it again
    assert crawl.client.sismember(KEYS.seeded, Seed(hostile["rebinding name"]).fingerprint) == 0
    assert crawl.client.sismember(KEYS.seeded, Seed(shop.url).fingerprint) == 1
    again = crawl.master("seed", "-", input=hostile["rebinding name"] + "\n")
    assert again.stdout.strip() == "accepted 1, already seeded 0, rejected 0", again.stderr


def test_a_proxy_from_the_environment_is_held_to_the_rule(crawl, shop_factory):
    shop = shop_factory(products=12)
    with Canary() as canary:
        crawl.seed(shop.url)
        crawl.env["http_proxy"] = f"http://2130706434:{canary.port}"
        worker = crawl.start_worker("w1")
        crawl.wait_workers(timeout=180)
        assert canary.hits == [], canary.hits
    assert worker.process.returncode == 0, worker.log()[-4000:]
    crawl.assert_clean_logs()
    assert shop.read_access_log() == []
    [dead] = refused_dead_letters(crawl)
    assert dead["url"] == shop.url
    assert dead["reason"] == (
        f"refused: proxy http://2130706434:{canary.port}: 2130706434 (127.0.0.2) is a "
        "loopback address; list it in ALLOW_PRIVATE_NETWORKS to crawl it"
    )
