"""Seed validation shared by the master and the workers."""

import pytest

from crawler.seeds import InvalidSeed, Seed, SeedError, parse_seed, parse_seed_lines


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
    seed = parse_seed('{"url": "http://127.0.0.1:8080/", "meta": {"shop": "demo"}}')
    assert seed.meta == {"shop": "demo"}
    assert seed.to_json() == '{"meta":{"shop":"demo"},"url":"http://127.0.0.1:8080/"}'
    assert parse_seed("http://[::1]:8080/").url == "http://[::1]:8080/"


def test_fingerprint_is_canonical():
    assert parse_seed("http://shop.test/?b=2&a=1#top").fingerprint == parse_seed(
        "http://shop.test/?a=1&b=2"
    ).fingerprint


def test_lines_are_numbered_and_blank_and_comment_lines_skipped():
    lines = ["# seeds", "", "http://a.test/", "   ", "ftp://b.test/", "\ufeffhttp://c.test/"]
    results = list(parse_seed_lines(lines))
    assert [type(r) for r in results] == [Seed, SeedError, Seed]
    assert [r.lineno for r in results] == [3, 5, 6]
    assert str(results[1]) == "line 5: scheme 'ftp' is not http or https: 'ftp://b.test/'"
