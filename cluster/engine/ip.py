"""The ``ip`` field type: IPv4 and IPv6 addresses as one sortable 128-bit key.

An address is stored in the field's keyword column as its 128-bit key (IPv4 as the IPv4-mapped
IPv6 address ``::ffff:a.b.c.d``, as Lucene's ``InetAddressPoint`` does) spelled as 32 lowercase
hex digits. Why a fixed-width text key rather than two uint64 columns: the keyword column
already gives postings (``term``/``terms``), a sorted dictionary with ordinals (sorting,
``terms`` aggregations, ``exists``) and range scans over the dictionary — and because the key
is fixed-width hex, text order *is* address order, so all of these are right for ip with no
new column kind. Order-dependent work stays NumPy (ordinals); only the dictionary (one entry per
distinct address) is turned into numbers, e.g. for ``ip_range`` buckets. Keys become addresses
again only where Elasticsearch renders them (``key``, ``sort``, ``fields``), in ES's spelling:
RFC 5952 for IPv6, dotted quads for IPv4 and IPv4-mapped addresses.
"""
from __future__ import annotations

import ipaddress

from ..errors import IllegalArgument

MAX_KEY = (1 << 128) - 1
_V4_MAPPED = 0xFFFF << 32


def parse_ip(text: object) -> int:
    """The 128-bit key of an address; ``ValueError`` when ``text`` is not one."""
    if not isinstance(text, str):
        raise ValueError(text)
    addr = ipaddress.ip_address(text.strip())
    if isinstance(addr, ipaddress.IPv4Address):
        return _V4_MAPPED | int(addr)
    if addr.scope_id is not None:
        raise ValueError(text)
    return int(addr)


def encode(key: int) -> str:
    """The stored (sortable) spelling of a key."""
    return format(key, "032x")


def decode(stored: str) -> str:
    """The address a stored key spells, as Elasticsearch renders it."""
    return render(int(stored, 16))


def render(key: int) -> str:
    """ES's spelling of a key: IPv4(-mapped) as a dotted quad, IPv6 compressed (RFC 5952)."""
    if key >> 32 == 0xFFFF:
        return str(ipaddress.IPv4Address(key & 0xFFFFFFFF))
    return ipaddress.IPv6Address(key).compressed


def stored_ip(text: object) -> str:
    """``parse_ip`` then ``encode``: the value a document's address is indexed as."""
    return encode(parse_ip(text))


def parse_cidr(text: str) -> tuple[int, int]:
    """``(first, last)`` keys of a CIDR block (``10.0.0.0/8``, ``::/24``), inclusive; an IPv4
    prefix counts in IPv4 bits, as ES's ``InetAddresses.parseCidr``."""
    addr_text, sep, bits_text = text.partition("/")
    try:
        if not sep:
            raise ValueError(text)
        addr = ipaddress.ip_address(addr_text)
        bits = int(bits_text)
        width = 32 if isinstance(addr, ipaddress.IPv4Address) else 128
        if not 0 <= bits <= width:
            raise ValueError(text)
    except ValueError:
        raise IllegalArgument(f"Expected [ip/prefix] but was [{text}]") from None
    key = parse_ip(str(addr))
    host_bits = width - bits
    first = key >> host_bits << host_bits
    return first, first | ((1 << host_bits) - 1)


def query_key(value: object) -> tuple[int, int]:
    """A query value on an ip field as the inclusive key range it matches: an address matches
    itself, a CIDR block every address in it. ``ValueError`` for a bad address."""
    text = str(value)
    if "/" in text:
        return parse_cidr(text)
    key = parse_ip(text)
    return key, key
