"""The state blocks a page embeds for its front-end framework, parsed into Python values.

Where frameworks put the data a page is built from, in the HTML the crawler has:

* ``<script id="__NEXT_DATA__" type="application/json">`` (Next.js),
  ``<script id="__NUXT_DATA__" type="application/json">`` (Nuxt 3: a flattened
  array, :mod:`.devalue`) and any other ``<script type="application/json">``;
* an assignment in a script: ``window.__NUXT__ = {...}`` or Nuxt 2's
  ``window.__NUXT__=(function(a,b){return {...}}(1,"x"))``,
  ``window.__INITIAL_STATE__ = {...}``, ``window.__PRELOADED_STATE__ = JSON.parse("...")``,
  ``window.__APOLLO_STATE__ = {...}``, and any ``window.__NAME__ =`` of that shape
  (whatever the framework calls it).

JSON is read with :mod:`json`, JavaScript object literals with ``chompjs`` (unquoted
keys, single quotes, trailing commas, ``undefined``). Hostile scripts are bounded: a
block longer than :data:`MAX_BLOCK_CHARS` or past :data:`MAX_TOTAL_CHARS` for the page
is skipped, nesting deeper than the parsers' recursion limit fails that block, and no
exception leaves :func:`state_blocks` (a block that does not parse is skipped).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any

import chompjs
from lxml.etree import _Element

from .devalue import looks_flattened, unflatten

logger = logging.getLogger(__name__)

#: Substrings of the HTML that may announce a state block (a cheap test before any parse).
MARKERS = ("application/json", "__NEXT_DATA__", "window.__", "__NUXT", "_STATE__")
#: Characters of one block read at most (a larger block is skipped), and of a page.
MAX_BLOCK_CHARS = 3_000_000
MAX_TOTAL_CHARS = 6_000_000
#: Script types whose text is JSON data (JSON-LD is read apart, by :mod:`..jsonld`).
_JSON_TYPES = ("application/json", "text/json")
_ASSIGNMENT = re.compile(r"(?:window|self|globalThis)\s*\.\s*(__[A-Za-z0-9_]+__)\s*=\s*")
_JSON_PARSE = re.compile(r"JSON\.parse\(\s*(\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*')\s*\)", re.S)
_IIFE = re.compile(
    r"\(\s*function\s*\(([\w$,\s]*)\)\s*\{(.*?)return\s*(\{.*\})\s*\}\s*\((.*)\)\s*\)\s*;?\s*$",
    re.S,
)
_TOKEN = re.compile(
    r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'|`(?:\\.|[^`\\])*`|[A-Za-z_$][\w$]*", re.S
)


@dataclass
class StateBlock:
    """One parsed block: where it came from (``__NEXT_DATA__``, ``__NUXT__``,
    ``application/json``...) and its value."""

    source: str
    data: Any


def has_state_markers(html: str) -> bool:
    """Could the page embed a state block? (a substring test, no parse)"""
    return any(marker in html for marker in MARKERS)


def state_blocks(root: _Element) -> list[StateBlock]:
    """Every state block of the page that parses, in document order."""
    blocks: list[StateBlock] = []
    budget = MAX_TOTAL_CHARS
    for script in root.getroottree().iter("script"):
        kind = (script.get("type") or "").strip().lower()
        if "ld+json" in kind:
            continue
        text = script.text or ""
        if not text or len(text) > min(MAX_BLOCK_CHARS, budget):
            if text:
                logger.debug("Skipped a state block of %d characters", len(text))
            continue
        try:
            if kind.startswith(_JSON_TYPES):
                budget -= len(text)
                block = _json_block(script.get("id") or kind, text)
            elif kind in ("", "text/javascript", "application/javascript", "module"):
                block = _assigned_block(text)
                if block is not None:
                    budget -= len(text)
            else:
                continue
        except Exception:  # noqa: BLE001 -- a hostile or broken block is skipped, never raised
            logger.debug("Skipped a state block that does not parse", exc_info=True)
            continue
        if block is not None:
            blocks.append(block)
    return blocks


def _json_block(source: str, text: str) -> StateBlock | None:
    data = _loads(text)
    if data is None:
        return None
    if source == "__NUXT_DATA__" or looks_flattened(data):
        data = unflatten(data)
    return StateBlock(source, data)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _assigned_block(text: str) -> StateBlock | None:
    """The value of the first ``window.__NAME__ = ...`` of a script, or None."""
    if "__" not in text:
        return None
    match = _ASSIGNMENT.search(text)
    if match is None:
        return None
    source, rest = match.group(1), text[match.end() :].lstrip()
    if rest.startswith("JSON.parse"):
        parsed = _JSON_PARSE.match(rest)
        if parsed is None:
            return None
        literal = parsed.group(1)
        if literal.startswith("'"):  # a single-quoted JS string: the same escapes, mostly
            literal = '"' + literal[1:-1].replace('\\"', '"').replace('"', '\\"') + '"'
        inner = _loads(literal)
        data = _loads(inner) if isinstance(inner, str) else None
    elif rest.startswith("(function") or rest.startswith("(  function"):
        data = _iife(_statement(rest))
    elif rest[:1] in "{[":
        data = _loads(_statement(rest))
        if data is None:
            data = chompjs.parse_js_object(rest)
    else:
        return None
    return None if data is None else StateBlock(source, data)


def _statement(text: str) -> str:
    """The text of an assignment's value up to the script's end, without a trailing ``;``."""
    return text.rstrip().rstrip(";").rstrip()


def _iife(text: str) -> Any:
    """Nuxt 2's state: ``(function(a,b,...){...;return {...}}(v1,v2,...))``. The
    parameters are replaced by the JSON of their arguments wherever they stand as a
    value in the returned object literal (not inside a string, not as a key or a
    property name), then the literal is read like any other."""
    match = _IIFE.match(text)
    if match is None:
        return None
    params = [p.strip() for p in match.group(1).split(",") if p.strip()]
    args: Any = chompjs.parse_js_object("[" + match.group(4) + "]") if params else []
    if not isinstance(args, list):
        return None
    values = {
        name: json.dumps(_js_value(args[i]) if i < len(args) else None)
        for i, name in enumerate(params)
    }
    body = match.group(3)

    def substitute(token: re.Match[str]) -> str:
        word = token.group(0)
        if word not in values:
            return word
        before, after = _neighbour(body, token.start() - 1, -1), _neighbour(body, token.end(), 1)
        if before == "." or after == ":" and before in ("{", ","):
            return word  # a property name or a key
        return values[word]

    return chompjs.parse_js_object(_TOKEN.sub(substitute, body))


def _neighbour(text: str, at: int, step: int) -> str:
    """The first character from ``at`` (going by ``step``) that is not whitespace."""
    while 0 <= at < len(text) and text[at].isspace():
        at += step
    return text[at] if 0 <= at < len(text) else ""


def _js_value(value: Any) -> Any:
    """chompjs reads ``void 0`` and ``undefined`` as those words: they are no value."""
    return None if value in ("void 0", "undefined") else value
