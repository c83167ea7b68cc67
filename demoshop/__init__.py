"""The demo shop: a deterministic local e-commerce site for the demo, the tests and benchmarks.

Public surface:

* ``Catalog`` (``demoshop.catalog``): the products and categories, and the pages a
  correct crawler fetches (``crawlable_paths()``) and the products it extracts
  (``expected_product(path)``);
* ``ShopProcess`` (``demoshop.process``): the shop in a subprocess, with its access log;
* ``AccessEntry``: one line of the access log;
* ``python -m demoshop --help``: the command line.

See docs/demoshop.md.
"""

from __future__ import annotations

from demoshop.accesslog import AccessEntry, read_access_log
from demoshop.catalog import Catalog, Category, Product
from demoshop.process import ShopProcess, ShopStartError

__all__ = [
    "AccessEntry",
    "Catalog",
    "Category",
    "Product",
    "ShopProcess",
    "ShopStartError",
    "read_access_log",
]
