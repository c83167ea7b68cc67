"""Default value of every tunable of the project's own components (as scrapy-redis's ``defaults``).

Each name here is also a Scrapy setting: ``crawler/settings.py`` takes them all
from this module, so ``scrapy crawl ecommerce -s NAME=VALUE`` overrides any of
them, and the names in ``crawler/core/config.py``'s ``ENV_SETTINGS`` are read from
the environment as well. A component reads its setting with this module's value
as the fallback (``settings.getint("STORE_BATCH_SIZE", defaults.STORE_BATCH_SIZE)``),
so the default is written once, here, whether it runs under the project's
settings or under a bare ``Settings()`` in a test. ``0`` disables a limit or an
interval wherever the comment says so.

Scrapy's own settings that the project sets (concurrency, timeouts, the reactor)
and the wiring of components (middlewares, pipelines, extensions) stay in
``crawler/settings.py``.
"""

from __future__ import annotations

from crawler.core import keys as _keys

# --- Redis and the scrapy-redis scheduler --------------------------------------
REDIS_URL = "redis://localhost:6379/0"
# True: REDIS_URL names a node of a Redis Cluster (or lists startup nodes, comma-separated),
# and the crawl's keys are laid out in shards by site (see crawler/core/keys.py).
REDIS_CLUSTER = _keys.DEFAULT_REDIS_CLUSTER
# Shards of a crawl on a cluster; the same for the master and every worker of a crawl.
REDIS_CLUSTER_SHARDS = _keys.DEFAULT_CLUSTER_SHARDS
# On a cluster with replicas: links are answered once this many replicas of their shard's
# primary have them (WAIT), before the leases of their pages are finished, so a failover
# loses none (crawler/leasing/replication.py); 0 never waits. At most this many ms.
REDIS_CLUSTER_WAIT_REPLICAS = 1
REDIS_CLUSTER_WAIT_TIMEOUT = 500
# Seconds a worker waits for one answer from Redis before the attempt fails (and is
# retried, see REDIS_PARAMS in crawler/settings.py): the bound on a stalled connection
# (a network partition drops the traffic, nothing is refused), within which the
# worker's log says Redis is unreachable (crawler/net/outage.py). 0: no bound (a stalled
# connection blocks the worker, silent, until the kernel gives up on it).
REDIS_SOCKET_TIMEOUT = 30
# While Redis or a worker's store is unreachable its log says so again this often
# (seconds, with what the worker holds); 0: only when it is lost and when it is back.
OUTAGE_LOG_INTERVAL = 60
# scrapy-redis's key templates, pinned to the key layout of crawler/core/keys.py
SCHEDULER_QUEUE_KEY = _keys.QUEUE_KEY_TEMPLATE
SCHEDULER_DUPEFILTER_KEY = _keys.DUPEFILTER_KEY_TEMPLATE
REDIS_START_URLS_KEY = _keys.START_URLS_KEY_TEMPLATE
REDIS_START_URLS_AS_SET = False
SCHEDULER_PERSIST = True  # never let one closing worker wipe the shared queue
SCHEDULER_FLUSH_ON_START = False
# A starved scheduler listens for the crawl's wake-ups (<spider>:wake, pub/sub): work
# that arrives where there was none is taken at once (crawler/scheduling/wakeup.py).
SCHEDULER_WAKEUPS = True
# Seconds a starved scheduler waits before looking at Redis again (Scrapy's own
# engine would wait 5 s) while it cannot listen for wake-ups; 0 disables the looks.
SCHEDULER_IDLE_POLL_INTERVAL = 0.1
# ... and after a second of finding nothing, half as often each time, down to once
# every this many seconds: the rate of its looks while it listens.
SCHEDULER_IDLE_POLL_MAX = 1.0
MAX_IDLE_TIME_BEFORE_CLOSE = 0  # seconds with no work before a worker closes; 0 never
# Requests a worker pops for itself at once (one Redis round trip per batch).
SCHEDULER_POP_BATCH = 8
# Batching of what pages produce (see crawler/leasing/batch.py): links and
# finished leases are sent in one atomic script call (pops ride on it). Links
# wait at most this many seconds after the first of them while the shared queue
# is short; 0 sends each link at once (one call per new link).
SCHEDULER_FLUSH_INTERVAL = 0.005
# ... and up to this long while it is deep: at least SCHEDULER_FLUSH_DEEP_QUEUE
# requests left after the worker's last pop, and enough for twice the linger at
# the rate the queue shrinks (finished leases alone wait up to
# LEASE_FINISH_INTERVAL).
SCHEDULER_FLUSH_LINGER = 0.5
SCHEDULER_FLUSH_DEEP_QUEUE = 32
SCHEDULER_FLUSH_MAX = 256  # links + leases that send a batch at once
# DUPEFILTER_CLASS = "crawler.scheduling.bloom.BloomDupeFilter" keeps the seen
# fingerprints in a Bloom filter (about 1.8 bytes per URL at 0.1 %) sized for:
BLOOM_CAPACITY = 10_000_000  # expected URLs
BLOOM_ERROR_RATE = 0.001  # false-positive rate at that count (new URLs taken for seen)
# In-process cache of fingerprints known to be in Redis already (saves a SADD per
# duplicate link), least recently used evicted first, about 105 bytes an entry;
# 0 disables.
DUPEFILTER_LOCAL_CACHE_SIZE = 50_000

