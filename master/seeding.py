"""Seeding: validate a seed file and push the new start URLs, one round trip per batch.

Every line goes through :func:`crawler.policy.seeds.parse_seed_lines`, the validation
the workers apply too, then through the network rule the workers apply
(:class:`crawler.net.network.NetworkRule`, from ``ALLOW_PRIVATE_NETWORKS``): a URL
whose host is, means or resolves to a loopback, private, link-local ... address
not allowed is refused here rather than by a worker. A refused line is reported
(number and reason) and never pushed, nor recorded as seeded. A valid seed is
skipped when its :attr:`~crawler.policy.seeds.Seed.fingerprint` was seeded before (set
``<spider>:seeded``) or appeared earlier in the same input; the others are
pushed to ``<spider>:start_urls`` as :meth:`~crawler.policy.seeds.Seed.to_json`.

Each batch is one call of a Lua script, registered once, that for every seed
does ``SADD seeded fp`` and, only when the fingerprint is new, ``RPUSH
start_urls payload``: the check and the push are atomic, so two masters seeding
the same file at once still push every URL once.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, BinaryIO

import redis

from crawler.core.keys import CrawlKeys
from crawler.core.layout import ensure_layout
from crawler.net.network import NetworkRule
from crawler.policy.seeds import Seed, SeedError, parse_seed_lines
from crawler.scheduling.wakeup import WAKE_LUA

DEFAULT_BATCH_SIZE = 500
PROGRESS_EVERY = 10_000  # lines between two progress lines on stderr
# Batches sent and not yet answered: Redis runs them while the next are validated.
IN_FLIGHT = 3

# KEYS[1] = <spider>:seeded, KEYS[2] = <spider>:start_urls
# ARGV = fp1, payload1, fp2, payload2, ...  -> number of seeds pushed
# (idle workers are woken once a batch pushed anything: crawler/scheduling/wakeup.py)
SEED_BATCH_LUA = (
    WAKE_LUA
    + """
local added = 0
for i = 1, #ARGV, 2 do
    if redis.call('SADD', KEYS[1], ARGV[i]) == 1 then
        redis.call('RPUSH', KEYS[2], ARGV[i + 1])
        added = added + 1
    end
