"""Which terms a ``more_like_this`` query looks for, and the query it becomes (Lucene's
``MoreLikeThis`` as Elasticsearch's ``XMoreLikeThis`` and ``MoreLikeThisQuery`` run it).

Like texts are analysed together with the first field's search analyzer (or ``analyzer``) and
each word goes to the field where it is most frequent; liked documents give term vectors per
field (their values analysed as each field indexes them), chosen field by field. A word is
kept when it passes ``min_term_freq``, ``min/max_doc_freq``, the word lengths, ``stop_words``
and is not an ``unlike`` term; the ``max_query_terms`` best by ``tf * idf`` (Lucene's
classic idf, ``1 + ln((numDocs + 1) / (df + 1))``) become ``should`` term queries with
``minimum_should_match``. Ties at the cut go to the smaller word (Lucene's order there is a
hash map's). Frequencies are the global statistics: the same query for 1 and N shards.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import orjson

from ...errors import IllegalArgument
from ..analysis import get_analyzer
from ..mapping import Mapping
from ..scoring import Stats
from . import nodes as Q
from .more_like_this import LikeItem, MoreLikeThis

MAX_TOKENS_PARSED = 5000        # Lucene's DEFAULT_MAX_NUM_TOKENS_PARSED, per like text
_TYPES = ("text", "keyword")

Freqs = dict[str, int]


def like_fields(q: MoreLikeThis, mapping: Mapping) -> list[str] | None:
    """The fields to search (None: every field of the liked documents). Refuses what
    Elasticsearch refuses: free text without ``fields``, a field that is not text/keyword."""
    if q.fields is None:
        if q.like_texts or q.unlike_texts:
            raise IllegalArgument(
                "[more_like_this] query cannot infer the field to analyze the free text, you "
                "should update the [index.query.default_field] index setting to a field that "
                "exists in the mapping or set the [fields] option in the query.")
        return None
    out = []
    for f in q.fields:
        ft = mapping.get(f)
        if ft is not None and ft.type not in _TYPES:
            if q.fail_on_unsupported_field:
                raise IllegalArgument(f"more_like_this only supports text/keyword fields: [{f}]")
            continue
        out.append(f)
    return out


def _noise(q: MoreLikeThis, word: str) -> bool:
    n = len(word)
    return (q.min_word_length > 0 and n < q.min_word_length) \
        or (q.max_word_length > 0 and n > q.max_word_length) or word in q.stop_words


def _text_analyzer(q: MoreLikeThis, field: str, mapping: Mapping) -> Any:
    ft = mapping.get(field)
    name = q.analyzer or (None if ft is None or ft.kind != "text"
                          else ft.search_analyzer or ft.analyzer)
    if ft is not None and ft.kind == "keyword" and q.analyzer is None:
        return lambda text: [text]
    return get_analyzer(name)


def text_words(q: MoreLikeThis, fields: list[str], mapping: Mapping,
               skip: set[tuple[str, str]]) -> Freqs:
    """Word -> frequency over the like texts (``addTermFrequencies(Reader)``)."""
    analyze = _text_analyzer(q, fields[0], mapping)
    words: Freqs = {}
    for text in q.like_texts:
        for word in analyze(text)[:MAX_TOKENS_PARSED]:
            if not _noise(q, word) and (fields[0], word) not in skip:
                words[word] = words.get(word, 0) + 1
    return words


def term_vectors(item: LikeItem, fields: list[str] | None, mapping: Mapping
                 ) -> dict[str, Freqs]:
    """Field -> term -> frequency of one document, its values analysed as each field
    indexes them. A stored document gives the query's fields (all without ``fields``), an
    artificial one all of its own."""
    if item.doc is None:
        return {}
    source = orjson.loads(item.doc)
    wanted = fields if fields is not None and item.id is not None else None
    out: dict[str, Freqs] = {}
    leaves = [(f, values) for path, values in _leaves(source, "")
              for f in (path, *mapping.multi.get(path, ()))]      # ``title.keyword`` too
    for path, values in leaves:
        if wanted is not None and path not in wanted:
            continue
        ft = mapping.get(path)
        if ft is None or ft.type not in _TYPES:
            continue
        freqs = out.setdefault(path, {})
        for v in values:
            text = "true" if v is True else "false" if v is False else str(v)
            if ft.kind == "keyword":
                if ft.ignore_above is not None and len(text) > ft.ignore_above:
                    continue
                terms = [text]
            else:
                terms = get_analyzer(ft.analyzer)(text)
            for t in terms:
                freqs[t] = freqs.get(t, 0) + 1
    return {f: v for f, v in out.items() if v}


def _leaves(node: Any, prefix: str) -> list[tuple[str, list[Any]]]:
    """``(dotted path, values)`` of a source's leaves (arrays flattened)."""
    if isinstance(node, dict):
        return [leaf for k, v in node.items()
                for leaf in _leaves(v, f"{prefix}.{k}" if prefix else str(k))]
    values = node if isinstance(node, list) else [node]
    objects = [v for v in values if isinstance(v, (dict, list))]
    plain = [v for v in values if v is not None and not isinstance(v, (dict, list))]
    out = [(prefix, plain)] if plain else []
    for o in objects:
        out += _leaves(o, prefix)
    return out