# --- Leases: requests a worker holds are never lost ---------------------------
# A worker whose heartbeat is older than this is dead; its leased requests go back
# to the queue (picked up by any live worker).
LEASE_WORKER_TIMEOUT = 30
LEASE_HEARTBEAT_INTERVAL = 5
LEASE_RECOVERY_INTERVAL = 10
LEASE_FINISH_INTERVAL = 0.5  # finished leases are deleted in batches this often

# --- Worker identity, stats and report ----------------------------------------
WORKER_ID = ""  # default: <hostname>-<pid>-<4 random hex digits>, unique per process
WORKERSTATS_INTERVAL = 5  # seconds between two records in Redis
# Minutes of pages/items per minute kept in <spider>:series (the dashboard's chart);
# older minutes are trimmed by the workers that write it. 0 disables the series.
SERIES_MINUTES = 60

# --- Pause / resume -----------------------------------------------------------
PAUSE_POLL_INTERVAL = 1.0  # seconds between two looks at <spider>:paused

# --- Network safety -----------------------------------------------------------
# Comma-separated hosts or CIDR ranges that may be crawled although they are
# loopback or private. Unset: only public addresses are crawled. One rule
# (crawler/net/network.py) for the master's seeds, every request, redirect and proxy,
# and, through crawler/net/resolver.py, the address each connection really goes to.
ALLOW_PRIVATE_NETWORKS = ""

# --- Politeness shared by all workers (crawler/middlewares/politeness.py) -------
# Requests per second per site for all workers together, enforced in Redis; a
# site profile's "max_rps" overrides it, and a robots.txt Crawl-delay is honoured
# when it is stricter. 0: no budget (Crawl-delay only).
SITE_MAX_RPS = 2.0
# Requests of one site waiting for their slot in this worker before the scheduler
# hands out other sites' requests first; 0: never.
POLITENESS_MAX_WAITING_PER_SITE = 4
# Requests of busy sites the scheduler may set aside (still leased) meanwhile.
POLITENESS_PARK_MAX = 32

# --- Retries with backoff (crawler/middlewares/retry.py, crawler/policy/retrypolicy.py) ----
# Scrapy's RetryMiddleware, replaced by BackoffRetryMiddleware. A retried request
# waits in Redis (the shared queue) until its time; any worker takes it then.
RETRY_ENABLED = True
# Answers retried at all; any other 4xx (404, 403, 410, ...) is not retried.
RETRY_HTTP_CODES = [500, 502, 503, 504, 522, 524, 408, 425, 429]
# Retries of the other failures (a 500, a refused connection, a DNS error): Scrapy's own.
RETRY_TIMES = 2
# The site asks us to slow down, or is overloaded: these answers and exceptions
# get RETRY_THROTTLE_TIMES retries, and cut the site's shared rate (see below).
RETRY_THROTTLE_HTTP_CODES = [429, 503]
RETRY_THROTTLE_EXCEPTIONS = [
    "scrapy.exceptions.DownloadTimeoutError",
    "twisted.internet.error.TimeoutError",
    "twisted.internet.error.TCPTimedOutError",
    "twisted.internet.error.ConnectionLost",
    "twisted.internet.error.ConnectionDone",
    "scrapy.exceptions.ResponseDataLossError",
]
RETRY_THROTTLE_TIMES = 8
# Exponential backoff: the n-th retry waits RETRY_BACKOFF_BASE * 2**(n-1) seconds,
# at most RETRY_BACKOFF_MAX, of which a random share up to RETRY_BACKOFF_JITTER
# (0..1) is taken off, so that retries of many pages do not come back together.
RETRY_BACKOFF_BASE = 1.0
RETRY_BACKOFF_MAX = 60.0
RETRY_BACKOFF_JITTER = 0.5
# A Retry-After (seconds or an HTTP date) is honoured up to this many seconds.
RETRY_AFTER_MAX = 120.0
# Failures (status or exception, time, wait) a request carries; the dead letter shows them.
RETRY_HISTORY_MAX = 20

