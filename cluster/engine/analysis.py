"""Analyzers: how text becomes terms.

``standard`` follows Lucene's StandardAnalyzer closely enough for search: Unicode word boundaries
(UAX #29's letter/number joining rules: ``don't``, ``3.14``, ``u.s.a``, ``foo_bar`` stay one
token; CJK ideographs are one token each), lowercased, tokens longer than 255 characters split.
``keyword`` keeps the whole string as one term.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from ..errors import IllegalArgument

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


# ASCII text without joined tokens: every character that is not a word character becomes a
# space and ``split`` gives the tokens. A joiner (. ' : , ;) joins only between two letters
# (. ' :) or two digits (. ' , ;); ``_ASCII_CLASSES`` draws letters as ``a`` and digits as ``0``
# so that one substring search per such pair tells whether the text has any.
_ASCII_SPACES = str.maketrans({chr(i): " " for i in range(128)
                               if not (chr(i).isalnum() or chr(i) == "_")})
_ASCII_CLASSES = str.maketrans({chr(i): ("a" if chr(i).isalpha() else "0" if chr(i).isdigit()
                                         else chr(i) if chr(i) in ".':,;" else " ")
                                for i in range(128)})


def standard_tokens(text: str) -> list[str]:
    """Lowercased word tokens of ``text`` in order (positions are list indices).

    ASCII text (the common case) takes fast paths with the same tokens as the general one:
    without joined tokens, ``translate`` + ``split`` (no regex at all); with them, one
    ``findall`` with a simpler pattern (no ideographs can occur). O(len(text)).
    """
    if text.isascii():
        low = text.lower()
        c = low.translate(_ASCII_CLASSES)
        if "a.a" in c or "a'a" in c or "a:a" in c or "0.0" in c or "0'0" in c or "0,0" in c \
                or "0;0" in c:
            toks = _ASCII_TOKEN_RE.findall(low)
        else:
            toks = low.translate(_ASCII_SPACES).split()
        if "_" in text:
            toks = [t for t in toks if t.strip("_")]
        if not toks or max(map(len, toks)) <= MAX_TOKEN_LENGTH:
            return toks
    return general_tokens(text)


def general_tokens(text: str) -> list[str]:
    """``standard_tokens`` by the general pattern alone (any text; the fast paths' reference)."""
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


# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, the ``stop`` analyzer's default list
ENGLISH_STOP_WORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
    "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
    "these", "they", "this", "to", "was", "will", "with"))


def stop_tokens(text: str) -> list[str]:
    """Lucene's StopAnalyzer: ``simple`` without English stop words (the positions of later
    tokens close up here, where Lucene leaves a gap: phrases across a stop word differ)."""
    return [t for t in simple_tokens(text) if t not in ENGLISH_STOP_WORDS]


ANALYZERS: dict[str, Callable[[str], list[str]]] = {
    "standard": standard_tokens,
    "default": standard_tokens,
    "keyword": keyword_tokens,
    "whitespace": whitespace_tokens,
    "simple": simple_tokens,
    "stop": stop_tokens,
}


def get_analyzer(name: str | None) -> Callable[[str], list[str]]:
    """The analyzer function by Elasticsearch name (None: ``standard``); an unknown name is a
    400 — analysing with another analyzer would answer a different question."""
    fn = ANALYZERS.get(name or "standard")
    if fn is None:
        raise IllegalArgument(f"failed to find analyzer [{name}]",
                              es_type="query_shard_exception")
    return fn


def token_spans(name: str, text: str) -> list[tuple[str, int, int, str]]:
    """``(term, start, end, type)`` per token, as ``_analyze`` shows them: the same terms as
    the analyzer ``name`` gives (``standard`` by its general pattern, the fast paths' reference),
    with character offsets into ``text`` and Lucene's token types."""
    if name == "keyword":
        return [(text, 0, len(text), "word")]
    if name == "whitespace":
        return [(m.group(0), m.start(), m.end(), "word") for m in re.finditer(r"\S+", text)]
    if name in ("simple", "stop"):
        return [(m.group(0).lower(), m.start(), m.end(), "word")
                for m in re.finditer(r"[^\W\d_]+", text)
                if name == "simple" or m.group(0).lower() not in ENGLISH_STOP_WORDS]
    out = []
    for m in _TOKEN_RE.finditer(text):
        tok = m.group(0)
        if tok.strip("_") == "":
            continue
        kind = "<IDEOGRAPHIC>" if re.fullmatch(_IDEOGRAPH, tok) else \
            "<NUM>" if any(c.isdigit() for c in tok) and not any(c.isalpha() for c in tok) \
            else "<ALPHANUM>"
        for i in range(0, len(tok), MAX_TOKEN_LENGTH):
            part = tok[i:i + MAX_TOKEN_LENGTH]
            out.append((part.lower(), m.start() + i, m.start() + i + len(part), kind))
    return out


_SPAN_RES = {"whitespace": re.compile(r"\S+"), "simple": re.compile(r"[^\W\d_]+"),
             "stop": re.compile(r"[^\W\d_]+")}
_LOWERCASED = {"standard", "default", "simple", "stop"}


def term_spans(name: str | None, text: str) -> list[tuple[str, int, int]]:
    """``(term, start, end)`` of each token of ``text`` under analyzer ``name``: the same
    terms as :func:`get_analyzer` (highlighting needs where each term sits in the text)."""
    name = name if name in ANALYZERS else "standard"
    if name == "keyword":
        return [(text, 0, len(text))]
    rx = _SPAN_RES.get(name, _TOKEN_RE)
    out = []
    for m in rx.finditer(text):
        tok = m.group(0)
        if rx is _TOKEN_RE and tok.strip("_") == "":
            continue
        term = tok.lower() if name in _LOWERCASED else tok
        if name != "stop" or term not in ENGLISH_STOP_WORDS:
            out.append((term, m.start(), m.end()))
    return out
