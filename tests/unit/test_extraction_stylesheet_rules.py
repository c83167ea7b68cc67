"""The stylesheet's top-level rules, read piece by piece between closing braces, are
those a walk over every brace finds (nested blocks, ``@media``, stray braces), and
those holding a word are those of them that hold it."""

from __future__ import annotations

import random
import re

from crawler.extraction.visible.stylesheet import _names, _rules


def _brace_walk(css: str) -> list[tuple[str, str]]:
    """The reference: every brace in turn, the depth never below 0."""
    out: list[tuple[str, str]] = []
    depth, start, body, selector = 0, 0, 0, ""
    for match in re.finditer(r"[{}]", css):
        if match.group(0) == "{":
            if depth == 0:
                selector, body = css[start : match.start()].strip(), match.end()
            depth += 1
        else:
            depth = max(depth - 1, 0)
            if depth == 0 and selector and not selector.startswith("@"):
                out.append((selector, css[body : match.start()]))
        start = match.end()
    return out


def test_rules_of_a_stylesheet() -> None:
    css = (
        "#oos { display: none }\n@media (max-width: 600px) { .a { display: none } }\n"
        ".b, .c{display:block}  .d { color: red }"
    )
    assert _rules(css) == [
        ("#oos", " display: none "),
        (".b, .c", "display:block"),
        (".d", " color: red "),
    ]
    assert _rules(css) == _brace_walk(css)


def test_rules_agree_with_a_brace_walk_on_odd_text() -> None:
    rng = random.Random(29)
    for _ in range(5000):
        css = "".join(rng.choice("ab {}}{@ ;:") for _ in range(rng.randint(0, 40)))
        assert _rules(css) == _brace_walk(css), css


def test_rules_holding_a_word_are_those_of_the_brace_walk_that_hold_it() -> None:
    rng = random.Random(31)
    for _ in range(5000):
        css = "".join(rng.choice("ab {}}{@ ;:d") for _ in range(rng.randint(0, 40)))
        for word in ("a", "d", ";:"):
            assert _rules(css, word) == [r for r in _brace_walk(css) if word in r[1]], (css, word)


def _names_by_pattern(selector: str, simple: str) -> bool:
    """The pattern ``_names`` replaced (one compiled for each hidden name)."""
    return simple in selector and re.search(re.escape(simple) + r"(?![\w-])", selector) is not None


def test_a_selector_names_a_hidden_one_as_the_pattern_said() -> None:
    assert _names(".x ~ #id", "#id") and _names("#id.open", "#id") and _names("a .b", ".b")
    assert not _names("#id-2", "#id") and not _names("#id_x", "#id") and not _names(".bé", ".b")
    pieces = [".a", "#a", "-", "_", "é", "٣", "²", " ", ">", "~", ".", ":", "[", "x", "1"]
    rng = random.Random(7)
    for _ in range(20_000):
        selector = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        simple = rng.choice([".a", "#a", "#a-b", ".é"])
        assert _names(selector, simple) == _names_by_pattern(selector, simple), (selector, simple)
    for code in range(0x2FFFF):  # every character that may follow the name
        char = chr(code)
        if not 0xD800 <= code < 0xE000:
            assert _names(".a" + char, ".a") == _names_by_pattern(".a" + char, ".a"), hex(code)