def doc_words(q: MoreLikeThis, fields: list[str] | None, mapping: Mapping,
              skip: set[tuple[str, str]]) -> dict[str, Freqs]:
    """Field -> term -> frequency over the liked documents (``like(Fields...)``)."""
    out: dict[str, Freqs] = {}
    for item in q.like_items:
        for f, freqs in term_vectors(item, fields, mapping).items():
            mine = out.setdefault(f, {})
            for t, n in freqs.items():
                if not _noise(q, t) and (f, t) not in skip:
                    mine[t] = mine.get(t, 0) + n
    return {f: v for f, v in out.items() if v}


def skip_terms(q: MoreLikeThis, fields: list[str] | None, mapping: Mapping
               ) -> set[tuple[str, str]]:
    """``(field, term)`` pairs of the unlike texts (first field) and documents."""
    out: set[tuple[str, str]] = set()
    if q.unlike_texts and fields:
        analyze = _text_analyzer(q, fields[0], mapping)
        out.update((fields[0], w) for text in q.unlike_texts for w in analyze(text))
    for item in q.unlike_items:
        for f, freqs in term_vectors(item, fields, mapping).items():
            out.update((f, t) for t in freqs)
    return out


def candidates(q: MoreLikeThis, mapping: Mapping) -> set[tuple[str, str]]:
    """Every ``(field, term)`` whose document frequency the term choice reads (none for a
    query the shards refuse: they report it, as Elasticsearch's shards do)."""
    try:
        return _candidates(q, mapping)
    except IllegalArgument:
        return set()


def _candidates(q: MoreLikeThis, mapping: Mapping) -> set[tuple[str, str]]:
    fields = like_fields(q, mapping)
    if fields == []:
        return set()
    skip = skip_terms(q, fields, mapping)
    out: set[tuple[str, str]] = set()
    if q.like_texts and fields:
        words = text_words(q, fields, mapping, skip)
        out.update((f, w) for w, n in words.items() if n >= q.min_term_freq for f in fields)
    for f, freqs in doc_words(q, fields, mapping, skip).items():
        out.update((f, t) for t, n in freqs.items() if n >= q.min_term_freq)
    return out


def _classic_idf(df: int, num_docs: int) -> np.float32:
    return np.float32(math.log((num_docs + 1) / (df + 1)) + 1.0)


def _choose(q: MoreLikeThis, words: Freqs, fields: list[str], stats: Stats
            ) -> list[tuple[np.float32, str, str]]:
    """``createQueue``: ``(score, word, field)`` of the chosen words, lowest score first."""
    scored = []
    for word, tf in words.items():
        if q.min_term_freq > 0 and tf < q.min_term_freq:
            continue
        top, df = fields[0], 0
        for f in fields:
            n = stats.doc_freq.get((f, word), 0)
            if n > df:
                top, df = f, n
        if (q.min_doc_freq > 0 and df < q.min_doc_freq) or df > q.max_doc_freq or df == 0:
            continue
        scored.append((np.float32(tf) * _classic_idf(df, stats.num_docs), word, top))
    scored.sort(key=lambda s: (-s[0], s[1]))
    return sorted(scored[:q.max_query_terms], key=lambda s: (s[0], s[1]))


def _clauses(q: MoreLikeThis, chosen: list[tuple[np.float32, str, str]]) -> Q.Query:
    """``addToQuery`` and ``applyMinimumShouldMatch``: term queries, boosted by score over
    the first popped (the lowest) score with ``boost_terms``."""
    if not chosen:
        return Q.MatchNone()
    best = chosen[0][0]
    terms = tuple(Q.Term(field=f, value=w,
                         boost=float(np.float32(q.boost_terms) * s / best)
                         if q.boost_terms else 1.0) for s, w, f in chosen)
    return Q.Bool(should=terms, minimum_should_match=q.minimum_should_match)


def mlt_query(q: MoreLikeThis, mapping: Mapping, stats: Stats | None) -> Q.Query:
    """The query ``q`` stands for on this mapping with these statistics."""
    if any(i.id is not None and not i.fetched for i in (*q.like_items, *q.unlike_items)):
        raise IllegalArgument("[more_like_this] document items are not supported here")
    fields = like_fields(q, mapping)
    if fields == [] or stats is None:
        return Q.MatchNone()
    skip = skip_terms(q, fields, mapping)
    parts: list[Q.Query] = []
    if q.like_items:
        parts.append(_clauses_per_field(q, doc_words(q, fields, mapping, skip), stats))
    if q.like_texts and fields:
        parts.append(_clauses(q, _choose(q, text_words(q, fields, mapping, skip), fields,
                                         stats)))
    out: Q.Query = Q.Bool(should=tuple(parts))
    ids = tuple(dict.fromkeys(i.id for i in q.like_items if i.id is not None))
    if q.like_items and not q.include and ids:
        out = Q.Bool(should=(out,), must_not=(Q.Ids(values=ids),))
    return Q.Bool(should=(out,), boost=q.boost) if q.boost != 1.0 else out


def _clauses_per_field(q: MoreLikeThis, per_field: dict[str, Freqs], stats: Stats) -> Q.Query:
    """``like(Fields...)``: each field chooses its own words; one ``bool`` of them all."""
    terms: list[Q.Query] = []
    for f in sorted(per_field):
        got = _clauses(q, _choose(q, per_field[f], [f], stats))
        if isinstance(got, Q.Bool):
            terms.extend(got.should)
    if not terms:
        return Q.MatchNone()
    return Q.Bool(should=tuple(terms), minimum_should_match=q.minimum_should_match)
