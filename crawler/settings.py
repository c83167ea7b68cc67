"""Settings of the workers of every spider: Scrapy's own settings and the wiring of components.

The tunables of the project's own components (leases, batching, politeness,
proxies, stores, ...) are declared once, with their defaults and documentation,
in ``crawler/core/defaults.py``, and are settings too: every name of that module is
taken in here. Each value can be overridden on the command line
(``scrapy crawl ecommerce -s NAME=VALUE``); the names in ``ENV_SETTINGS`` are
also read from the environment (see ``crawler/core/config.py``).
"""

from __future__ import annotations

from redis.backoff import ExponentialBackoff
from redis.exceptions import BusyLoadingError, ConnectionError, TimeoutError
from scrapy.settings.default_settings import EXTENSIONS_BASE as _SCRAPY_EXTENSIONS
from scrapy.settings.default_settings import RETRY_EXCEPTIONS as _SCRAPY_RETRY_EXCEPTIONS

from crawler.core.config import env_overrides
from crawler.core.defaults import *  # noqa: F403  (every project tunable, with its default)
from crawler.net.outage import ReportingRetry
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
COOKIES_ENABLED = False
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False  # no control port on the workers; the master controls them
# Scrapy imports every extension its lists name, enabled or not (to normalise their
# keys): the remote control's module imports aiohttp, 0.27 s of CPU at every worker's
# start for an extension the workers never run. So it is left out of the list.
EXTENSIONS_BASE = {
    path: order for path, order in _SCRAPY_EXTENSIONS.items() if not path.endswith(".RemoteControl")
}
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
# Ride out a Redis restart: each command is retried for about 30 s (backoff up to
# 2 s) before the error reaches the worker. Leases cover longer outages.
# Each failed attempt (and the first success after them) is told to the worker's log
# (crawler/net/outage.py); the socket timeout is REDIS_SOCKET_TIMEOUT's (set by the spider).
REDIS_PARAMS = {
    "socket_timeout": REDIS_SOCKET_TIMEOUT or None,  # noqa: F405 (crawler.core.defaults)
    "socket_connect_timeout": 5,
    "retry": ReportingRetry(ExponentialBackoff(cap=2.0, base=0.05), retries=20),
    "retry_on_error": [ConnectionError, TimeoutError, BusyLoadingError],
    "health_check_interval": 30,
    # redis.Redis counting its round trips (metric crawler_redis_round_trips_total)
    "redis_cls": "crawler.net.redis_client.CountingRedis",
    # every new connection checks Redis's run id: a restart that may have lost its
    # last second of writes makes the worker redo what it holds (scheduling/restarts.py)
    "redis_connect_func": connect_noticing_restarts,
}

# --- Worker report ------------------------------------------------------------
# Seconds between two progress lines in the log (like Scrapy's LogStats); 0 disables.
LOGSTATS_INTERVAL = 30

# --- Network safety: the connection-time check of ALLOW_PRIVATE_NETWORKS ------
TWISTED_DNS_RESOLVER = "crawler.net.resolver.GuardedResolver"

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

# --- A headless browser where a page needs one (crawler/browser/, docs/browser.md) ----
# scrapy-playwright's handler, bounded and guarded: plain requests are Scrapy's HTTP/1.1
# downloads as before; requests marked meta["playwright"] are rendered in Chromium.
DOWNLOAD_HANDLERS = {
    "http": "crawler.browser.handler.BrowserDownloadHandler",
    "https": "crawler.browser.handler.BrowserDownloadHandler",
}
# a page that could not be rendered is retried like a failed download, then a dead letter
RETRY_EXCEPTIONS = [*_SCRAPY_RETRY_EXCEPTIONS, "crawler.browser.errors.RenderFailed"]

DOWNLOADER_MIDDLEWARES = {
    "crawler.middlewares.network.PrivateNetworkMiddleware": 50,
    # after RobotsTxtMiddleware (100), before the politeness budget: a seed's max_pages
    "crawler.middlewares.seedbudget.SeedBudgetMiddleware": 110,
    # after RobotsTxtMiddleware (100): a forbidden URL spends no slot of the budget
    "crawler.middlewares.politeness.SharedPolitenessMiddleware": 120,
    "scrapy.downloadermiddlewares.useragent.UserAgentMiddleware": None,
    "crawler.middlewares.useragent.RotatingUserAgentMiddleware": 400,
    "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
    "crawler.middlewares.retry.BackoffRetryMiddleware": 550,
    # last before the download: the proxy really used (after HttpProxyMiddleware, 750)
    "crawler.middlewares.network.FinalHopNetworkMiddleware": 950,
    # between retry (550) and HttpProxyMiddleware (750): sees a proxy's failures
    # before the retry does, and sets meta["proxy"] before the credentials are read
    "crawler.middlewares.proxies.RotatingProxyMiddleware": 560,
    # after the retries, before the redirects (600): which requests the browser renders,
    # and an application shell fetched again through it
    "crawler.middlewares.rendering.BrowserRenderingMiddleware": 590,
}

SPIDER_MIDDLEWARES = {
    # outermost: sees the whole output of a response before it acknowledges its lease
    "crawler.leasing.middleware.LeaseSpiderMiddleware": 10,
    # a page waiting for its site's evidence is queued again with its output
    "crawler.middlewares.evidenceretry.EvidenceRetryMiddleware": 500,
    # innermost: drops links known to be seen before Scrapy spends anything on them
    "crawler.middlewares.knownlinks.KnownLinkFilterMiddleware": 990,
}

EXTENSIONS = {
    "scrapy.extensions.telnet.TelnetConsole": None,
    # one of each per worker, shared by the components that find them with Cls.of(crawler)
    "crawler.core.flow.FlowControl": 10,
    "crawler.policy.politeness.SiteWaits": 20,
    "crawler.leasing.tracker.LeaseTracker": 100,
    "crawler.extensions.workerstats.WorkerStats": 200,
    "crawler.extensions.sitestats.SiteStats": 210,
    "crawler.extensions.siteevidence.SiteEvidenceStore": 220,
    "crawler.extensions.datachecks.DataChecks": 230,
    "crawler.extensions.pause.PauseControl": 300,
    "crawler.extensions.metrics.PrometheusMetrics": 400,
    # says in the log when Redis is unreachable, with what the worker holds
    "crawler.extensions.outagelog.OutageReport": 410,
}

# --- Items: validation and storage ---------------------------------------------
# Validation by the spider's item kind; each store keeps one kind of item and steps aside
# for the others (products: ecommerce; quotes: finance), so one list serves every spider.
ITEM_PIPELINES = {
    "crawler.pipelines.validation.ItemValidationPipeline": 100,
    "crawler.pipelines.postgres.PostgresUpsertPipeline": 300,
    "crawler.pipelines.mongo.MongoUpsertPipeline": 310,
    "crawler.pipelines.embedded.EmbeddedStorePipeline": 320,
    "crawler.pipelines.quotes.postgres.PostgresQuotePipeline": 330,
    "crawler.pipelines.quotes.mongo.MongoQuotePipeline": 340,
    "crawler.pipelines.quotes.embedded.EmbeddedQuotePipeline": 350,
}

# Environment variables win over the values above and crawler/core/defaults.py (REDIS_URL, ...).
globals().update(env_overrides())
