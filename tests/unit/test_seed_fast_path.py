"""The seed fast path gives the answers of the full path (validation, w3lib canonical form, host).

``crawler.policy.seeds`` validates and canonicalises URLs of the common shape with one
regular expression (the master does it for millions of lines); every other URL
takes the full path: ``urlsplit``, the host checks and w3lib's
``canonicalize_url``. These tests hold the two paths to the same results, on
URLs built to take the fast path and on arbitrary text.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from w3lib.url import canonicalize_url

from crawler.policy import seeds
from crawler.policy.seeds import (
    InvalidSeed,
    Seed,
    SeedError,
    parse_seed_lines,
    seed_fingerprint,
    seed_host,
    validate_url,
)

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_label = st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12)
_host = st.lists(_label, min_size=1, max_size=4).map(".".join)
_port = st.one_of(st.none(), st.integers(min_value=1, max_value=70000))
_path = st.one_of(
    st.none(),
    st.text("abcXYZ019._~!$&'()*+,=:@/-", max_size=30).map(lambda text: "/" + text),
)
_pair = st.tuples(
    st.text("abcXYZ019._~-", min_size=1, max_size=6), st.text("abcXYZ019._~-", max_size=6)
).map("=".join)
_query = st.one_of(st.none(), st.lists(_pair, min_size=1, max_size=5).map("&".join))


@st.composite
def simple_urls(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["http", "https"]))
    url = f"{scheme}://{draw(_host)}"
    port = draw(_port)
    if port is not None:
        url += f":{port}"
    path = draw(_path)
    if path is not None:
        url += path
    query = draw(_query)
    if query is not None:
        url += "?" + query
    return url


def _full_validation(url: str) -> str | None:
    """What the full path says: the URL, or None when refused."""
    try:
        return seeds._validate_in_full(url)
    except InvalidSeed:
        return None


def _both_validations(url: str) -> str | None:
    """``validate_url`` (fast path first) holds to the full path; the answer of both."""
    accepted = _full_validation(url)
    try:
        fast = validate_url(url)
    except InvalidSeed:
        fast = None
    assert fast == accepted
    return accepted


@SETTINGS
@given(simple_urls())
def test_urls_of_the_common_shape_get_the_full_paths_answers(url: str) -> None:
    accepted = _both_validations(url)
    [parsed] = parse_seed_lines([url])
    if accepted is None:
        assert isinstance(parsed, SeedError)
    else:
        assert seed_fingerprint(url) == canonicalize_url(url)
        assert seed_host(url) == urlsplit(url).hostname
        assert parsed == Seed(url, {}, 1)
        assert isinstance(parsed, Seed)
        assert parsed.fingerprint == canonicalize_url(url)
        assert parsed.host == urlsplit(url).hostname


@SETTINGS
@given(st.text(max_size=60).map(lambda tail: "https://" + tail))
def test_any_text_gets_the_full_paths_answers(url: str) -> None:
    url = url.strip()
    if _both_validations(url) is not None:
        try:
            expected = canonicalize_url(url)
        except Exception:  # w3lib refuses some exotic URLs; the master reports them
            return
        assert seed_fingerprint(url) == expected
        assert seed_host(url) == (urlsplit(url).hostname or "")


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("http://shop.test", "http://shop.test/"),
        ("http://shop.test:8080/p/1", "http://shop.test:8080/p/1"),
        ("https://shop.test/p?size=2&color=red", "https://shop.test/p?color=red&size=2"),
        ("https://shop.test?b=&a=1", "https://shop.test/?a=1&b="),
        # not the common shape: the full path decides
        ("https://Shop.test/P?b=1&&a", "https://shop.test/P?a=&b=1"),
        ("https://shop.test:080/x", "https://shop.test:80/x"),
        ("https://shop.test/a%7Eb#top", "https://shop.test/a~b"),
    ],
)
def test_canonical_forms(url: str, canonical: str) -> None:
    assert seed_fingerprint(url) == canonical == canonicalize_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "https://" + "a" * 64 + ".test/",  # a label over 63 characters
        "https://shop.test:65536/",
        "https://shop..test/",
        "https://-shop.test/ x",
    ],
)
def test_what_the_full_path_refuses_is_refused(url: str) -> None:
    with pytest.raises(InvalidSeed):
        validate_url(url)


def test_payload_without_meta_is_the_sorted_compact_json() -> None:
    import json

    url = 'https://shop.test/é"\\'
    assert Seed(url).to_json() == json.dumps({"url": url}, separators=(",", ":"), sort_keys=True)
    assert Seed(url, {"tags": ["x"]}).to_json() == (
        '{"meta":{"tags":["x"]},"url":"https://shop.test/\\u00e9\\"\\\\"}'
    )
