"""The browser settings of a worker, read once (``BROWSER_*``, see ``crawler/core/defaults.py``).

:class:`BrowserConfig` answers what the rendering middleware and the download handler
both ask: which mode (``auto``, ``always``, ``never``), whether this worker can
render at all (a concurrency above 0 and the browser installed), and how Chromium is
launched. The browser is Debian's ``chromium`` (or ``BROWSER_EXECUTABLE``), driven by
Playwright through ``executable_path``: Playwright never downloads one here.

Launch: headless, as root (``--no-sandbox``: the worker's container or user is the
boundary), no GPU, no background networking, component updates, sync, first-run
screens, translation, extensions or crash reports; WebRTC may not use UDP of its own.
And a proxy that leads nowhere (:attr:`BrowserConfig.dead_proxy`): every request a page
makes is intercepted and answered by the worker (:mod:`.guard`), so whatever Chromium
would send on its own (a preconnect, a redirect it follows, a popup's requests) meets
a closed port, never the network.
"""

from __future__ import annotations

import logging
import os
import shutil
from dataclasses import dataclass, field
from typing import Any

from crawler.core import defaults
from crawler.core.startup import StartupError

logger = logging.getLogger(__name__)
_announced: set[str] = set()

MODES = ("auto", "always", "never")
#: Where the browser is looked for when ``BROWSER_EXECUTABLE`` is empty, in order.
CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser")
LAUNCH_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-breakpad",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--disable-features=Translate,MediaRouter,OptimizationHints,InterestFeedContentSuggestions",
    "--no-first-run",
    "--no-default-browser-check",
    "--no-pings",
    "--dns-prefetch-disable",
    "--mute-audio",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
)


class BadBrowserSetting(StartupError):
    """A ``BROWSER_*`` setting has a value the worker cannot use."""


def find_executable(setting: str) -> str | None:
    """The browser to drive: ``setting`` when it names an executable file (a path or a
    name on the PATH), else the first of :data:`CANDIDATES` found; None when none is."""
    for name in (setting,) if setting else CANDIDATES:
        path = name if os.path.isabs(name) else shutil.which(name)
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


@dataclass(frozen=True)
class BrowserConfig:
    mode: str = "auto"
    concurrency: int = 0
    executable: str | None = None
    page_timeout: float = defaults.BROWSER_PAGE_TIMEOUT
    settle_time: float = defaults.BROWSER_SETTLE_TIME
    max_bytes: int = defaults.BROWSER_PAGE_MAX_BYTES
    max_requests: int = defaults.BROWSER_PAGE_MAX_REQUESTS
    blocked_resources: frozenset[str] = field(
        default_factory=lambda: frozenset(defaults.BROWSER_BLOCKED_RESOURCES)
    )
    restart_pages: int = defaults.BROWSER_RESTART_PAGES
    max_memory_mb: int = defaults.BROWSER_MAX_MEMORY_MB
    max_contexts: int = defaults.BROWSER_MAX_CONTEXTS
    sites_refresh: float = defaults.BROWSER_SITES_REFRESH
    hold_per_slot: int = defaults.BROWSER_HOLD_PER_SLOT
    #: The setting's value (for the log line of a missing browser).
    wanted: str = ""

    @classmethod
    def from_settings(cls, settings: Any) -> BrowserConfig:
        mode = str(settings.get("BROWSER_RENDERING", defaults.BROWSER_RENDERING)).strip().lower()
        if mode not in MODES:
            raise BadBrowserSetting(
                f"BROWSER_RENDERING must be one of {', '.join(MODES)}, not {mode!r}"
            )
        try:
            concurrency = settings.getint("BROWSER_CONCURRENCY", defaults.BROWSER_CONCURRENCY)
        except ValueError:
            given = settings.get("BROWSER_CONCURRENCY")
            raise BadBrowserSetting(
                f"BROWSER_CONCURRENCY must be a whole number, not {given!r}"
            ) from None
        wanted = settings.get("BROWSER_EXECUTABLE", defaults.BROWSER_EXECUTABLE) or ""
        return cls(
            mode=mode,
            concurrency=max(0, concurrency),
            executable=find_executable(wanted),
            page_timeout=settings.getfloat("BROWSER_PAGE_TIMEOUT", defaults.BROWSER_PAGE_TIMEOUT),
            settle_time=settings.getfloat("BROWSER_SETTLE_TIME", defaults.BROWSER_SETTLE_TIME),
            max_bytes=settings.getint("BROWSER_PAGE_MAX_BYTES", defaults.BROWSER_PAGE_MAX_BYTES),
            max_requests=settings.getint(
                "BROWSER_PAGE_MAX_REQUESTS", defaults.BROWSER_PAGE_MAX_REQUESTS
            ),
            blocked_resources=frozenset(
                settings.getlist("BROWSER_BLOCKED_RESOURCES", defaults.BROWSER_BLOCKED_RESOURCES)
            ),
            restart_pages=settings.getint("BROWSER_RESTART_PAGES", defaults.BROWSER_RESTART_PAGES),
            max_memory_mb=settings.getint("BROWSER_MAX_MEMORY_MB", defaults.BROWSER_MAX_MEMORY_MB),
            max_contexts=max(
                1, settings.getint("BROWSER_MAX_CONTEXTS", defaults.BROWSER_MAX_CONTEXTS)
            ),
            sites_refresh=settings.getfloat(
                "BROWSER_SITES_REFRESH", defaults.BROWSER_SITES_REFRESH
            ),
            hold_per_slot=max(
                1, settings.getint("BROWSER_HOLD_PER_SLOT", defaults.BROWSER_HOLD_PER_SLOT)
            ),
            wanted=wanted,
        )

    @property
    def can_render(self) -> bool:
        """This worker renders pages: not ``never``, a concurrency above 0, a browser."""
        return self.mode != "never" and self.concurrency > 0 and self.executable is not None

    def why_not(self) -> str:
        """Why this worker renders nothing (for its one log line)."""
        if self.mode == "never":
            return "BROWSER_RENDERING=never"
        if self.concurrency <= 0:
            return "BROWSER_CONCURRENCY=0"
        where = self.wanted or " or ".join(CANDIDATES)
        return (
            f"no browser at {where} (install Debian's chromium, e.g. scripts/bootstrap-services, "
            "or set BROWSER_EXECUTABLE)"
        )

    def announce(self) -> None:
        """Say once per process why this worker renders nothing: a WARNING when the
        browser is missing, an INFO line when a setting says so."""
        reason = self.why_not()
        if self.can_render or reason in _announced:
            return
        _announced.add(reason)
        missing = self.mode != "never" and self.concurrency > 0
        level = logging.WARNING if missing else logging.INFO
        logger.log(level, "This worker renders no page in a browser: %s", reason)

    def launch_options(self, dead_proxy: str) -> dict[str, Any]:
        """Playwright's ``launch()`` options (see the module doc)."""
        return {
            "executable_path": self.executable,
            "headless": True,
            "chromium_sandbox": False,
            "handle_sigint": False,
            "handle_sigterm": False,
            "handle_sighup": False,
            "args": list(LAUNCH_ARGS),
            "proxy": {"server": dead_proxy},
            "timeout": self.page_timeout * 1000,
        }
