"""Settings of the ``ecommerce`` workers: every tunable of the project, with its default.

Grouped by component. Each value can be overridden on the command line
(``scrapy crawl ecommerce -s NAME=VALUE``); the names in ``ENV_SETTINGS`` are
also read from the environment (see ``crawler/config.py``). ``0`` disables a
limit or an interval wherever the comment says so.
"""

from __future__ import annotations

from redis.backoff import ExponentialBackoff
from redis.exceptions import BusyLoadingError, ConnectionError, TimeoutError
from redis.retry import Retry

from crawler.config import env_overrides
from crawler.scheduling.restarts import connect as connect_noticing_restarts

BOT_NAME = "crawler"
SPIDER_MODULES = ["crawler.spiders"]
NEWSPIDER_MODULE = "crawler.spiders"
COMMANDS_MODULE = "crawler.commands"  # `scrapy crawl`: start-up errors as one clean line

# --- Scrapy core --------------------------------------------------------------
ROBOTSTXT_OBEY = True
ROBOTSTXT_PARSER = "scrapy.robotstxt.ProtegoRobotParser"
CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 16
DOWNLOAD_DELAY = 0
DOWNLOAD_TIMEOUT = 30
DOWNLOAD_MAXSIZE = 16 * 1024 * 1024  # hostile pages: refuse bodies over 16 MiB
DOWNLOAD_WARNSIZE = 4 * 1024 * 1024
REDIRECT_MAX_TIMES = 10
RETRY_ENABLED = True
RETRY_TIMES = 2
COOKIES_ENABLED = False
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False  # no control port on the workers; the master controls them
LOG_LEVEL = "INFO"
REQUEST_FINGERPRINTER_IMPLEMENTATION = "2.7"
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
FEED_EXPORT_ENCODING = "utf-8"
AUTOTHROTTLE_ENABLED = False
# Hostile pages (calendar traps, endless "next" links): a crawl may not wander deeper
# than this many links from a seed. Long paginated categories are deep, so keep it
# generous (0: no limit).
DEPTH_LIMIT = 1000
# Offsite filtering is by the seed's own host (see the spider), never by allowed_domains.

# --- scrapy-redis: shared scheduler and dupefilter ----------------------------
SCHEDULER = "crawler.scheduling.scheduler.ReliableScheduler"
SCHEDULER_QUEUE_CLASS = "crawler.scheduling.queue.ReliablePriorityQueue"
SCHEDULER_SERIALIZER = "crawler.scheduling.serializer"
DUPEFILTER_CLASS = "crawler.scheduling.dupefilter.BinaryFingerprintDupeFilter"
SCHEDULER_PERSIST = True  # never let one closing worker wipe the shared queue
SCHEDULER_FLUSH_ON_START = False
REDIS_URL = "redis://localhost:6379/0"
REDIS_START_URLS_AS_SET = False
# Ride out a Redis restart: each command is retried for about 30 s (backoff up to
# 2 s) before the error reaches the worker. Leases cover longer outages.
REDIS_PARAMS = {
    "socket_timeout": 30,
    "socket_connect_timeout": 5,
    "retry": Retry(ExponentialBackoff(cap=2.0, base=0.05), retries=20),
    "retry_on_error": [ConnectionError, TimeoutError, BusyLoadingError],
    "health_check_interval": 30,
    # redis.Redis counting its round trips (metric crawler_redis_round_trips_total)
    "redis_cls": "crawler.redis_client.CountingRedis",
    # every new connection checks Redis's run id: a restart that may have lost its
    # last second of writes makes the worker redo what it holds (scheduling/restarts.py)
    "redis_connect_func": connect_noticing_restarts,
}
# Seconds a starved scheduler waits before looking at Redis again (Scrapy's own
# engine would wait 5 s); 0 disables.
SCHEDULER_IDLE_POLL_INTERVAL = 0.1
MAX_IDLE_TIME_BEFORE_CLOSE = 0  # seconds with no work before a worker closes; 0 never
# Requests a worker pops for itself at once (one Redis round trip per batch).
SCHEDULER_POP_BATCH = 8
# Batching of what pages produce (see crawler/scheduling/batching.py): links and
# finished leases are sent in one atomic script call at most this many seconds
# after the first of them (pops ride on it); 0 sends each link at once (one call
# per new link).
SCHEDULER_FLUSH_INTERVAL = 0.005
SCHEDULER_FLUSH_MAX = 256  # links + leases that send a batch at once
# DUPEFILTER_CLASS = "crawler.scheduling.bloom.BloomDupeFilter" keeps the seen
# fingerprints in a Bloom filter (about 1.8 bytes per URL at 0.1 %) sized for:
BLOOM_CAPACITY = 10_000_000  # expected URLs
BLOOM_ERROR_RATE = 0.001  # false-positive rate at that count (new URLs taken for seen)
# In-process cache of fingerprints known to be in Redis already (saves a SADD per
# duplicate link); 0 disables.
DUPEFILTER_LOCAL_CACHE_SIZE = 200_000

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
# Seconds between two progress lines in the log (like Scrapy's LogStats); 0 disables.
LOGSTATS_INTERVAL = 30

