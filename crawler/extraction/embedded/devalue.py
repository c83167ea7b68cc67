"""Nuxt 3's ``__NUXT_DATA__``: the ``devalue`` library's flattened array, made whole again.

``devalue`` writes a value as one JSON array: the value is element 0, and every
array or object in it holds the *indices* of its members in that array
(``[{"product": 1}, {"name": 2, "price": 3}, "Boot", 59.9]``). Negative indices are
special values (-1 ``undefined``, -2 a hole, -3 ``NaN``, -4 ``Infinity``, -5
``-Infinity``, -6 ``-0``); an array starting with a type name is a typed value
(``["Date", iso]``, ``["Set", i...]``, ``["Map", k, v...]``, ``["null", k, v...]``,
``["BigInt", "1"]``, ``["RegExp", ...]``, and Nuxt's wrappers ``["Reactive", i]``,
``["ShallowReactive", i]``, ``["Ref", i]``, ``["ShallowRef", i]``).

A member may be shared or refer back to an ancestor, so the result may share
objects and hold cycles (readers walk it with a guard, :mod:`.walk`). It is
bounded: at most :data:`MAX_NODES` values and :data:`MAX_DEPTH` levels are made;
past them a member is None.
"""

from __future__ import annotations

from typing import Any

MAX_NODES = 200_000
MAX_DEPTH = 60
#: Typed values that wrap one other value.
_WRAPPERS = frozenset(
    {"Reactive", "ShallowReactive", "Ref", "ShallowRef", "EmptyRef", "EmptyShallowRef"}
)
_SPECIAL = {-1: None, -2: None, -3: None, -4: None, -5: None, -6: 0}


def looks_flattened(data: Any) -> bool:
    """A devalue array: its element 0 is a Nuxt wrapper (``["ShallowReactive", 1]``)."""
    if not isinstance(data, list) or len(data) < 2:
        return False
    head = data[0]
    return (
        isinstance(head, list) and len(head) == 2 and head[0] in _WRAPPERS and type(head[1]) is int
    )


def unflatten(values: Any) -> Any:
    """The value a devalue array stands for (None when it is not one)."""
    if not isinstance(values, list) or not values:
        return None
    made: dict[int, Any] = {}
    count = 0

    def hydrate(index: Any, depth: int) -> Any:
        nonlocal count
        if type(index) is not int:
            return None
        if index < 0:
            return _SPECIAL.get(index)
        if index in made:
            return made[index]
        if index >= len(values) or depth > MAX_DEPTH or count >= MAX_NODES:
            return None
        count += 1
        value = values[index]
        if isinstance(value, dict):
            obj: dict[str, Any] = {}
            made[index] = obj
            for key, member in value.items():
                obj[key] = hydrate(member, depth + 1)
            return obj
        if not isinstance(value, list):
            made[index] = value
            return value
        if value and isinstance(value[0], str):
            return _typed(index, value, depth)
        items: list[Any] = []
        made[index] = items
        items.extend(hydrate(member, depth + 1) for member in value)
        return items

    def _typed(index: int, value: list[Any], depth: int) -> Any:
        kind, rest = value[0], value[1:]
        result: Any = None
        if kind in _WRAPPERS:
            result = hydrate(rest[0], depth + 1) if rest else None
        elif kind in ("Date", "BigInt", "URL", "Object"):
            result = rest[0] if rest else None
        elif kind == "Set":
            result = [hydrate(member, depth + 1) for member in rest]
        elif kind in ("Map", "null"):  # Map: [key index, value index]...; null: [key, index]...
            result = {}
            made[index] = result
            for at in range(0, len(rest) - 1, 2):
                key = rest[at] if kind == "null" else hydrate(rest[at], depth + 1)
                if isinstance(key, (str, int, float)):
                    result[str(key)] = hydrate(rest[at + 1], depth + 1)
        made[index] = result
        return result

    return hydrate(0, 0)