end
if added > 0 then wake(KEYS[2]) end
return added
"""
)


@dataclass
class SeedCounts:
    """What happened to the lines of one input, so far."""

    accepted: int = 0
    already_seeded: int = 0  # seeded before, or a duplicate within this input
    rejected: int = 0
    lines: int = 0

    @property
    def valid(self) -> int:
        return self.accepted + self.already_seeded

    def summary(self) -> str:
        return (
            f"accepted {self.accepted}, already seeded {self.already_seeded}, "
            f"rejected {self.rejected}"
        )


class SeedLoader:
    """Reads seed lines, reports refused ones through ``on_error``, pushes the rest.

    ``client=None`` is a dry run: lines are validated and duplicates within the
    input counted, but Redis is neither read nor written (the valid, unique
    seeds are counted as ``accepted``). ``rule`` is the network rule seeds must
    pass (default: the strictest, no private network allowed).
    """

    def __init__(
        self,
        client: redis.Redis | None,
        keys: CrawlKeys,
        batch_size: int = DEFAULT_BATCH_SIZE,
        on_error: Callable[[SeedError], None] = lambda error: None,
        on_progress: Callable[[SeedCounts], None] = lambda counts: None,
        progress_every: int = PROGRESS_EVERY,
        rule: NetworkRule | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.client = client
        self.keys = keys
        self.batch_size = batch_size
        self.on_error = on_error
        self.on_progress = on_progress
        self.progress_every = progress_every
        self.rule = rule if rule is not None else NetworkRule()
        self.counts = SeedCounts()
        self._seen: set[str] = set()
        self._batch: list[tuple[str, str]] = []
        self._checking: list[Seed | SeedError] = []  # read, waiting for the network rule
        if client is not None:  # a crawl on a cluster with another shard count: refused
            ensure_layout(client, keys)
        self._script = client.register_script(SEED_BATCH_LUA) if client is not None else None
        self._pusher: ThreadPoolExecutor | None = None
        self._in_flight: deque[Future[int]] = deque()

    def load_stream(self, stream: BinaryIO) -> SeedCounts:
        """Seed every line of a binary stream (a file, or ``sys.stdin.buffer``)."""
        return self.load_lines(self._decoded(stream))

    def load_lines(self, lines: Iterable[str]) -> SeedCounts:
        """Seed every line; the counts are final when this returns (or raises)."""
        # One thread sends the batches while the next ones are validated: Redis runs
        # the batch script meanwhile (at most IN_FLIGHT batches unanswered, so memory
        # stays bounded; one thread, so the order of the input is kept).
        with ThreadPoolExecutor(1, thread_name_prefix="seed-push") as self._pusher:
            try:
                for entry in parse_seed_lines(lines):
                    self._checking.append(entry)
                    if len(self._checking) >= self.batch_size:
                        self._check()
                self._check()
                self.flush()
            finally:
                self._collect(keep=0)
        return self.counts

    def _check(self) -> None:
        """Apply the network rule to the lines read, in order, their names resolved at once."""
        entries, self._checking = self._checking, []
        hosts = ["" if isinstance(entry, SeedError) else entry.host for entry in entries]
        self.rule.prefetch(hosts)
        for entry, host in zip(entries, hosts, strict=True):
            if isinstance(entry, SeedError):
                self._reject(entry)
            else:
                self._add(entry, host)

    def flush(self) -> None:
        """Send the pending batch (one round trip); at most ``IN_FLIGHT`` batches unanswered."""
        if not self._batch:
            return
        batch, self._batch = self._batch, []
        if self._script is None or self._pusher is None:
            self._push(batch)
            return
        self._collect(keep=IN_FLIGHT - 1)
        self._in_flight.append(self._pusher.submit(self._push, batch))

    def _push(self, batch: list[tuple[str, str]]) -> int:
        """Push a batch and count it, in the thread that pushes: a Ctrl-C that lands
        between a batch's hand-over and its bookkeeping cannot leave a batch pushed
        and uncounted (the executor's shutdown waits for the push, and so its count)."""
        if self._script is None:
            added = len(batch)
        else:
            args = [part for pair in batch for part in pair]
            added = int(self._script(keys=[self.keys.seeded, self.keys.start_urls], args=args))
        self._count(len(batch), added)
        return added

    def _collect(self, keep: int) -> None:
        """Wait for the oldest batches in flight until ``keep`` are left.

        The error of a batch (Redis gone) is raised here.
        """
        while len(self._in_flight) > keep:
            self._in_flight.popleft().result()

    def _count(self, size: int, added: int) -> None:
        self.counts.accepted += added
        self.counts.already_seeded += size - added

    def _add(self, seed: Seed, host: str) -> None:
        refusal = self.rule.host_refusal(host)
        if refusal is not None:
            reason = f"refused by the network rule: {refusal}"
            self._reject(SeedError(seed.lineno, reason, seed.url))
            return
        try:
            fingerprint = seed.fingerprint
        except Exception as exc:  # canonicalize_url on an exotic URL
            self._reject(SeedError(seed.lineno, f"cannot canonicalize URL ({exc})", seed.url))
            return
        # Pushing, a duplicate within the input is found by Redis (SADD in the batch
        # script), so memory stays flat however long the input; a dry run has no
        # Redis and remembers what it saw.
        if self._script is None:
            if fingerprint in self._seen:
                self.counts.already_seeded += 1
                return
            self._seen.add(fingerprint)
        self._batch.append((fingerprint, seed.to_json()))
        if len(self._batch) >= self.batch_size:
            self.flush()

    def _reject(self, error: SeedError) -> None:
        self.counts.rejected += 1
        self.on_error(error)

    def _decoded(self, stream: BinaryIO) -> Iterator[str]:
        """Lines as text, numbered as an editor numbers them (split on ``\\n`` only).

        A line that is not UTF-8 is refused here and replaced by a blank line,
        so the numbers of the following lines stay right.
        """
        for lineno, raw in enumerate(stream, start=1):
            self.counts.lines = lineno
            if lineno % self.progress_every == 0:
                self.on_progress(self.counts)
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                text = raw.decode("utf-8", "replace").strip()
                reason = f"not valid UTF-8 (byte {exc.start})"
                # reported in line order, with the lines read before it
                self._checking.append(SeedError(lineno, reason, text))
                yield ""


def seed_summary(counts: SeedCounts, refused: list[SeedError], dry_run: bool) -> dict[str, Any]:
    """``seed --json`` and ``POST /api/v1/seeds``: the counts, and every refused line with
    its reason."""
    return {
        "accepted": counts.accepted,
        "already_seeded": counts.already_seeded,
        "rejected": counts.rejected,
        "lines": counts.lines,
        "dry_run": dry_run,
        "rejected_lines": [
            {"line": error.lineno, "reason": error.reason, "text": error.text} for error in refused
        ],
    }


def seed_stream(
    client: redis.Redis | None,
    keys: CrawlKeys,
    stream: BinaryIO,
    rule: NetworkRule,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> dict[str, Any]:
    """Seed every line of ``stream`` (``client=None``: a dry run) and answer the summary
    (``seed_summary``): what the dashboard's form and ``POST /api/v1/seeds`` do."""
    refused: list[SeedError] = []
    counts = SeedLoader(client, keys, batch_size, refused.append, rule=rule).load_stream(stream)
    return seed_summary(counts, refused, client is None)