# --- Pause / resume -----------------------------------------------------------
PAUSE_POLL_INTERVAL = 1.0  # seconds between two looks at <spider>:paused

# --- Network safety -----------------------------------------------------------
# Comma-separated hosts or CIDR ranges that may be crawled although they are
# loopback or private. Unset: only public addresses are crawled. One rule
# (crawler/network.py) for the master's seeds, every request, redirect and proxy,
# and, through this resolver, the address each connection really goes to.
ALLOW_PRIVATE_NETWORKS = ""
TWISTED_DNS_RESOLVER = "crawler.resolver.GuardedResolver"

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

# --- Proxies (crawler/middlewares/proxies.py) -----------------------------------
# A file (one proxy URL a line) or comma-separated URLs (http://user:pass@host:port);
# unset: no proxy. Each proxy must pass the network rule (ALLOW_PRIVATE_NETWORKS).
PROXY_LIST = ""
PROXY_FAILURES_BEFORE_REST = 3  # failures in a row that rest a proxy; 0: never rest
PROXY_REST_SECONDS = 300.0
PROXY_FAILURE_STATUSES = [407, 502, 503, 504]  # answers that count as the proxy failing

# --- User agents: scrapy-fake-useragent, rotating for real --------------------
# The name robots.txt rules are matched against (RobotsTxtMiddleware runs before
# the agent is chosen), and the last-resort agent of the fixed provider.
USER_AGENT = "Mozilla/5.0 (compatible; ecommerce-crawler/0.1)"
FAKEUSERAGENT_PROVIDERS = [
    "scrapy_fake_useragent.providers.FakeUserAgentProvider",
    "scrapy_fake_useragent.providers.FakerProvider",
    "scrapy_fake_useragent.providers.FixedUserAgentProvider",
]
# fake-useragent 2.x falls back silently to one fixed agent unless this is set.
FAKEUSERAGENT_FALLBACK = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/124.0 Safari/537.36"
)
RANDOM_UA_PER_PROXY = False
# Agents drawn once at start-up; each request gets one of them at random
# (0: draw from the provider for every request, which costs ~6 ms of CPU).
USERAGENT_POOL_SIZE = 100

DOWNLOADER_MIDDLEWARES = {
    "crawler.middlewares.network.PrivateNetworkMiddleware": 50,
    # after RobotsTxtMiddleware (100): a forbidden URL spends no slot of the budget
    "crawler.middlewares.politeness.SharedPolitenessMiddleware": 120,
    "scrapy.downloadermiddlewares.useragent.UserAgentMiddleware": None,
    "crawler.middlewares.useragent.RotatingUserAgentMiddleware": 400,
    "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
    "crawler.middlewares.useragent.FreshAgentRetryMiddleware": 550,
    # last before the download: the proxy really used (after HttpProxyMiddleware, 750)
    "crawler.middlewares.network.FinalHopNetworkMiddleware": 950,
    # between retry (550) and HttpProxyMiddleware (750): sees a proxy's failures
    # before the retry does, and sets meta["proxy"] before the credentials are read
    "crawler.middlewares.proxies.RotatingProxyMiddleware": 560,
}

SPIDER_MIDDLEWARES = {
    # outermost: sees the whole output of a response before it acknowledges its lease
    "crawler.middlewares.leases.LeaseSpiderMiddleware": 10,
    # innermost: drops links known to be seen before Scrapy spends anything on them
    "crawler.middlewares.knownlinks.KnownLinkFilterMiddleware": 990,
}

EXTENSIONS = {
    "scrapy.extensions.telnet.TelnetConsole": None,
    "crawler.extensions.leases.LeaseTracker": 100,
    "crawler.extensions.workerstats.WorkerStats": 200,
    "crawler.extensions.pause.PauseControl": 300,
    "crawler.extensions.metrics.PrometheusMetrics": 400,
}

# --- Prometheus metrics ---------------------------------------------------------
# Port of the worker's /metrics endpoint (0: no metrics), and the address it listens on.
METRICS_PORT = 0
METRICS_ADDRESS = "0.0.0.0"

# --- Items: validation and storage ---------------------------------------------
ITEM_PIPELINES = {
    "crawler.pipelines.validation.ProductValidationPipeline": 100,
    "crawler.pipelines.postgres.PostgresUpsertPipeline": 300,
    "crawler.pipelines.mongo.MongoUpsertPipeline": 310,
    "crawler.pipelines.embedded.EmbeddedStorePipeline": 320,
}
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
# Folder of site profiles (*.json), selected by domain; see README "Site profiles".
# Empty: the profiles shipped in crawler/profiles/.
SITE_PROFILES_DIR = ""

# Environment variables win over the values above (REDIS_URL, POSTGRES_DSN, ...).
globals().update(env_overrides())