# --- Adaptive site rate, shared by all workers (crawler/policy/politeness.py) ----------
# A 429/503 answer or a timeout cuts the site's rate (the same Redis key as its
# budget) by this factor, at most once per SITE_BACKOFF_COOLDOWN seconds (answers
# to requests sent before the cut do not cut again); a Retry-After pauses the site.
SITE_BACKOFF_ENABLED = True
# A 429 or a Retry-After always cuts; a 503 or a timeout without Retry-After cuts
# only while they are at least this share of the site's last SITE_BACKOFF_WINDOW
# answers in a worker (at least 3 of them): a page that fails now and then is
# retried, a site that fails broadly is slowed down.
SITE_BACKOFF_ERROR_SHARE = 0.25
SITE_BACKOFF_WINDOW = 20
SITE_BACKOFF_FACTOR = 0.5
SITE_BACKOFF_COOLDOWN = 2.0
SITE_BACKOFF_MIN_RPS = 0.2  # the rate never goes below this
# While no cut comes, the rate climbs back by SITE_BACKOFF_STEP_RPS every
# SITE_BACKOFF_STEP_INTERVAL seconds, up to the site's budget (SITE_MAX_RPS, the
# profile's max_rps); robots.txt Crawl-delay stays a floor of the interval.
SITE_BACKOFF_STEP_RPS = 0.5
SITE_BACKOFF_STEP_INTERVAL = 5.0
# A site with no budget (SITE_MAX_RPS=0) is cut to this rate at its first 429/503,
# and is free again once it climbed back to twice that.
SITE_BACKOFF_START_RPS = 4.0

# --- Proxies (crawler/middlewares/proxies.py) -----------------------------------
# A file (one proxy URL a line) or comma-separated URLs (http://user:pass@host:port);
# unset: no proxy. Each proxy must pass the network rule (ALLOW_PRIVATE_NETWORKS).
PROXY_LIST = ""
PROXY_FAILURES_BEFORE_REST = 3  # failures in a row that rest a proxy; 0: never rest
PROXY_REST_SECONDS = 300.0
PROXY_FAILURE_STATUSES = [407, 502, 503, 504]  # answers that count as the proxy failing

# --- User agents ----------------------------------------------------------------
# Agents drawn once at start-up; each request gets one of them at random
# (0: draw from the provider for every request, which costs ~6 ms of CPU).
USERAGENT_POOL_SIZE = 100

# --- Prometheus metrics ---------------------------------------------------------
# Port of the worker's /metrics endpoint (0: no metrics), and the address it listens on.
METRICS_PORT = 0
METRICS_ADDRESS = "0.0.0.0"
# Bucket bounds (seconds) of the worker's histograms: download latency (raise the
# top bound with DOWNLOAD_TIMEOUT) and the time to write one batch to the store.
METRICS_LATENCY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0]
METRICS_STORE_WRITE_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0]

# --- Items: validation and storage ---------------------------------------------
POSTGRES_DSN = ""  # set: products go to PostgreSQL
MONGO_URI = ""  # set: products go to MongoDB
MONGO_DATABASE = "crawler"
# Neither set: products go to this SQLite file (shared safely by workers on one machine).
EMBEDDED_STORE_PATH = "data/products.sqlite3"
STORE_BATCH_SIZE = 100  # items written per round trip
STORE_FLUSH_INTERVAL = 1.0  # seconds a partial batch may wait
STORE_MAX_PENDING = 5000  # items held while the database is away, then hold the flow
STORE_RETRY_INITIAL_DELAY = 0.5  # backoff while the database is away (doubles each time)
STORE_RETRY_MAX_DELAY = 30.0
STORE_CLOSE_TIMEOUT = 60  # seconds a closing worker keeps retrying an absent database
VALIDATION_KEEP_INVALID = True  # keep rejected items in <spider>:invalid

# --- Extraction ------------------------------------------------------------------
# Folder of site profiles (*.json), selected by domain; see docs/products.md "Site profiles".
# Empty: the profiles shipped in crawler/profiles/.
SITE_PROFILES_DIR = ""
# Evidence of a whole site (crawler/extensions/siteevidence.py, crawler/extraction/
# evidence.py): its template's stock statements and where it shows price and stock,
# counted over its pages by every worker and shared through Redis.
SITE_EVIDENCE_ENABLED = True
SITE_EVIDENCE_SYNC_INTERVAL = 2.0  # seconds between two exchanges with Redis (0: on close only)
SITE_EVIDENCE_MAX_SITES = 512  # sites a worker keeps the evidence of (the least recent go)
SITE_EVIDENCE_MAX_KEYS = 512  # counters kept per site, in a worker and in Redis
SITE_EVIDENCE_TTL = 7 * 24 * 3600  # seconds a site's evidence stays in Redis after its last page
# A page that lacks structured data and leaves its price or stock to a guess, met while
# its site's evidence is young, is read again once (queued at this priority: last).
SITE_EVIDENCE_RETRY = True
SITE_EVIDENCE_RETRY_PRIORITY = -100

