"""What needs a browser, decided without one: application shells, the settings, the demo
shop's section built in the browser (its state pages read from the HTML)."""

from __future__ import annotations

import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from scrapy.http import HtmlResponse
from scrapy.settings import Settings

from crawler.browser.config import BadBrowserSetting, BrowserConfig, find_executable
from crawler.browser.shell import gives_nothing, looks_like_app_shell
from crawler.extraction import discover_links, extract
from demoshop.browserapp import BrowserSection
from demoshop.catalog import Catalog
from demoshop.site import ShopSite


def page(body: str, head: str = "", url: str = "http://shop.test/x") -> HtmlResponse:
    html = f"<!doctype html><html><head><title>Shop</title>{head}</head><body>{body}</body></html>"
    return HtmlResponse(url, body=html.encode(), encoding="utf-8")


BUNDLE = '<script src="/static/js/main.3f2a.js"></script>'


@pytest.mark.parametrize(
    "body",
    [
        f'<div id="root"></div>{BUNDLE}',
        f'<div id="__next"></div>{BUNDLE}',
        f"<app-root></app-root>{BUNDLE}",
        f'<div data-reactroot=""></div><noscript>You need to enable JavaScript.</noscript>{BUNDLE}',
        '<div id="app"></div><script type="module">import("/a.js")</script>',
    ],
)
def test_application_shells(body: str) -> None:
    response = page(body)
    assert looks_like_app_shell(response) and gives_nothing(response)


@pytest.mark.parametrize(
    "body",
    [
        '<div id="root"></div>',  # no script
        f"<div>{BUNDLE}</div>",  # nothing to mount into
        f'<div id="root"><h1>Boots</h1><p>{"Sturdy leather boots. " * 30}</p></div>{BUNDLE}',
    ],
)
def test_not_shells(body: str) -> None:
    assert not looks_like_app_shell(page(body))


def test_a_shell_that_gives_something_needs_no_browser() -> None:
    links = page(f'<div id="root"><a href="/c/boots/">Boots</a></div>{BUNDLE}')
    assert looks_like_app_shell(links) and not gives_nothing(links)
    state = page(
        '<div id="__next"></div><script id="__NEXT_DATA__" type="application/json">'
        '{"props":{"pageProps":{"categories":[{"name":"Boots","url":"/c/boots/"}]}}}</script>'
        + BUNDLE
    )
    assert looks_like_app_shell(state) and not gives_nothing(state)


def test_settings(tmp_path: Path) -> None:
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert find_executable(str(fake)) == str(fake)
    assert find_executable(str(tmp_path / "missing")) is None
    config = BrowserConfig.from_settings(Settings({"BROWSER_EXECUTABLE": str(fake)}))
    assert config.can_render and config.mode == "auto" and config.concurrency == 2
    assert config.launch_options("http://127.0.0.1:9")["proxy"] == {"server": "http://127.0.0.1:9"}
    assert "--no-sandbox" in config.launch_options("x")["args"]
    off = BrowserConfig.from_settings(Settings({"BROWSER_EXECUTABLE": str(fake),
                                                "BROWSER_CONCURRENCY": 0}))
    assert not off.can_render and off.why_not() == "BROWSER_CONCURRENCY=0"
    gone = BrowserConfig.from_settings(Settings({"BROWSER_EXECUTABLE": str(tmp_path / "none")}))
    assert not gone.can_render and "no browser at" in gone.why_not()
    with pytest.raises(BadBrowserSetting, match="BROWSER_RENDERING must be one of"):
        BrowserConfig.from_settings(Settings({"BROWSER_RENDERING": "sometimes"}))
    with pytest.raises(BadBrowserSetting, match="BROWSER_CONCURRENCY must be a whole number"):
        BrowserConfig.from_settings(Settings({"BROWSER_CONCURRENCY": "two"}))


def test_the_memory_of_a_process_tree() -> None:
    from crawler.browser import processes

    mine = processes.tree(os.getpid())
    assert mine[0] == os.getpid() and processes.rss_mib(mine) > 1
    assert processes.tree(2**22 + 7) == []  # no such process


def test_the_temporary_profiles_of_browsers_and_their_removal(tmp_path: Path) -> None:
    """A browser's temporary profile is read from its command line, and deleted with its
    process singleton's directory once the process is gone; a profile of another name
    (a user's own) never is."""
    from crawler.browser import processes

    profile = tmp_path / f"{processes.PROFILE_PREFIX}abc"
    singleton = tmp_path / "org.chromium.Chromium.xyz"
    own = tmp_path / "my-profile"
    for folder in (profile / "Default", singleton, own):
        folder.mkdir(parents=True)
    (singleton / "SingletonSocket").touch()
    (profile / "SingletonSocket").symlink_to(singleton / "SingletonSocket")
    sleeper = "import time; time.sleep(60)"
    started = [
        subprocess.Popen([sys.executable, "-c", sleeper, f"--user-data-dir={folder}"])
        for folder in (profile, own)
    ]
    known: dict[str, str | None] = {}
    try:
        assert processes.profiles([p.pid for p in started]) == {str(profile)}
        processes.tidy_profiles(started[0].pid, known)  # as if the browser's driver
        assert known == {str(profile): str(singleton)} and profile.exists()
    finally:
        for process in started:
            process.kill()
            process.wait()
    assert processes.singleton_dir(str(own)) is None
    processes.remove_profile(str(own), str(own))
    assert own.exists()  # not a temporary profile, nor a singleton's directory
    processes.tidy_profiles(started[0].pid, known)  # gone: what it left is deleted
    assert known == {} and not profile.exists() and not singleton.exists()


def test_environment_sets_the_browser_settings() -> None:
    from crawler.core.config import env_overrides

    env = {"BROWSER_RENDERING": "never", "BROWSER_CONCURRENCY": "0", "BROWSER_EXECUTABLE": "/x"}
    assert env_overrides(env) == env


CATALOG = Catalog.build(products=40, seed=1)
SECTION = BrowserSection(CATALOG, 10)
BASE = "http://127.0.0.1:8000"


def served(path: str) -> HtmlResponse:
    site = ShopSite(CATALOG, browser_products=10)
    response = site.resolve("GET", path)
    assert response.status == 200, path
    return HtmlResponse(BASE + path, body=response.body, encoding="utf-8")


def test_the_home_page_links_the_section_only_when_asked() -> None:
    assert "/app/" not in ShopSite(CATALOG).resolve("GET", "/").body.decode()
    links = discover_links(served("/"))
    assert BASE + "/app/" in links and BASE + "/state/" in links


def test_the_state_variant_is_read_from_the_html() -> None:
    expected = SECTION.expected_products("state", BASE)
    got = {}
    for path in sorted(SECTION.page_paths("state")):
        response = served(path)
        product = extract(response).product
        if product is not None:
            got[product["url"]] = {k: product[k] for k in ("name", "price", "currency",
                                                           "availability", "sku")}
            assert product["provenance"]["name"] == "embedded-state"
    assert got == expected and len(got) == 10
    assert all(isinstance(p["price"], Decimal) for p in got.values())
    category = next(p for p in SECTION.page_paths("state") if "/c/" in p)
    assert any("/state/p/" in link for link in discover_links(served(category)))


def test_the_app_variant_needs_a_browser() -> None:
    for path in SECTION.page_paths("app"):
        response = served(path)
        assert looks_like_app_shell(response) and gives_nothing(response), path
    api = ShopSite(CATALOG, browser_products=10).resolve("GET", "/app/api/home.json")
    assert api.status == 200 and b'"/app/c/' in api.body
