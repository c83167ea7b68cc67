"""What "the same site" means, once for the whole crawler.

:func:`site_key` names the site of a URL. Two URLs are on the same site when
their keys are equal; the key is also the ``<site>`` of the politeness budget's
Redis key ``<spider>:polite:<site>`` (:mod:`crawler.policy.politeness`) and the
``site`` a request carries in its meta (the seed's site, kept by every request
that follows from it). The rule:

* **host**: the URL's host, lower-cased (host names are case-insensitive),
  without userinfo (``user:pass@``) and without a trailing dot
  (``shop.example.`` is ``shop.example``);
* **www.**: one leading ``www.`` is dropped: ``www.shop.example`` and
  ``shop.example`` are one site; other sub-domains (``cdn.shop.example``) are
  sites of their own;
* **IDN**: an internationalised host is written in its ASCII (punycode) form,
  the way Scrapy requests it (``bücher.example`` is ``xn--bcher-kva.example``),
  so a seed typed in Unicode and the responses to it have one key; a host that
  has no such form is kept as written;
* **port**: kept as ``host:port`` unless it is the scheme's default (http 80,
  https 443): ``http://shop.example:80/`` is ``shop.example``,
  ``http://127.0.0.1:8765/`` is ``127.0.0.1:8765``; a port that is not a number
  in range is kept as written; IPv6 hosts keep their brackets (``[::1]:8080``);
* **scheme**: not part of the key: ``http://shop.example/`` and
  ``https://shop.example/`` are one site.

A URL without a host gives ``""``; a URL :func:`urllib.parse.urlsplit` cannot
parse (``http://[broken``) raises ``ValueError``.
"""

from __future__ import annotations

from urllib.parse import urlsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}


def site_key(url: str) -> str:
    """The site of ``url``: its host and non-default port (see the module doc)."""
    parts = urlsplit(url)
    hostport = parts.netloc.rpartition("@")[2]
    if hostport.startswith("["):  # IPv6: "[::1]:8080"
        host, _, rest = hostport.partition("]")
        host, port_text = host + "]", rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port_text = hostport.partition(":")
    host = _ascii_host(host.lower().rstrip("."))
    if host.startswith("www."):
        host = host[4:]
    try:
        port = parts.port
    except ValueError:  # not a number, or out of range: kept as written
        return f"{host}:{port_text}"
    if port is None or port == _DEFAULT_PORTS.get(parts.scheme):
        return host
    return f"{host}:{port}"


def _ascii_host(host: str) -> str:
    if host.isascii():
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:  # a label too long or empty: no ASCII form
        return host
