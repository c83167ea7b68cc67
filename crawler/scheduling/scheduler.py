"""``ReliableScheduler``: the scrapy-redis scheduler, safe for many workers.

What it adds to :class:`scrapy_redis.scheduler.Scheduler`:

* **Shared state is never deleted by a worker.** ``SCHEDULER_PERSIST`` and
  ``SCHEDULER_FLUSH_ON_START`` cannot turn that off (a warning says they are
  ignored); only ``python -m master reset`` deletes a crawl.
* **Batched output.** The links of many pages, their fingerprint checks, the
  finished leases and the next pop go to Redis in one Lua script call
  (``SCHEDULER_FLUSH_INTERVAL``, see :mod:`crawler.leasing.batch`); with 0, one
  script call per new link. Links known to be seen cost nothing (see the dupefilter).
* **Leases.** Requests are popped under lease (see :mod:`.queue` and
  :mod:`crawler.leasing`); a request derived from a leased one (a redirect or a
  retry) takes over its lease when it is queued.
* **Flow control.** No request is handed out while a hold is active
  (``master pause``, a storage backlog), see :class:`crawler.core.flow.FlowControl`.
* **Other sites first.** While a site's requests wait for their turn in the
  shared politeness budget (see :mod:`crawler.middlewares.politeness`), up to
  ``POLITENESS_PARK_MAX`` popped requests of busy sites are set aside (still
  leased; at most ``POLITENESS_MAX_WAITING_PER_SITE`` of one site) and requests
  of other sites handed out first; a set-aside request goes out as soon as its
  site is no longer busy. Beyond that, a busy site's request goes back to the
  shared queue (lease and all; one priority step down, behind other sites'
  requests) for another worker, so that no worker hoards a site that all of
  them must share anyway.
* **Requests that need a browser** wait in the crawl's browser queue
  (:mod:`crawler.browser.routing`): the queue routes them when they are pushed; a
  worker that renders pops that queue too. A request that needs a browser popped
  from the plain queue by a worker that cannot render (a dead worker's lease put
  back, a site found to need a browser after its pages were queued) is handed over
  to the browser queue at once, its lease with it (stat ``browser/handed_over``).
* **No idle latency.** Scrapy's engine looks at the scheduler again only every
  5 seconds once it has found it empty. A worker sharing a queue would sit idle
  while others fill it, so a starved scheduler is woken when work arrives: it
  listens for the crawl's wake-ups (``SCHEDULER_WAKEUPS``, :mod:`.wakeup`), which
  every push that gives the queue work it had none of publishes, and makes the
  engine ask it for requests at once. It also looks at Redis itself, once every
  ``SCHEDULER_IDLE_POLL_MAX`` seconds while it listens (for retries that become
  due, and messages lost with a connection), and while it cannot listen every
  ``SCHEDULER_IDLE_POLL_INTERVAL`` seconds, after a second of looking in vain
  half as often each time, down to that maximum.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from redis.exceptions import RedisError
from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.utils.misc import load_object
from scrapy.utils.reactor import is_reactor_installed
from scrapy_redis.scheduler import Scheduler
from twisted.internet import task

from crawler.core import defaults
from crawler.core.flow import FlowControl
from crawler.core.keys import CrawlKeys
from crawler.core.sites import site_key
from crawler.leasing.meta import take_lease
from crawler.net.quietlog import EveryInterval
from crawler.policy.politeness import SiteWaits
from crawler.scheduling.bloom import BloomDupeFilter
from crawler.scheduling.wakeup import ANY, Wake, WakeUps

logger = logging.getLogger(__name__)


def wake_engine(crawler: Any, delay: float = 0) -> bool:
    """Make Scrapy's engine look at the scheduler (and at idleness) after ``delay`` s.

    The engine has no public way to be woken; its slot's ``nextcall`` is what its
    own heartbeat uses. That call is scheduled once: while a later one is pending
    (the spider's idle check asks for a look a second ahead), ``schedule(0)`` does
    nothing, so a wake-up "now" cancels the pending one first. Returns False when
    the engine is not running a spider.
    """
    engine = getattr(crawler, "engine", None)
    slot = getattr(engine, "_slot", None)
    if slot is None or slot.closing is not None:
        return False
    nextcall = slot.nextcall
    pending = getattr(nextcall, "_call", None)  # CallLaterOnce's pending call, if any
    if delay <= 0 and pending is not None:
        pending.cancel()
        nextcall._call = None
    nextcall.schedule(delay)
    return True


VAIN_POLLS_BEFORE_BACKOFF = 1.0  # seconds of idle polls at the full rate before backing off


class ReliableScheduler(Scheduler):
    crawler: Any
    df: Any
    # idle polls while starved: the first that found no work, the wait between two, the next
    _vain_since: float | None
    _poll_wait: float
    _next_poll: float

    @classmethod
    def from_crawler(cls, crawler: Any) -> ReliableScheduler:
        scheduler = super().from_crawler(crawler)
        scheduler.crawler = crawler
        scheduler.flow = FlowControl.of(crawler)
        scheduler.idle_poll_interval = crawler.settings.getfloat(
            "SCHEDULER_IDLE_POLL_INTERVAL", defaults.SCHEDULER_IDLE_POLL_INTERVAL
        )
        if not scheduler.persist:
            logger.warning("SCHEDULER_PERSIST=False is ignored: workers never delete shared state")
            scheduler.persist = True
        if scheduler.flush_on_start:
            logger.warning(
                "SCHEDULER_FLUSH_ON_START is ignored: use `python -m master reset` to start afresh"
            )
            scheduler.flush_on_start = False
        scheduler.idle_poll_max = max(
            scheduler.idle_poll_interval,
            crawler.settings.getfloat("SCHEDULER_IDLE_POLL_MAX", defaults.SCHEDULER_IDLE_POLL_MAX),
        )
        scheduler._starved = False
        scheduler._poll_wait = scheduler.idle_poll_interval
        scheduler._vain_since = None
        scheduler._next_poll = 0.0
        scheduler._waker = None
        scheduler.wakeups_enabled = crawler.settings.getbool(
            "SCHEDULER_WAKEUPS", defaults.SCHEDULER_WAKEUPS
        )
        scheduler.wakeups = None
        scheduler.site_waits = SiteWaits.of(crawler)
        scheduler.park_max = crawler.settings.getint(
            "POLITENESS_PARK_MAX", defaults.POLITENESS_PARK_MAX
        )
        scheduler._parked = []
        # a pop found the queue empty, and no work was announced since (while listening)
        scheduler._seen_empty = False
        scheduler._redis_warning = EveryInterval()
        return scheduler

    def open(self, spider: Any) -> None:
        # scrapy-redis's open(), without its flush and its deprecated Spider.log().
        self.spider = spider
        self.queue = load_object(self.queue_cls)(
            server=self.server,
            spider=spider,
            key=self.queue_key % {"spider": spider.name},
            serializer=self.serializer,
        )
        if not self.df:
            self.df = load_object(self.dupefilter_cls).from_spider(spider)
        queued = len(self.queue)
        if queued:
            logger.info("Resuming crawl (%d requests queued)", queued)
        self.keys = CrawlKeys.from_settings(spider.settings, spider.name)
        self.ledger = self.queue.ledger
        self.tracker = self.queue.tracker
        if isinstance(self.df, BloomDupeFilter):
            if self.tracker.batch is None:
                raise NotConfigured("BloomDupeFilter needs SCHEDULER_FLUSH_INTERVAL > 0")
            self.tracker.batch.use_bloom(self.df.blooms if self.keys.cluster else self.df.bloom)
        if self.idle_poll_interval > 0:
            self._waker = task.LoopingCall(self._wake_engine_if_work)
            self._waker.start(self.idle_poll_interval, now=False)
        if self.wakeups_enabled and is_reactor_installed():  # not in a bare scheduler's tests
            from twisted.internet import reactor

            woken = self._woken
            self.wakeups = WakeUps(
                self.server, self.keys.wake, lambda wake: reactor.callFromThread(woken, wake)
            ).start()
            self.queue.wakeups = self.wakeups  # the browser queue is popped when told
            if self.tracker.batch is not None and not self.keys.cluster:
                self.tracker.batch.wakeups = self.wakeups  # pops skip the lane index then

    def close(self, reason: str) -> None:
        if self._waker is not None and self._waker.running:
            self._waker.stop()
        if self.wakeups is not None:
            self.wakeups.stop()
        # persist is always on: nothing shared is deleted here. Requests still
        # leased by this worker are requeued by the LeaseTracker on spider_closed.

    def enqueue_request(self, request: Request) -> bool:
        self._seen_empty = False  # this worker's own link: the next pop sends and may take it
        if request.dont_filter:
            self.queue.push(request)
        else:
            fingerprint = self.df.request_fingerprint(request)
            if self.df.known(fingerprint):  # seen, and known to this worker: no round trip
                added = False
                self.tracker.finish(take_lease(request))
            elif self.tracker.batch is not None:
                # sent with the next batch; a duplicate found then is counted, not logged
                self.queue.push_batched(request, fingerprint)
                self.df.remember(fingerprint)
                added = True
            else:
                added = self.queue.push_if_new(request, fingerprint)
                self.df.remember(fingerprint)
            if not added:
                self.df.log(request, self.spider)
                return False
        if self.stats:
            self.stats.inc_value("scheduler/enqueued/redis")
        return True

    def next_request(self) -> Request | None:
        if self.flow.held:
            self._starved = True
            return None
        try:
            request = self._next_from_redis()
        except RedisError as exc:  # Redis away (a restart, a failover): the idle poll retries
            self._redis_warning.warn(logger, "Could not take requests from Redis yet (%r)", exc)
            if self.stats:
                self.stats.inc_value("scheduler/redis_errors")
            request = None
        if request is None:
            self._starved = True
            return None
        self._starved = False
        if self.stats:
            self.stats.inc_value("scheduler/dequeued/redis")
        return request

    def _listening(self) -> bool:
        return self.wakeups is not None and self.wakeups.live

    def _next_from_redis(self) -> Request | None:
        request = self._unpark()
        if request is None and self._seen_empty and self._listening() and not self.queue.buffered:
            return None  # nothing announced since the queue was seen empty: no pop
        if request is None:
            request = self.queue.pop()
            # empty, unless the browser queue was left alone for want of room only
            self._seen_empty = request is None and not self.queue.browser_full
            handed_back = 0
            while request is not None:
                if self.queue.routing.hand_over(request):
                    self._hand_over(request)
                elif self.site_waits.busy(request.url):
                    if not self._park(request):
                        # this worker holds enough of that site: leave it to the others,
                        # one priority step down so that other sites' requests come first
                        request.priority -= 1
                        self.queue.push(request)
                        handed_back += 1
                        if self.stats:
                            self.stats.inc_value("scheduler/handed_back")
                        if handed_back > self.queue.batch_size:
                            return None  # only busy sites: the politeness middleware wakes us
                else:
                    break
                request = self.queue.pop()
        return request

    def _hand_over(self, request: Request) -> None:
        """A request that needs a browser, and this worker renders none: into the
        browser queue, its lease moved in the same call (never fetched plainly)."""
        self.queue.routing.config.announce()
        self.queue.push(request)
        if self.stats:
            self.stats.inc_value("browser/handed_over")

    def _park(self, request: Request) -> bool:
        """Set a request of a busy site aside, unless this worker holds enough of them."""
        site = site_key(request.url)
        same_site = sum(site_key(parked.url) == site for parked in self._parked)
        if len(self._parked) >= self.park_max or same_site >= self.site_waits.max_waiting:
            return False
        self._parked.append(request)
        if self.stats:
            self.stats.inc_value("scheduler/parked")
        return True

    def _unpark(self) -> Request | None:
        """The first set-aside request whose site is no longer busy."""
        for index, request in enumerate(self._parked):
            if not self.site_waits.busy(request.url):
                return self._parked.pop(index)
        return None

    def has_pending_requests(self) -> bool:
        # While held (paused, storage backlog) the worker is waiting, not idle:
        # it must not close for idleness.
        if self.flow.held or self._parked or self._unsent() > 0:
            return True
        if self._seen_empty and self._listening():
            return False  # seen empty, nothing announced since: no need to count it
        try:
            return len(self.queue) > 0
        except RedisError:  # Redis away: not idle, the crawl may well go on
            return True

    def _unsent(self) -> int:
        batch = self.tracker.batch
        return batch.pending_links if batch is not None else 0

    def _woken(self, wake: Wake = ANY) -> None:
        """Work arrived where there was none (a wake-up): a starved engine asks for it
        now; a worker that renders nothing lets work for a browser be."""
        browser = wake.browser and self.queue.routing.can_render
        if not (wake.plain or browser):
            return
        self._seen_empty = False
        self.queue.work_announced(browser=browser)
        if self._starved and not self.flow.held and wake_engine(self.crawler):
            self._starved = False
            self._fed()
            if self.stats:
                self.stats.inc_value("scheduler/wakeups")

    def _wake_engine_if_work(self) -> None:
        if not self._starved or self.flow.held:
            self._fed()
            return
        engine = self.crawler.engine
        if engine is None or getattr(engine, "_slot", None) is None or engine.needs_backout():
            return
        now = time.monotonic()
        if now < self._next_poll:
            return
        if self.queue.browser_full and self.queue.browser_room() == 0:
            return  # its browser is busy: the engine asks again as each page is done
        try:
            work = self.queue.buffered or self._unsent()
            if not work:
                queued, seeds = self.ledger.waiting()
                work = seeds > 0 or self.queue.ready_work(queued, now)
        except Exception as exc:  # Redis away: the engine's own heartbeat retries
            logger.debug("Idle poll failed: %r", exc)
            return
        if work and wake_engine(self.crawler):
            self._seen_empty = False
            self.queue.work_announced(browser=False)  # its own recheck, or a wake-up, pops that
            self._starved = False
            self._fed()
            return
        if self.wakeups is not None and self.wakeups.live:
            self._poll_wait = self.idle_poll_max  # woken when work comes: a safety net only
        elif self._vain_since is None:
            self._vain_since = now
        elif now - self._vain_since >= VAIN_POLLS_BEFORE_BACKOFF:
            self._poll_wait = min(self._poll_wait * 2, self.idle_poll_max)
        self._next_poll = now + self._poll_wait - self.idle_poll_interval / 2

    def _fed(self) -> None:
        """Work came: look at Redis at the full rate again when it runs out."""
        self._vain_since = None
        self._poll_wait = self.idle_poll_interval
        self._next_poll = 0.0
