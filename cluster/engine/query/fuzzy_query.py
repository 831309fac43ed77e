"""The ``fuzzy`` query node: its options (shared by every query that takes ``fuzziness``), its
parser, and its evaluation over one segment.

Which terms a fuzzy term keeps is decided once per search, over every shard: the statistics
round carries each shard's best candidates with their document frequencies
(``candidates_stats``), the coordinator sums them (``Stats.add``), and each shard keeps the
same top terms from that union (:func:`expansions`). So 1 and N shards match and score alike.
Every search gathers them when its query has fuzzy terms; a shard asked without statistics
would expand from each segment's own dictionary.
"""
from __future__ import annotations

import re
from typing import Any

import numpy as np

from ...errors import IllegalArgument, ParsingError
from ..scoring import Stats, bm25, idf, legacy_boost
from ..segment import KeywordField, Segment, TextField
from .context import Context
from .index_field import pattern_on_term_field_error
from .fuzzy import (MAX_EXPANSIONS_LIMIT, MAX_TERM_LENGTH, FuzzySpec, blended_doc_freq,
                    candidates, check_fuzziness, fuzzy_edits, merge_candidates, top_terms)
from .nodes import Fuzzy, FuzzyOptions, Query
from .parse_helpers import ParseState, bool_option, field_query, float_option, int_option

_SCORE = np.float32
_TOP_TERMS = re.compile(r"top_terms_(blended_freqs_|boost_)?(\d{1,9})")
_CONSTANT = ("constant_score", "constant_score_boolean")
#: rewrites Elasticsearch knows that are refused by name here
_REFUSED = ("scoring_boolean", "constant_score_blended")


def _shard_error(reason: str) -> IllegalArgument:
    """Lucene's ``FuzzyQuery`` refuses these when each shard builds the query."""
    return IllegalArgument(f"failed to create query: {reason}", es_type="query_shard_exception")


def check_fuzzy(q: Fuzzy) -> None:
    """What Lucene's ``FuzzyQuery`` and ``QueryParsers.parseRewriteMethod`` refuse, as a
    shard-level error (checked before the search fans out)."""
    o = q.options
    if o.prefix_length < 0:
        raise _shard_error("prefixLength cannot be negative.")
    if o.max_expansions <= 0:
        raise _shard_error("maxExpansions must be positive.")
    if len(q.value) > MAX_TERM_LENGTH:
        raise _shard_error(f"fuzzy term is longer than {MAX_TERM_LENGTH} characters")
    r = o.rewrite
    m = _TOP_TERMS.fullmatch(r) if r is not None else None
    if m is not None and int(m.group(2)) <= 0:
        raise _shard_error(f"rewrite_method [{r}] needs a size above 0")
    if r is None or r in _CONSTANT or m is not None:
        return
    if r in _REFUSED:
        raise IllegalArgument(f"[fuzzy] rewrite [{r}] is not supported by this server")
    raise _shard_error(f"Failed to parse rewrite_method [{r}]")


def rewrite_mode(options: FuzzyOptions) -> tuple[str, int]:
    """``(mode, limit)``: ``blended`` (Lucene's default), ``own`` (each term its own
    frequency: ``top_terms_N``), ``boost`` (the term boosts alone: ``top_terms_boost_N``) or
    ``constant``; ``limit`` 0 keeps every candidate."""
    r = options.rewrite
    if r is None:
        return "blended", min(options.max_expansions, MAX_EXPANSIONS_LIMIT)
    if r in _CONSTANT:
        return "constant", 0
    m = _TOP_TERMS.fullmatch(r)
    assert m is not None
    mode = {"blended_freqs_": "blended", "boost_": "boost", None: "own"}[m.group(1)]
    return mode, min(int(m.group(2)), MAX_EXPANSIONS_LIMIT)


def fuzzy_options(name: str, o: dict[str, Any], keys: tuple[str, str, str, str, str],
                  builder_checks: bool = False) -> FuzzyOptions:
    """The fuzzy options of ``o`` under this query's names for them (``fuzziness``,
    prefix length, max expansions, transpositions, rewrite). The match-like builders refuse
    a bad prefix length or expansion count when parsed (``builder_checks``, in their words);
    otherwise :func:`check_fuzzy` refuses them as each shard would."""
    fz, pl, me, tr, rw = keys
    fuzziness = o.get(fz, "AUTO")
    check_fuzziness(fuzziness)
    prefix = int_option(name, pl, o.get(pl, 0))
    max_exp = int_option(name, me, o.get(me, 50))
    if builder_checks and prefix < 0:
        raise IllegalArgument(f"[{name}] requires prefix length to be non-negative.")
    if builder_checks and max_exp <= 0:
        raise IllegalArgument(f"[{name}] requires maxExpansions to be positive.")
    rewrite = o.get(rw)
    return FuzzyOptions(fuzziness=fuzziness, prefix_length=prefix, max_expansions=max_exp,
                        transpositions=bool_option(name, tr, o.get(tr, True)),
                        rewrite=None if rewrite is None else str(rewrite))


MATCH_KEYS = ("fuzziness", "prefix_length", "max_expansions", "fuzzy_transpositions",
              "fuzzy_rewrite")
QUERY_STRING_KEYS = ("fuzziness", "fuzzy_prefix_length", "fuzzy_max_expansions",
                     "fuzzy_transpositions", "fuzzy_rewrite")
