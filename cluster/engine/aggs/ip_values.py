"""Addresses in an aggregation's request: ``ip_range``'s ranges and masks, and ``terms``'s
include/exclude on an ip field (compared as the stored 128-bit keys of ``engine/ip.py``, never
as regular expressions). Checked when the request is parsed."""
from __future__ import annotations

from typing import Any

from ...errors import IllegalArgument
from ..ip import MAX_KEY, encode, parse_cidr, parse_ip


def ip_include_exclude(name: str, inc: Any, exc: Any) -> tuple[Any, Any]:
    """``terms`` include/exclude on an ip field: arrays of addresses, as stored keys; a
    regular expression is refused as Elasticsearch does."""
    if isinstance(inc, str) or isinstance(exc, str):
        raise IllegalArgument(f"Aggregation [{name}] cannot support regular expression style "
                              "include/exclude settings as they can only be applied to string "
                              "fields. Use an array of values for include/exclude clauses")

    def stored(values: Any) -> Any:
        if not isinstance(values, list):
            return values
        try:
            return [encode(parse_ip(str(v))) for v in values]
        except ValueError:
            raise IllegalArgument(f"failed to parse {values} as ip addresses in "
                                  "include/exclude") from None
    return stored(inc), stored(exc)


IpSpan = tuple[str | None, int | None, int | None]   # key, from (inclusive), to (exclusive)


def resolve_ip_ranges(node: Any) -> list[IpSpan]:
    """``(key, from, to)`` of each range (``None``: an open end), in the order of ``from``
    then ``to`` (open ends first); a ``mask`` is its block ``[first, last + 1)`` keyed by
    the mask as written, as in Elasticsearch (open where it starts at ``::`` or ends at the
    last address)."""
    spans: list[tuple[tuple[int, int], IpSpan]] = []
    for r in node.params["ranges"]:
        if r.get("mask") is not None:
            first, last = parse_cidr(str(r["mask"]))
            end = None if last == MAX_KEY else last + 1
            # ordered by its first address, but shown open at ``::`` (ES leaves it out)
            spans.append(((first, MAX_KEY + 1 if end is None else end),
                          (r.get("key", r["mask"]), first or None, end)))
            continue
        lo, hi = _address(r.get("from")), _address(r.get("to"))
        spans.append(((-1 if lo is None else lo, MAX_KEY + 1 if hi is None else hi),
                      (r.get("key"), lo, hi)))
    return [span for _, span in sorted(spans, key=lambda t: t[0])]


def _address(value: Any) -> int | None:
    if value is None:
        return None
    try:
        return parse_ip(value)
    except ValueError:
        raise IllegalArgument(f"'{value}' is not an IP string literal.") from None


def check_ip_ranges(node: Any) -> None:
    """Parse-time rules of an ``ip_range``'s ``ranges`` (every bound a valid address)."""
    ranges = node.params.get("ranges")
    if not isinstance(ranges, list) or not ranges:
        raise IllegalArgument(f"No [ranges] specified for the [{node.name}] aggregation")
    for r in ranges:
        extra = sorted(set(r) - {"from", "to", "key", "mask"}) if isinstance(r, dict) else [r]
        if extra:
            raise IllegalArgument(f"[ranges] unknown field [{extra[0]}]")
        if r.get("mask") is not None and (r.get("from") is not None or r.get("to") is not None):
            raise IllegalArgument("[mask] cannot be used together with [from] or [to]")
    resolve_ip_ranges(node)
