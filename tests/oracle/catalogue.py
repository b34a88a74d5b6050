"""The catalogue of named functions a case may use (docs/oracle.md, "The catalogue").

The Java side (jvm/kafka-streams-oracle, ``Catalogue.java``) defines the same names with the same
results. Every function is total over null keys and values, so that a difference in the output is
a difference of the runtimes, never of the functions. Each entry also names the value types it
takes and gives, which the case strategy uses to build only well-typed chains.

:data:`CATALOGUE` is the one true catalogue; :meth:`Catalogue.with_override` makes a wrong one for
the harness's self-test.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

STRING, LONG = "string", "long"


class Fn(NamedTuple):
    """A catalogue function: ``takes`` is the value type it applies to, ``gives`` its result type
    (value mappers and aggregators), or None where it keeps the type."""

    fn: Callable[..., Any]
    takes: tuple[str, ...]
    gives: str | None = None


def _str_len(value: str | None) -> int:
    return 0 if value is None else len(value)


def _key_mod_3(key: Any, value: Any) -> str | None:
    return None if not key else str(ord(key[0]) % 3)


def _first_char(key: Any, value: Any) -> str | None:
    return value[0] if value else None


def _value_mod_3(key: Any, value: Any) -> str | None:
    return None if value is None else str(value % 3)  # Python's % is Java's Math.floorMod


def _max(a: Any, b: Any) -> Any:
    if a is None or b is None:
        return b if a is None else a
    return a if a >= b else b


def _remove_first(whole: str | None, part: str | None) -> str:
    """``whole`` without the first occurrence of ``part`` (None read as ""): concat's inverse."""
    whole, part = whole or "", part or ""
    at = whole.find(part)
    return whole if not part or at < 0 else whole[:at] + whole[at + len(part) :]


def _show(value: Any) -> str:
    return "-" if value is None else str(value)


def _swap(key: Any, value: Any) -> tuple[Any, Any]:
    return value, key


def _rekey(selector: Callable[[Any, Any], Any]) -> Callable[[Any, Any], tuple[Any, Any]]:
    return lambda key, value: (selector(key, value), value)


@dataclasses.dataclass(frozen=True)
class Catalogue:
    """The functions by kind: value mappers, predicates, key selectors, key-value mappers (``map``),
    flat value mappers, reducers, and aggregators as (initializer, aggregator) pairs; then the
    inverses a table aggregation needs (``table_subtractors`` of reducers, and
    ``table_aggregate_subtractors`` of aggregators, by the same names), the session ``mergers`` of
    aggregators (by the aggregator's name) and the ``value_joiners``."""

    value_mappers: dict[str, Fn]
    predicates: dict[str, Fn]
    key_selectors: dict[str, Fn]
    key_value_mappers: dict[str, Fn]
    flat_value_mappers: dict[str, Fn]
    reducers: dict[str, Fn]
    aggregators: dict[str, Fn]
    table_subtractors: dict[str, Fn]
    table_aggregate_subtractors: dict[str, Fn]
    mergers: dict[str, Fn]
    value_joiners: dict[str, Fn]

    def with_override(self, kind: str, name: str, fn: Callable[..., Any]) -> Catalogue:
        """A copy whose ``kind`` function ``name`` is ``fn`` (types kept): a deliberately wrong
        Python side, for the test that proves the harness notices."""
        table = dict(getattr(self, kind))
        table[name] = table[name]._replace(fn=fn)
        return dataclasses.replace(self, **{kind: table})


_KEY_SELECTORS = {
    "value": Fn(lambda k, v: v, (STRING,)),
    "first_char": Fn(_first_char, (STRING,)),
    "key_mod_3": Fn(_key_mod_3, (STRING, LONG)),
    "value_mod_3": Fn(_value_mod_3, (LONG,)),
}

CATALOGUE = Catalogue(
    value_mappers={
        "upper": Fn(lambda v: None if v is None else v.upper(), (STRING,), STRING),
        "len": Fn(lambda v: None if v is None else len(v), (STRING,), LONG),
        "double": Fn(lambda v: None if v is None else v * 2, (LONG,), LONG),
        "to_string": Fn(lambda v: None if v is None else str(v), (LONG,), STRING),
    },
    predicates={
        "even_len": Fn(lambda k, v: v is not None and len(v) % 2 == 0, (STRING,)),
        "not_null": Fn(lambda k, v: v is not None, (STRING, LONG)),
        "key_is_a": Fn(lambda k, v: k == "a", (STRING, LONG)),
        "positive": Fn(lambda k, v: v is not None and v > 0, (LONG,)),
        "even": Fn(lambda k, v: v is not None and v % 2 == 0, (LONG,)),
    },
    key_selectors=_KEY_SELECTORS,
    key_value_mappers={
        "swap": Fn(_swap, (STRING,)),
        **{name: Fn(_rekey(sel.fn), sel.takes) for name, sel in _KEY_SELECTORS.items()},
    },
    flat_value_mappers={
        "chars": Fn(lambda v: [] if v is None else list(v), (STRING,)),
        "dup": Fn(lambda v: [v, v], (STRING, LONG)),
    },
    reducers={
        "concat": Fn(lambda a, b: (a or "") + (b or ""), (STRING,)),
        "max": Fn(_max, (STRING, LONG)),
        "sum": Fn(lambda a, b: (a or 0) + (b or 0), (LONG,)),
    },
    aggregators={
        "sum_len": Fn((lambda: 0, lambda k, v, agg: agg + _str_len(v)), (STRING,), LONG),
        "concat": Fn((lambda: "", lambda k, v, agg: agg if v is None else agg + v), (STRING,), STRING),
        "sum": Fn((lambda: 0, lambda k, v, agg: agg + (v or 0)), (LONG,), LONG),
    },
    table_subtractors={
        "concat": Fn(_remove_first, (STRING,)),
        "sum": Fn(lambda agg, old: (agg or 0) - (old or 0), (LONG,)),
    },
    table_aggregate_subtractors={
        "sum_len": Fn(lambda k, v, agg: agg - _str_len(v), (STRING,), LONG),
        "concat": Fn(lambda k, v, agg: _remove_first(agg, v), (STRING,), STRING),
        "sum": Fn(lambda k, v, agg: agg - (v or 0), (LONG,), LONG),
    },
    mergers={
        "sum_len": Fn(lambda k, a, b: a + b, (STRING,), LONG),
        "concat": Fn(lambda k, a, b: a + b, (STRING,), STRING),
        "sum": Fn(lambda k, a, b: a + b, (LONG,), LONG),
    },
    value_joiners={"pair": Fn(lambda left, right: f"{_show(left)}|{_show(right)}", (STRING, LONG), STRING)},
)