_FUZZY_KEYS = ("fuzziness", "prefix_length", "max_expansions", "transpositions", "rewrite")


def parse_fuzzy(body: dict[str, Any], st: ParseState) -> Query:
    """``FuzzyQueryBuilder.fromXContent``: ``{"field": "value"}`` or ``{"field": {"value":
    ..., "fuzziness": ..., ...}}``."""
    fname, o = field_query("fuzzy", body, ("value",), {"value", *_FUZZY_KEYS})
    if not fname:
        raise ParsingError("[fuzzy] query requires a field name")
    if o.get("value") is None:
        raise IllegalArgument("query value cannot be null")
    value = o["value"]
    text = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return Fuzzy(field=fname, value=text, options=fuzzy_options("fuzzy", o, _FUZZY_KEYS),
                 boost=float_option("fuzzy", "boost", o.get("boost", 1.0)))


def spec_of(q: Fuzzy) -> tuple[FuzzySpec, str]:
    """The expansion key of ``q`` and its rewrite mode."""
    mode, limit = rewrite_mode(q.options)
    o = q.options
    return FuzzySpec(q.field, q.value, fuzzy_edits(o.fuzziness, q.value), o.prefix_length,
                     o.transpositions, limit), mode


def scored_spec(q: Fuzzy) -> FuzzySpec | None:
    """The spec whose candidates the statistics round gathers (None: constant score)."""
    spec, mode = spec_of(q)
    return None if mode == "constant" else spec


def candidates_stats(st: Stats, spec: FuzzySpec, fd: Any, vis: np.ndarray) -> None:
    """Add one document set's candidates of ``spec`` with their visible document counts."""
    if not isinstance(fd, (TextField, KeywordField)):
        return
    found = candidates(fd.postings.terms, spec)
    counted = []
    for t, ed in found.items():
        post = fd.postings.get(t)
        if post is not None:
            counted.append((t, (ed, int(vis[post[0]].sum()))))
    merge_candidates(st.fuzzy.setdefault(spec, {}), counted)


def keep_local_top(st: Stats) -> None:
    """Each spec's candidates cut to this shard's best ``max_expansions`` (terms no visible
    document holds dropped). The global best are among the union of each shard's best: a
    term's rank depends on the term alone, and a shard sees a subset of the candidates."""
    for spec, found in st.fuzzy.items():
        live = {t: v for t, v in found.items() if v[1] > 0}
        kept = top_terms(spec.term, {t: v[0] for t, v in live.items()}, spec.max_expansions)
        st.fuzzy[spec] = {t: live[t] for t, _ in kept}


def expansions(spec: FuzzySpec, fd: Any, ctx: Context
               ) -> tuple[list[tuple[str, float]], dict[str, int]]:
    """The kept terms ``[(term, boost)]`` and their document frequencies: the search's global
    choice when the statistics carry it, else this segment's own."""
    got = ctx.stats.fuzzy.get(spec) if ctx.stats is not None else None
    ctx.cancel.tick()
    if got is None:
        found = candidates(fd.postings.terms, spec)
        dfs = {t: len(fd.postings.get(t)[0]) for t in found}
        return top_terms(spec.term, found, spec.max_expansions), dfs
    return top_terms(spec.term, {t: v[0] for t, v in got.items()}, spec.max_expansions), \
        {t: v[1] for t, v in got.items()}


def evaluate_fuzzy(q: Fuzzy, seg: Segment, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    """``(mask, scores)``: the sum over the kept terms a document holds of BM25 with the term's
    boost (Lucene's ``BooleanQuery`` of boosted term queries), each term scored with the
    blended (largest) frequency, its own (``top_terms_N``), or its boost alone."""
    n = seg.n
    mask, total = np.zeros(n, dtype=bool), np.zeros(n, dtype=np.float64)
    err = pattern_on_term_field_error(q, ctx.mapping.get(q.field))
    if err is not None:
        raise IllegalArgument(f"failed to create query: {err}", es_type="query_shard_exception")
    fd = seg.fields.get(q.field)
    if not isinstance(fd, (TextField, KeywordField)):
        return mask, total.astype(_SCORE)
    spec, mode = spec_of(q)
    chosen, dfs = expansions(spec, fd, ctx)
    blended = blended_doc_freq(chosen, dfs)
    stats = ctx.stats
    for term, term_boost in chosen:
        post = fd.postings.get(term)
        if post is None:
            continue
        docs, freqs = post
        docs = docs.astype(np.intp, copy=False)
        mask[docs] = True
        boost = float(_SCORE(q.boost) * _SCORE(term_boost))
        if stats is None or mode == "constant":
            continue
        if mode == "boost":
            total[docs] += _SCORE(boost)
            continue
        df = blended if mode == "blended" else dfs.get(term, 0)
        weight = float(legacy_boost(boost) * _SCORE(idf(df, stats.doc_count.get(q.field, 0))))
        norms = fd.norms[docs] if isinstance(fd, TextField) else None
        f = freqs if isinstance(fd, TextField) else np.ones(len(docs), dtype=np.int32)
        total[docs] += bm25(f, norms, weight, stats.avgdl(q.field))
    if stats is None or mode == "constant":
        total[mask] = q.boost
    return mask, np.where(mask, total, 0.0).astype(_SCORE)
