"""The data checks of a whole crawl, as the master reads them: :func:`gather_checks`,
called by ``master checks``, ``master status --sites``, ``GET /api/v1/checks`` and
``/api/v1/sites``, the dashboard's sites view and ``master metrics`` alike.

The sites are those of ``<spider>:sites`` (every site a worker fetched a page of,
:mod:`crawler.extensions.sitestats`); their figures are read in one pipeline
(:class:`~.store.FiguresStore`) and checked by :func:`~.checks.run_checks` with the
thresholds the workers use: the setting ``DATACHECKS_OVERRIDES`` and the site
profiles' ``checks`` sections (:class:`CheckSettings`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from crawler.core import defaults
from crawler.core.itemkinds import kind_of_spider
from crawler.core.keys import CrawlKeys
from crawler.core.records import as_text

from .checks import FAIL, run_checks, validate_overrides
from .store import FiguresStore


@dataclass
class CheckSettings:
    """The thresholds the checks run with: global overrides and the site profiles."""

    overrides: dict[str, Any] = field(default_factory=dict)
    profiles: Any = None  # a crawler.extraction.ProfileRegistry, or None

    @classmethod
    def from_project(cls) -> CheckSettings:
        """The project's settings (``crawler/settings.py`` with the environment) and its
        site profiles: what the workers of this checkout use."""
        from scrapy.settings import Settings

        from crawler.extraction import ProfileRegistry

        settings = Settings()
        settings.setmodule("crawler.settings", priority="project")
        overrides = validate_overrides(
            settings.getdict("DATACHECKS_OVERRIDES", defaults.DATACHECKS_OVERRIDES),
            "DATACHECKS_OVERRIDES",
        )
        folder = settings.get("SITE_PROFILES_DIR", defaults.SITE_PROFILES_DIR)
        profiles = ProfileRegistry.from_dir(folder) if folder else ProfileRegistry.from_dir()
        return cls(overrides, profiles)

    def for_site(self, site: str) -> dict[str, Any]:
        if self.profiles is None:
            return {}
        profile = self.profiles.for_url(f"http://{site}/")
        return dict(getattr(profile, "checks", None) or {}) if profile is not None else {}


def crawl_sites(client: Any, keys: CrawlKeys) -> list[str]:
    """The sites of the crawl (those a worker fetched a page of), sorted."""
    sites = set()
    for name in client.hkeys(keys.sites):
        counter, _, site = as_text(name).partition(" ")
        if counter == "pages" and site:
            sites.add(site)
    return sorted(sites)


def gather_checks(
    client: Any, keys: CrawlKeys, config: CheckSettings | None = None
) -> dict[str, Any]:
    """``{"spider", "kind", "failing": n, "sites": [{"site", "rows", "failing": [names],
    "checks": [result...]}...]}``, the sites with a failing check first; a result is
    :func:`~.checks.run_checks`'s."""
    config = config or CheckSettings()
    kind = kind_of_spider(keys.spider).name
    figures = FiguresStore(client, keys).read(crawl_sites(client, keys))
    sites = []
    for site, fig in figures.items():
        results = run_checks(site, fig, kind, config.overrides, config.for_site(site))
        sites.append(
            {
                "site": site,
                "rows": fig.get("rows"),
                "failing": [r["check"] for r in results if r["status"] == FAIL],
                "checks": results,
            }
        )
    sites.sort(key=lambda s: (not s["failing"], s["site"]))
    return {
        "spider": keys.spider,
        "kind": kind,
        "failing": sum(len(s["failing"]) for s in sites),  # type: ignore[arg-type, misc]
        "sites": sites,
    }


def failing_by_site(report: dict[str, Any]) -> dict[str, list[str]]:
    """site -> the names of its failing checks (every site of the report)."""
    return {entry["site"]: list(entry["failing"]) for entry in report["sites"]}


def render_checks(report: dict[str, Any], verbose: bool = False) -> str:
    """The text of ``master checks``: one line per failing check with its figures and
    example URLs, then (``verbose``) every other check's status."""
    lines = []
    for entry in report["sites"]:
        for result in entry["checks"]:
            status = result["status"]
            if status != FAIL and not verbose:
                continue
            lines.append(
                f"{status.upper():<5} {entry['site']:<32} {result['check']:<24} "
                f"{result['message']} (threshold {result['threshold']:g}, "
                f"min {result['min_rows']} rows)"
            )
            for url in result["examples"]:
                lines.append(f"      e.g. {url}")
    checked = len(report["sites"])
    summary = (
        f"{report['failing']} failing check(s) on "
        f"{sum(1 for s in report['sites'] if s['failing'])} of {checked} site(s)"
        if report["failing"]
        else f"no failing check on {checked} site(s)"
    )
    lines.append(summary)
    return "\n".join(lines)
