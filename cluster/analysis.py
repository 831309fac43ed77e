"""Analyzers: how text becomes terms.

``standard`` follows Lucene's StandardAnalyzer closely enough for search: Unicode word boundaries
(UAX #29's letter/number joining rules: ``don't``, ``3.14``, ``u.s.a``, ``foo_bar`` stay one
token; CJK ideographs are one token each), lowercased, tokens longer than 255 characters split.
``keyword`` keeps the whole string as one term.
"""
from __future__ import annotations

import re
from collections.abc import Callable

_IDEOGRAPH = r"[\u3040-\u309f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]"
_WORD = (
    r"(?:(?!" + _IDEOGRAPH + r")\w)+"
    r"(?:(?:(?<=[^\W\d_])[.'\u2019:\u00b7](?=[^\W\d_])|(?<=\d)[.'\u2019,;](?=\d))"
    r"(?:(?!" + _IDEOGRAPH + r")\w)+)*"
)
_TOKEN_RE = re.compile(_IDEOGRAPH + "|" + _WORD)
# ASCII text has no ideographs, so the per-character ideograph look-ahead can go: same tokens
_ASCII_TOKEN_RE = re.compile(
    r"\w+(?:(?:(?<=[^\W\d_])[.'\u2019:\u00b7](?=[^\W\d_])|(?<=\d)[.'\u2019,;](?=\d))\w+)*")
MAX_TOKEN_LENGTH = 255


def standard_tokens(text: str) -> list[str]:
    """Lowercased word tokens of ``text`` in order (positions are list indices).

    ASCII text (the common case) takes a fast path: lowercase once, one ``findall`` with a
    simpler pattern (no ideographs can occur), the same tokens as the general path.
    """
    if text.isascii():
        toks = _ASCII_TOKEN_RE.findall(text.lower())
        if "_" in text:
            toks = [t for t in toks if t.strip("_")]
        if not toks or max(map(len, toks)) <= MAX_TOKEN_LENGTH:
            return toks
    out: list[str] = []
    for m in _TOKEN_RE.finditer(text):
        tok = m.group(0)
        if tok.strip("_") == "":
            continue
        tok = tok.lower()
        if len(tok) > MAX_TOKEN_LENGTH:
            out.extend(tok[i:i + MAX_TOKEN_LENGTH] for i in range(0, len(tok), MAX_TOKEN_LENGTH))
        else:
            out.append(tok)
    return out


def keyword_tokens(text: str) -> list[str]:
    """The whole value as one term."""
    return [text]


def whitespace_tokens(text: str) -> list[str]:
    return text.split()


def simple_tokens(text: str) -> list[str]:
    return [t.lower() for t in re.findall(r"[^\W\d_]+", text)]


ANALYZERS: dict[str, Callable[[str], list[str]]] = {
    "standard": standard_tokens,
    "default": standard_tokens,
    "keyword": keyword_tokens,
    "whitespace": whitespace_tokens,
    "simple": simple_tokens,
}


def get_analyzer(name: str | None) -> Callable[[str], list[str]]:
    """The analyzer function by Elasticsearch name; unknown names fall back to ``standard``."""
    return ANALYZERS.get(name or "standard", standard_tokens)
