"""Site profiles: loading, validation errors that name file and field, lookup, overrides."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scrapy.http import HtmlResponse

from crawler.extraction import (
    PROFILES_DIR,
    ProfileError,
    ProfileRegistry,
    SiteProfile,
    discover_links,
    extract_product,
)
from tests.unit.test_extraction import PAGES, _comparable

EXAMPLE = PAGES / "profiles" / "acme_widgets_product.html"
EXAMPLE_URL = "https://www.acme-widgets.example/item/sprocket-deluxe-77"


def example_response(url: str = EXAMPLE_URL) -> HtmlResponse:
    return HtmlResponse(url=url, body=EXAMPLE.read_bytes(), encoding="utf-8")


def write(folder: Path, name: str, data: Any) -> Path:
    path = folder / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_shipped_profiles_load_and_select_by_domain() -> None:
    registry = ProfileRegistry.from_dir(PROFILES_DIR)
    assert len(registry) >= 1
    profile = registry.for_url(EXAMPLE_URL)
    assert profile is not None and profile.currency == "CAD"
    assert registry.for_url("https://acme-widgets.example/") is profile
    assert registry.for_url("https://eu.shop.acme-widgets.example:8080/x") is profile
    assert registry.for_url("https://notacme-widgets.example/") is None
    assert registry.for_url("https://example.com/") is None


def test_profile_overrides_fields_the_generic_extractor_misses() -> None:
    response = example_response()
    assert extract_product(response) is None  # no heading, no price class: not recognised
    profile = ProfileRegistry.from_dir().for_url(response.url)
    product = extract_product(response, profile)
    expected = json.loads(EXAMPLE.with_suffix("").with_suffix(".expected.json").read_text())
    assert product is not None
    for field, value in expected.items():
        assert _comparable(field, product[field]) == _comparable(field, value), field


def test_unnamed_fields_still_come_from_the_generic_extractor(tmp_path: Path) -> None:
    profile = SiteProfile.from_dict(
        {"domains": ["gadgetbarn.example"], "fields": {"brand": {"css": "h1::text"}}}
    )
    html = (PAGES / "mismatch_visible_wins.html").read_bytes()
    url = "https://gadgetbarn.example/products/noise-cancelling-headphones-nc700"
    product = extract_product(HtmlResponse(url=url, body=html, encoding="utf-8"), profile)
    assert product is not None
    assert product["brand"] == "NC700 Noise Cancelling Headphones"
    assert product["sku"] == "GB-NC700" and str(product["price"]) == "39.99"


def test_is_product_selector_vetoes_and_forces() -> None:
    veto = SiteProfile.from_dict({"domains": ["x.example"], "is_product": {"css": "#nope"}})
    html = (PAGES / "magento_microdata.html").read_bytes()
    url = "https://www.luma-gear.example/men/tops/cascade-hoodie.html"
    response = HtmlResponse(url=url, body=html, encoding="utf-8")
    assert extract_product(response) is not None
    assert extract_product(response, veto) is None
    force = SiteProfile.from_dict(
        {"domains": ["x.example"], "is_product": {"xpath": "//h1"}}
    )
    home = HtmlResponse(
        url="https://x.example/only-heading",
        body=b"<html><body><h1>Bare product</h1><p>Call us for a price.</p></body></html>",
        encoding="utf-8",
    )
    assert extract_product(home) is None
    product = extract_product(home, force)
    assert product is not None and product["name"] == "Bare product" and product["price"] is None


def test_profile_currency_resolves_bare_dollar() -> None:
    profile = SiteProfile.from_dict({"domains": ["plain.example"], "currency": "MXN"})
    body = (
        b"<html><body><h1>Sombrero</h1><span class='price'>$450.00</span>"
        b"<button>Add to cart</button></body></html>"
    )
    response = HtmlResponse(url="https://plain.example/p/1", body=body, encoding="utf-8")
    assert extract_product(response)["currency"] == "USD"  # type: ignore[index]
    assert extract_product(response, profile)["currency"] == "MXN"  # type: ignore[index]


def test_profile_link_rules() -> None:
    profile = ProfileRegistry.from_dir().for_url(EXAMPLE_URL)
    assert discover_links(example_response(), profile) == [
        "https://www.acme-widgets.example/catalogue/sprockets/",
        "https://www.acme-widgets.example/item/sprocket-mini-12",
        "https://www.acme-widgets.example/catalogue/sprockets/?page=2",
    ]


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ({"domains": ["a.example"], "fields": {"colour": {"css": "h1"}}}, "fields.colour"),
        ({"domains": ["a.example"], "fields": {"name": {"css": "h1[[["}}}, "fields.name.css"),
        (
            {"domains": ["a.example"], "fields": {"price": {"xpath": "//div[@"}}},
            "fields.price.xpath",
        ),
        ({"domains": ["a.example"], "fields": {"price": "h1"}}, "fields.price"),
        ({"domains": ["a.example"], "fields": {"price": {"css": "a", "xpath": "//a"}}},
         "fields.price"),
        ({"domains": ["a.example"], "follow": {"allow": ["(unclosed"]}}, "follow.allow[0]"),
        ({"domains": ["a.example"], "follow": {"deny": ["ok", "[z-a]"]}}, "follow.deny[1]"),
        ({"domains": ["a.example"], "follow": {"restrict_css": ["div >"]}},
         "follow.restrict_css[0]"),
        ({"domains": ["a.example"], "follow": {"restrict_xpath": ["//["]}},
         "follow.restrict_xpath[0]"),
        ({"domains": ["a.example"], "follow": {"crawl_everything": True}},
         "follow.crawl_everything"),
        ({"domains": ["a.example"], "currency": "DOLLARS"}, "currency"),
        ({"domains": ["a.example"], "is_product": {"css": ""}}, "is_product.css"),
        ({"domains": []}, "domains"),
        ({"domains": ["http://a.example/"]}, "domains[0]"),
        ({"domain": ["a.example"]}, "domain"),
        ([], "(top level)"),
    ],
)
def test_invalid_profiles_name_file_and_field(tmp_path: Path, data: Any, where: str) -> None:
    write(tmp_path, "good.json", {"domains": ["good.example"]})
    write(tmp_path, "broken.json", data)
    with pytest.raises(ProfileError) as info:
        ProfileRegistry.from_dir(tmp_path)
    message = str(info.value)
    assert "broken.json" in message and f": {where}:" in message, message


def test_invalid_json_and_duplicate_domains(tmp_path: Path) -> None:
    write(tmp_path, "a.json", "{not json")
    with pytest.raises(ProfileError, match=r"a\.json: not valid JSON"):
        ProfileRegistry.from_dir(tmp_path)
    write(tmp_path, "a.json", {"domains": ["shop.example"]})
    write(tmp_path, "b.json", {"domains": ["www.shop.example", "shop.example"]})
    with pytest.raises(ProfileError, match=r"b\.json: domains: 'shop.example' is already claimed"):
        ProfileRegistry.from_dir(tmp_path)


def test_missing_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="does not exist"):
        ProfileRegistry.from_dir(tmp_path / "nope")


def test_longest_domain_wins() -> None:
    registry = ProfileRegistry(
        [
            SiteProfile.from_dict({"name": "all", "domains": ["shop.example"]}),
            SiteProfile.from_dict({"name": "outlet", "domains": ["outlet.shop.example"]}),
        ]
    )
    outlet = registry.for_url("https://outlet.shop.example/p")
    main = registry.for_url("https://www.shop.example/p")
    assert outlet is not None and outlet.name == "outlet"
    assert main is not None and main.name == "all"