# --- Data checks (crawler/datachecks/, crawler/extensions/datachecks.py, docs/data-checks.md) --
# Every site's figures (coverage, spread of values, product-looking pages rejected),
# shared by every worker in <spider>:checks:<site>, and the checks run on them.
DATACHECKS_ENABLED = True
DATACHECKS_SYNC_PAGES = 100  # a site's figures go to Redis after this many of its pages (0: never)
DATACHECKS_SYNC_INTERVAL = 30.0  # and at least this often, in seconds (0: on close only)
DATACHECKS_TOP_VALUES = 24  # most common values kept per site and group (prices, names...)
DATACHECKS_TTL = 7 * 24 * 3600  # seconds a site's figures stay in Redis after the last sync
# Thresholds for every site: {"<check>": {"threshold": x, "min_rows": n}, or false to
# silence it}; a site profile's "checks" section wins; the defaults are the checks' own.
DATACHECKS_OVERRIDES: dict[str, object] = {}

# --- A headless browser where a page needs one (crawler/browser/, docs/browser.md) ----
# auto: a page whose HTML gives no product, no embedded state and no links but looks like
# an application shell is fetched again through the browser, and its site is remembered
# (<spider>:browser_sites) so that its pages are rendered from then on; always: every
# page is rendered; never: this worker marks no page and looks for no shell. A seed's
# meta "render" (true, false, auto) wins for its own pages. Pages to render wait in the
# browser queue (<spider>:browser_requests) for a worker that renders.
BROWSER_RENDERING = "auto"
# Pages this worker renders at once; 0: it renders nothing and never takes a page to
# render. A worker without the browser (BROWSER_EXECUTABLE missing) renders nothing
# either, and says so once (WARNING).
BROWSER_CONCURRENCY = 2
# The Chromium Playwright drives (never downloaded); empty: /usr/bin/chromium when present,
# else chromium or chromium-browser on the PATH.
BROWSER_EXECUTABLE = ""
# Seconds one page may take to render, everything included: past it the page is closed and
# the request retried, then a dead letter (browser/errors/timeout).
BROWSER_PAGE_TIMEOUT = 30.0
# Seconds a page may keep loading after its load event before its DOM is taken as it is.
BROWSER_SETTLE_TIME = 3.0
# Bytes (document and everything it loads) and requests one rendered page may take; past
# them its further requests are refused (browser/blocked/budget).
BROWSER_PAGE_MAX_BYTES = 16 * 1024 * 1024
BROWSER_PAGE_MAX_REQUESTS = 200
# Playwright resource types a rendered page may not load (refused before any connection).
BROWSER_BLOCKED_RESOURCES = ["image", "media", "font"]
# The browser is restarted after this many pages, or once its processes use this many MiB
# (0: never), between two pages.
BROWSER_RESTART_PAGES = 500
BROWSER_MAX_MEMORY_MB = 2048
# Sites whose browser context (cookies, storage: never shared between sites) stays open at
# once; the least recently used idle one is closed first.
BROWSER_MAX_CONTEXTS = 8
# Seconds between two reads of <spider>:browser_sites (the sites that need a browser).
BROWSER_SITES_REFRESH = 5.0
# Requests that need a browser a rendering worker holds at once (popped from the shared
# browser queue, not yet finished), per page it renders at once: the rest wait in Redis
# for any browser worker (crawler/browser/routing.py).
BROWSER_HOLD_PER_SLOT = 2

# --- Sitemaps, strategies and scope (crawler/policy/sitemaps.py, crawler/policy/scope.py) ------
# Read the sitemaps of every site the crawl reaches (robots.txt "Sitemap:" lines,
# else /sitemap.xml) when a seed's strategy is auto or sitemap (needs ROBOTSTXT_OBEY).
SITEMAPS_ENABLED = True
SITEMAP_MAX_SIZE = 50 * 1024 * 1024  # bytes of one sitemap once decompressed (the protocol's 50 MB)
SITEMAP_MAX_URLS = 50_000  # entries read from one sitemap file (the protocol's limit)
SITEMAP_MAX_DEPTH = 3  # levels of sitemap indexes below the first sitemap
# Request priorities within the shared queue (higher first): sitemaps, then product
# pages (from sitemaps, or links that look like product URLs), then listings (0).
PRIORITY_SITEMAP = 20
PRIORITY_PRODUCT = 10

# --- The master -------------------------------------------------------------------
# Keys asked for per SCAN round trip when the master walks the crawl's keys.
SCAN_COUNT = 1000
