"""The master applies the workers' network rule to seeds, in line order, names resolved at once."""

from __future__ import annotations

import io
import threading

from crawler.core.keys import CrawlKeys
from crawler.net.network import NetworkRule
from master.seeding import SeedLoader

ANSWERS = {"inside.test": ("10.0.0.7",), "public.test": ("93.184.216.34",)}


def _loader(rule: NetworkRule, errors: list, batch_size: int = 500) -> SeedLoader:
    return SeedLoader(None, CrawlKeys(), batch_size, on_error=errors.append, rule=rule)


def test_refused_seeds_are_reported_in_line_order_with_their_reason():
    errors: list = []
    data = (
        b"http://public.test/\n"  # 1 ok
        b"http://inside.test/\n"  # 2 resolves to a private address
        b'{"url": "http://public.test/a", "meta": {"proxy": "http://10.0.0.1:3128"}}\n'  # 3
        b"\xff\n"  # 4 not UTF-8
        b"http://0x7f000002:81/\n"  # 5 127.0.0.2
        b"http://127.0.0.1:8000/\n"  # 6 allowed
        b"http://[::ffff:127.0.0.2]/\n"  # 7
    )
    rule = NetworkRule("127.0.0.1", resolver=lambda host: ANSWERS.get(host, ()))
    counts = _loader(rule, errors, batch_size=2).load_stream(io.BytesIO(data))
    assert (counts.accepted, counts.rejected) == (2, 5)
    assert [error.lineno for error in errors] == [2, 3, 4, 5, 7]
    assert errors[0].reason == (
        "refused by the network rule: inside.test resolves to 10.0.0.7, which is a private "
        "address; list it in ALLOW_PRIVATE_NETWORKS to crawl it"
    )
    assert errors[1].reason.startswith("meta key(s) proxy not allowed")
    assert errors[3].reason.startswith("refused by the network rule: 0x7f000002 (127.0.0.2)")


def test_names_are_resolved_once_each_and_concurrently():
    calls: list[str] = []
    lock = threading.Lock()
    threads: set[int] = set()
    barrier = threading.Barrier(2, timeout=10)

    def resolver(host: str) -> tuple[str, ...]:
        with lock:
            calls.append(host)
            threads.add(threading.get_ident())
        if host in ("a.test", "b.test"):
            barrier.wait()  # both are being resolved at the same time, or this times out
        return ("93.184.216.34",)

    lines = [f"http://{host}/{i}" for i in range(50) for host in ("a.test", "b.test")]
    errors: list = []
    counts = _loader(NetworkRule("", resolver=resolver), errors).load_lines(lines)
    assert (counts.accepted, counts.rejected) == (100, 0), errors
    assert sorted(calls) == ["a.test", "b.test"]
    assert len(threads) == 2


def test_without_resolution_addresses_are_still_checked():
    rule = NetworkRule("", NetworkRule.no_resolution)
    assert rule.refusal("http://localhost/") is None  # a name: left to the workers
    assert rule.refusal("http://2130706433/") is not None  # an address in disguise
