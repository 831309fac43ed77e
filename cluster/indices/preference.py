"""``preference``: which shards a search reads and which copy of each answers.

Elasticsearch's ``OperationRouting.preferenceActiveShardIterator`` and ``Preference.parse``:
``_shards:0,2`` restricts the shards (and may be followed by ``|`` and another preference);
``_local`` and ``_prefer_nodes:a,b`` put the copies on those nodes first; ``_only_local`` and
``_only_nodes:a,b`` allow only them; any other string not starting with ``_`` is a custom key:
the same key always reaches the same copies (``31 * murmur3(key) + shard``, never Python's
salted ``hash()``), so a user's repeated searches see one copy's view. Every copy answers the
same here (one total order), so copy choice changes where the work runs, never the answer.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..engine.murmur3 import murmur3_32
from ..errors import IllegalArgument

_TYPES = {"_shards": "shards", "_prefer_nodes": "prefer_nodes", "_local": "local",
          "_only_local": "only_local", "_onlyLocal": "only_local", "_only_nodes": "only_nodes"}


@dataclass(frozen=True)
class Preference:
    """A parsed ``preference``: the shards it restricts to and how it orders a shard's copies."""

    shards: frozenset[int] | None = None   # ``_shards:``; None: every shard
    kind: str | None = None                # local, only_local, prefer_nodes, only_nodes, custom
    nodes: tuple[str, ...] = ()            # ``_prefer_nodes:`` / ``_only_nodes:`` node ids
    key: str = ""                          # a custom preference string


def _type_of(text: str) -> str:
    name = text.split(":", 1)[0]
    if name not in _TYPES:
        raise IllegalArgument(f"no Preference for [{name}]")
    return _TYPES[name]


def parse_preference(text: str | None) -> Preference:
    """``text`` as Elasticsearch reads it (its errors: ``no Preference for [x]``, and a shard
    number that is not an int is Java's ``NumberFormatException``)."""
    if not text:
        return Preference()
    shards = None
    if text.startswith("_") and _type_of(text) == "shards":
        bar = text.find("|")
        spec = text[len("_shards:"):] if bar == -1 else text[len("_shards:"):bar]
        shards = frozenset(_shard_number(p) for p in spec.split(",") if p.strip())
        text = "" if bar == -1 else text[bar + 1:]
        if not text:
            return Preference(shards=shards)
    if not text.startswith("_"):
        return Preference(shards=shards, kind="custom", key=text)
    kind = _type_of(text)
    if kind == "shards":
        raise IllegalArgument("unknown preference [SHARDS]")
    nodes = tuple(n for n in text.split(":", 1)[1].split(",") if n) \
        if kind in ("prefer_nodes", "only_nodes") and ":" in text else ()
    return Preference(shards=shards, kind=kind, nodes=nodes)


def _shard_number(part: str) -> int:
    try:
        return int(part.strip())
    except ValueError:
        raise IllegalArgument(f"For input string: \"{part}\"",
                              es_type="number_format_exception") from None


def order_copies(pref: Preference, copies: list[tuple[int, str | None]], shard: str,
                 local_node: str | None) -> list[int] | None:
    """The copy numbers to try, in order, for one shard (``copies``: number and node id of
    each started copy, ``shard``: ``[index][n]`` for the error text); None: any order (the
    usual round robin), an empty list: no copy may answer."""
    nos = [no for no, _ in sorted(copies)]
    if pref.kind == "custom" and nos:
        start = (31 * murmur3_32(pref.key.encode("utf-16-le")) + int(shard.split("][")[-1][:-1])
                 ) % len(nos)
        return nos[start:] + nos[:start]
    wanted = {local_node} if pref.kind in ("local", "only_local") else set(pref.nodes)
    if pref.kind in ("local", "prefer_nodes"):
        return [no for no, n in sorted(copies) if n in wanted] + \
            [no for no, n in sorted(copies) if n not in wanted]
    if pref.kind in ("only_local", "only_nodes"):
        only = [no for no, n in sorted(copies) if n in wanted]
        if not only and pref.kind == "only_nodes":
            raise IllegalArgument(f"no data nodes with criteria [{','.join(pref.nodes)}] "
                                  f"found for shard: {shard}")
        return only
    return None
