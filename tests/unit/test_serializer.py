from scrapy import Request, Spider
from scrapy.utils.request import request_from_dict

from crawler.scheduling import serializer


class _Spider(Spider):
    name = "ecommerce"

    def parse(self, response):  # pragma: no cover - only referenced by name
        pass

    def errback(self, failure):  # pragma: no cover
        pass


def test_round_trip_keeps_what_matters_and_drops_the_lease():
    spider = _Spider()
    request = Request(
        "http://shop.test/p/1.html?x=é",
        callback=spider.parse,
        errback=spider.errback,
        headers={"Referer": "http://shop.test/"},
        body=b"\x00\xff binary",
        method="POST",
        priority=3,
        meta={"site": "shop.test", "lease": "r|0|abc", "depth": 2},
    )
    raw = serializer.dumps(request.to_dict(spider=spider))
    assert b"lease" not in raw
    back = request_from_dict(serializer.loads(raw), spider=spider)
    assert back.url == request.url
    assert back.callback == spider.parse and back.errback == spider.errback
    assert back.headers.get("Referer") == b"http://shop.test/"
    assert back.body == b"\x00\xff binary"
    assert back.method == "POST" and back.priority == 3
    assert back.meta == {"site": "shop.test", "depth": 2}


def test_defaults_are_left_out():
    spider = _Spider()
    raw = serializer.dumps(
        Request("http://shop.test/", callback=spider.parse).to_dict(spider=spider)
    )
    # no errback and no site are said, since the decoder would supply both
    assert raw == b'{"u":"http://shop.test/","e":null,"m":{"site":null}}'
    assert serializer.loads(raw) == {
        "url": "http://shop.test/",
        "callback": "parse",
        "errback": None,
        "meta": {},
    }


def test_a_typical_link_carries_its_url_and_depth_only():
    spider = _Spider()
    url = "https://www.example-shop.com/p/aster-vale-classic-beanie-g426-1618.html"
    request = Request(
        url,
        callback=spider.parse,
        errback=spider.errback,
        meta={"site": "example-shop.com", "depth": 2, "lease": "r|0|abc"},
    )
    raw = serializer.encode_request(request, spider)
    assert raw == b'{"u":"%s","m":{"depth":2}}' % url.encode()
    back = request_from_dict(serializer.loads(raw), spider=spider)
    assert back.url == url
    assert back.callback == spider.parse and back.errback == spider.errback
    assert back.meta == {"site": "example-shop.com", "depth": 2}
    assert back.priority == 0 and back.method == "GET" and not back.dont_filter


def test_any_other_meta_and_a_foreign_site_are_kept():
    spider = _Spider()
    meta = {
        "site": "other.test",  # a redirect to another site keeps the seed's site
        "depth": 3,
        "retry_history": [{"reason": "503", "at": 1.5}],
        "scope": {"seed": "http://shop.test/c/", "prefix": "/c/"},
        "x": None,
    }
    request = Request("http://shop.test/p/1.html", callback=spider.parse, meta=meta, priority=-2)
    back = request_from_dict(
        serializer.loads(serializer.encode_request(request, spider)), spider=spider
    )
    assert back.meta == meta
    assert back.priority == -2 and back.errback is None


def test_a_payload_of_the_earlier_format_still_decodes():
    spider = _Spider()
    raw = (
        b'{"url":"https://www.example-shop.com/p/x-1.html","callback":"parse",'
        b'"errback":"errback","meta":{"site":"example-shop.com","depth":2},"priority":-1}'
    )
    back = request_from_dict(serializer.loads(raw), spider=spider)
    assert back.url == "https://www.example-shop.com/p/x-1.html"
    assert back.callback == spider.parse and back.errback == spider.errback
    assert back.meta == {"site": "example-shop.com", "depth": 2} and back.priority == -1
    # and the earlier format without callbacks meant none
    plain = serializer.loads(b'{"url":"http://shop.test/"}')
    assert request_from_dict(plain, spider=spider).callback is None


def test_fast_request_to_dict_matches_scrapy():
    from scrapy.http import FormRequest

    spider = _Spider()
    for request in [
        Request("http://shop.test/", callback=spider.parse, errback=spider.errback, meta={"a": 1}),
        Request("http://shop.test/", callback=None),
        FormRequest("http://shop.test/f", formdata={"q": "x"}, callback=spider.parse),
    ]:
        assert serializer.request_to_dict(request, spider) == request.to_dict(spider=spider)


def test_foreign_callbacks_fall_back_to_scrapy():
    import pytest

    spider = _Spider()
    with pytest.raises(ValueError):
        serializer.request_to_dict(Request("http://shop.test/", callback=lambda r: None), spider)


def test_dead_letters_keep_a_clean_request_to_try_again():
    spider = _Spider()
    request = Request(
        "http://shop.test/p",
        callback=spider.parse,
        headers={"User-Agent": "x"},
        meta={
            "site": "shop.test",
            "retry_times": 2,
            "download_slot": "shop.test",
            "lease": "r|0|a",
        },
    )
    again = serializer.requeueable(request)
    assert again.meta == {"site": "shop.test"}
    assert not again.headers and again.dont_filter and again.callback == spider.parse
