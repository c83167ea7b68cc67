"""Seed validation shared by the master and the workers."""

import json

import pytest

from crawler.policy.seeds import (
    SEED_LABEL_KEYS,
    SEED_META_KEYS,
    InvalidSeed,
    Seed,
    SeedError,
    parse_seed,
    parse_seed_lines,
)


@pytest.mark.parametrize(
    "line, reason",
    [
        ("ftp://shop.test/", "scheme 'ftp' is not http or https"),
        ("shop.test/products", "not an absolute URL"),
        ("not a url", "whitespace"),
        ("http://", "no host"),
        ("http://shop..test/", "invalid host"),
        ("http://shop.test:99999/", "malformed URL"),
        ("http://" + "a" * 3000 + ".test/", "longer than 2048"),
        ('{"url": "http://shop.test/"', "invalid JSON"),
        ('{"meta": {}}', "no 'url'"),
        ('{"url": "http://shop.test/", "meta": []}', "'meta' must be a JSON object"),
        ('{"url": "http://shop.test/", "cookies": {}}', "unknown key(s) cookies"),
        ('["http://shop.test/"]', "must be an object"),
        ('{"url": 42}', "must be a string"),
    ],
)
def test_bad_lines_say_why(line, reason):
    with pytest.raises(InvalidSeed, match=None) as info:
        parse_seed(line)
    assert reason in str(info.value)


def test_good_lines():
    assert parse_seed("  https://Shop.test/a?b=1  ") == Seed("https://Shop.test/a?b=1")
    seed = parse_seed('{"url": "http://127.0.0.1:8080/", "meta": {"source": "demo"}}')
    assert seed.meta == {"source": "demo"}
    assert seed.to_json() == '{"meta":{"source":"demo"},"url":"http://127.0.0.1:8080/"}'
    assert parse_seed("http://[::1]:8080/").url == "http://[::1]:8080/"


def test_fingerprint_is_canonical():
    assert (
        parse_seed("http://shop.test/?b=2&a=1#top").fingerprint
        == parse_seed("http://shop.test/?a=1&b=2").fingerprint
    )


def test_lines_are_numbered_and_blank_and_comment_lines_skipped():
    lines = ["# seeds", "", "http://a.test/", "   ", "ftp://b.test/", "\ufeffhttp://c.test/"]
    results = list(parse_seed_lines(lines))
    assert [type(r) for r in results] == [Seed, SeedError, Seed]
    assert [r.lineno for r in results] == [3, 5, 6]
    assert str(results[1]) == "line 5: scheme 'ftp' is not http or https: 'ftp://b.test/'"


@pytest.mark.parametrize(
    "key",
    [
        "proxy",
        "download_maxsize",
        "download_timeout",
        "download_warnsize",
        "dont_filter",
        "dont_redirect",
        "dont_retry",
        "handle_httpstatus_list",
        "handle_httpstatus_all",
        "cookiejar",
        "bindaddress",
        "depth",
        "max_retry_times",
        "redirect_urls",
        "site",
        "lease",
        "_auth_proxy",
        "download_slot",
        "Category",  # the allow-list is exact
        "scope",  # the compact scope requests carry: made by the worker only
        "sitemap",
        "lastmod",
        "dont_obey_robotstxt",
    ],
)
def test_seed_meta_is_an_allow_list(key):
    line = json.dumps({"url": "http://shop.test/", "meta": {"category": "toys", key: 1}})
    with pytest.raises(InvalidSeed) as info:
        parse_seed(line)
    assert f"meta key(s) {key} not allowed" in str(info.value)
    [error] = parse_seed_lines(["", line])
    assert isinstance(error, SeedError) and error.lineno == 2


def test_seed_meta_labels_pass():
    meta = {key: "x" for key in SEED_LABEL_KEYS}
    meta.update(strategy="sitemap", max_pages=10, max_depth=2, allow="/p/", deny=["/c/"])
    meta.update(render="auto")
    assert set(meta) == SEED_META_KEYS
    seed = parse_seed(json.dumps({"url": "http://shop.test/", "meta": meta}))
    assert seed.meta == meta
