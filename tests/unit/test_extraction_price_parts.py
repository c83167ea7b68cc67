"""A price element that writes the list and the sale price in plain children of its
own: the part the shopper pays is told by the children's class words, a strike-through
or the saving the box shows (visible/price_parts.py). Class: price boxes whose parts
carry no price class of their own."""

from __future__ import annotations

from decimal import Decimal

import pytest

from crawler.extraction import extract_product_from_html

_URL = "https://shop.example/products/desk-lamp"


def _price(box: str) -> Decimal | None:
    html = (
        "<html><head><title>Desk Lamp</title></head><body><main><h1>Desk Lamp</h1>"
        f"{box}<p>SKU: DL-7</p><button>Add to cart</button></main></body></html>"
    )
    product = extract_product_from_html(_URL, html)
    assert product is not None
    return product["price"]


_SALE_BOXES = {
    "class words old and new": "<span class='old'>$80.00</span> <span class='new'>$60.00</span>",
    "regular and sale": "<span class='regular'>$80.00</span> <span class='sale'>$60.00</span>",
    "compare-at beside a bare amount": "<span class='compare-at'>$80.00</span> <span>$60.00</span>",
    "original and final": "<span class='original'>$80.00</span> <span class='final'>$60.00</span>",
    "inline strike-through": "<span style='text-decoration: line-through'>$80.00</span> "
    "<span>$60.00</span>",
    "a saving that is the difference": "<span>$80.00</span> <span>$60.00</span> "
    "<span>You save $20.00</span>",
    "a discount that is the difference": "<span>$80.00</span> <span>$60.00</span> "
    "<span>-25%</span>",
    "the sale part first, the list part marked": "<b>$60.00</b> <i class='was'>$80.00</i>",
}


@pytest.mark.parametrize("case", sorted(_SALE_BOXES))
def test_the_part_the_shopper_pays(case: str) -> None:
    assert _price(f"<div class='price'>{_SALE_BOXES[case]}</div>") == Decimal("60.00")


def test_two_bare_amounts_without_evidence_keep_the_first() -> None:
    # nothing says which is paid (a saving of another size, no class words): as before
    box = "<div class='price'><span>$80.00</span> <span>$60.00</span> <span>Save $5.00</span></div>"
    assert _price(box) == Decimal("80.00")


def test_a_net_part_beside_the_gross_one_is_left_to_the_net_price_rule() -> None:
    box = (
        "<div class='price'><span>€121,00</span> <span class='new'>€100,00 excl. VAT</span>"
        "</div>"
    )
    assert _price(box) == Decimal("121.00")



@pytest.mark.parametrize(
    "box",
    [
        "<span class='old'>$80.00</span> $60.00",
        "<span class='was'>$80.00</span> $60.00 <span class='save'>Save $20.00</span>",
        "<s>$80.00</s> $60.00 <span>(25% off)</span>",
    ],
)
def test_a_marked_list_price_beside_the_boxs_own_amount(box: str) -> None:
    # class: themes that mark only the struck price, in a child whose class is no price
    # class, and write the selling price as the box's own text
    assert _price(f"<div class='price'>{box}</div>") == Decimal("60.00")
