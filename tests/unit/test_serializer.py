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
    assert serializer.loads(raw) == {"url": "http://shop.test/", "callback": "parse"}
    assert len(raw) < 60


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
