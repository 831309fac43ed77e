"""The ``intervals`` query on one segment: rules -> Lucene's interval sources -> matches and
scores.

A rule becomes a tree of *sources* for a segment (``compile_rule``), as Elasticsearch's
``IntervalBuilder`` and Lucene's ``Intervals`` factories build them: a match's text is
analysed with the field's search analyzer and its terms combined by ``mode`` and
``max_gaps`` (``max_gaps: 0`` in order is a phrase); ``unordered_no_overlap`` is
``or(ordered(a, b), ordered(b, a))`` folded over the terms (OpenSearch's ``combineSources``);
equal neighbours in order become a repeating source; disjunctions with wider members are
pulled up. Prefix, wildcard, regexp and fuzzy rules expand against the
segment's term dictionary, at most ``MAX_EXPANSIONS`` terms (Lucene's limit, and its text).

Documents are first narrowed to the candidates (postings intersected and joined as the
sources require), then each candidate's intervals are walked (``interval_iterators.py``).
Scores are Lucene's ``IntervalScoreFunction`` saturation with pivot 1:
``boost * freq / (1 + freq)``, ``freq`` summing ``1 / max(width - minExtent + 1, 1)`` over
the document's intervals. They use no collection statistics, so they are shard-invariant.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import IllegalArgument
from ..postings import positions_in
from ..segment import Segment, TextField
from . import interval_iterators as it
from .context import Context
from .fuzzy import FuzzySpec, candidates, fuzzy_edits
from .intervals_dsl import CombineRule, Intervals, MatchRule, Rule, TermsRule
from .pattern_syntax import lucene_regex, wildcard_regex
from .rewrite import analyze_for

MAX_EXPANSIONS = 128


@dataclass(frozen=True)
class Src:
    """A compiled interval source (frozen: equal sources are recognised, as Lucene's are)."""


@dataclass(frozen=True)
class Terms(Src):
    field: str
    terms: tuple[str, ...]


@dataclass(frozen=True)
class Combine(Src):
    """``ordered``, ``unordered``, ``phrase`` or ``or`` of ``subs``."""

    kind: str
    subs: tuple[Src, ...]


@dataclass(frozen=True)
class Repeat(Src):
    sub: Src
    n: int


@dataclass(frozen=True)
class MaxGaps(Src):
    sub: Src
    gaps: int


@dataclass(frozen=True)
class Filtered(Src):
    kind: str
    sub: Src
    ref: Src


NOTHING = Combine("or", ())


def min_extent(s: Src) -> int:
    """Lucene's ``IntervalsSource.minExtent``: the narrowest interval the source can yield."""
    if isinstance(s, Terms):
        return 1
    if isinstance(s, Combine):
        ext = [min_extent(x) for x in s.subs]
        return (min(ext) if ext else 1) if s.kind == "or" else sum(ext)
    assert isinstance(s, (Repeat, MaxGaps, Filtered))
    return min_extent(s.sub)


# --- building sources --------------------------------------------------------------------------

def either(subs: list[Src]) -> Src:
    """``Intervals.or``: nested disjunctions flattened, duplicates dropped."""
    flat: list[Src] = []
    for s in subs:
        for x in (s.subs if isinstance(s, Combine) and s.kind == "or" else (s,)):
            if x not in flat:
                flat.append(x)
    return flat[0] if len(flat) == 1 else Combine("or", tuple(flat))


def conjunction(kind: str, subs: list[Src]) -> Src:
    """``Intervals.ordered`` / ``unordered`` / ``phrase``, with Lucene's rewrites: one source
    is itself; nested ordered and unordered sources are flattened; equal neighbours in order
    repeat; unordered sources are counted once each, repeated; a disjunction with members
    wider than one position is pulled up (``Disjunctions.pullUp``), so that minimising one
    member never hides another's match."""
    if len(subs) == 1:
        return subs[0]
    if kind in ("ordered", "unordered"):
        subs = [x for s in subs for x in
                (s.subs if isinstance(s, Combine) and s.kind == kind else (s,))]
    subs = _counted(subs) if kind == "unordered" else \
        _repeats(subs) if kind == "ordered" else subs
    if len(subs) == 1:
        return subs[0]
    combos: list[list[Src]] = [[]]
    for s in subs:
        alts = _split(s)
        if len(combos) * len(alts) > 1024:
            raise IllegalArgument("too many disjunctions to pull up in an intervals query "
                                  "(maxClauseCount is set to 1024)")
        combos = [c + [a] for a in alts for c in combos]
    built = [Combine(kind, tuple(c)) for c in combos]
    return built[0] if len(built) == 1 else either(built)


def _split(s: Src) -> list[Src]:
    """``Disjunctions.splitDisjunctions``: the one-position members stay one disjunction,
    each wider member stands alone."""
    if not (isinstance(s, Combine) and s.kind == "or" and s.subs):
        return [s]
    single = [x for x in s.subs if min_extent(x) == 1]
    wide = [x for x in s.subs if min_extent(x) != 1]
    return ([either(single)] if single else []) + wide


def _counted(subs: list[Src]) -> list[Src]:
    """Lucene's unordered ``deduplicate``: each distinct source once, repeated as often as
    it occurs."""
    counts: dict[Src, int] = {}
    for s in subs:
        counts[s] = counts.get(s, 0) + 1
    return [Repeat(s, n) if n > 1 else s for s, n in counts.items()]


def _repeats(subs: list[Src]) -> list[Src]:
    out: list[Src] = []
    run = 1
    for i, s in enumerate(subs):
        if i + 1 < len(subs) and subs[i + 1] == s:
            run += 1
            continue
        out.append(Repeat(s, run) if run > 1 else s)
        run = 1
    return out


def combine(subs: list[Src], max_gaps: int, mode: str) -> Src:
    """OpenSearch's ``IntervalBuilder.combineSources``."""
    if not subs:
        return NOTHING
    if len(subs) == 1:
        return subs[0]
    if max_gaps == 0 and mode == "ordered":
        return conjunction("phrase", subs)
    if mode == "unordered_no_overlap":
        inner = _no_overlap(subs[0], subs[1])
        for nxt in subs[2:]:
            inner = _no_overlap(inner if max_gaps == -1 else MaxGaps(inner, max_gaps), nxt)
    else:
        inner = conjunction(mode, subs)
    return inner if max_gaps == -1 else MaxGaps(inner, max_gaps)


def _no_overlap(a: Src, b: Src) -> Src:
    return either([conjunction("ordered", [a, b]), conjunction("ordered", [b, a])])


def compile_rule(rule: Rule, field: str, seg: Segment, ctx: Context) -> Src:
    """The source a rule stands for in ``seg`` (term expansions are the segment's)."""
    if isinstance(rule, MatchRule):
        f = rule.use_field or field
        terms = analyze_for(ctx.mapping.get(f), rule.query, rule.analyzer)
        src = combine([Terms(f, (t,)) for t in terms], rule.max_gaps, rule.mode)
    elif isinstance(rule, CombineRule):
        subs = [compile_rule(r, field, seg, ctx) for r in rule.rules]
        src = either(subs) if rule.any_of else combine(subs, rule.max_gaps, rule.mode)
    else:
        assert isinstance(rule, TermsRule)
        f = rule.use_field or field
        src = Terms(f, tuple(expand_terms(rule, f, seg, ctx)))
    if rule.filter is not None:
        kind, ref = rule.filter
        src = Filtered(kind, src, compile_rule(ref, field, seg, ctx))
    return src


def _normalize(rule: TermsRule, field: str, ctx: Context) -> str:
    """A pattern as the field's analyzer normalises a word (lower case, except for the
    ``keyword`` and ``whitespace`` analyzers)."""
    ft = ctx.mapping.get(field)
    name = rule.analyzer or (ft.search_analyzer or ft.analyzer if ft is not None else None)
    return rule.pattern if name in ("keyword", "whitespace") else rule.pattern.lower()


def expand_terms(rule: TermsRule, field: str, seg: Segment, ctx: Context) -> list[str]:
    """The segment's terms a prefix/wildcard/regexp/fuzzy rule accepts, sorted; more than
    ``MAX_EXPANSIONS`` is refused as Lucene refuses it."""
    fd = seg.fields.get(field)
    if not isinstance(fd, TextField):
        return []
    pattern = rule.pattern if rule.kind == "regexp" else _normalize(rule, field, ctx)
    if rule.kind == "prefix":
        shown, terms = pattern + "*", fd.postings.terms_with_prefix(pattern)
    elif rule.kind == "fuzzy":
        shown, terms = rule.pattern, _fuzzy_terms(rule, pattern, fd, ctx)
    else:
        rx = wildcard_regex(pattern) if rule.kind == "wildcard" else \
            lucene_regex(pattern, rule.flags, rule.case_insensitive)
        shown = pattern
        terms = [fd.postings.terms[int(i)] for i in fd.postings.ids_matching(rx)]
    if len(terms) > MAX_EXPANSIONS:
        raise IllegalArgument(f"Automaton [{shown}] expanded to too many terms "
                              f"(limit {MAX_EXPANSIONS})")
    return sorted(terms)


def _fuzzy_terms(rule: TermsRule, word: str, fd: TextField, ctx: Context) -> list[str]:
    """Every term within the rule's distance (``fuzzy.candidates``, shared with the fuzzy
    queries; an intervals source keeps them all, up to ``MAX_EXPANSIONS``)."""
    ctx.cancel.tick()
    spec = FuzzySpec("", word, fuzzy_edits(rule.fuzziness, rule.pattern), rule.prefix_length,
                     rule.transpositions, 0)
    return list(candidates(fd.postings.terms, spec))


# --- evaluation --------------------------------------------------------------------------------

def check_intervals(q: Intervals, ctx: Context) -> None:
    """Intervals need positions: only text fields have them (keyword and numbers are refused,
    with Elasticsearch's text); patterns must compile."""
    _check_patterns(q.rule)
    for f in _fields(q.rule, q.field):
        ft = ctx.mapping.get(f)
        if ft is not None and ft.kind != "text":
            raise IllegalArgument("failed to create query: Can only use interval queries on "
                                  f"text fields - not on [{f}] which is of type [{ft.type}]",
                                  es_type="query_shard_exception")


def _check_patterns(rule: Rule) -> None:
    """Patterns compile before any data is read, so every shard refuses a bad one alike
    (Elasticsearch fails to create the query on every shard, empty or not)."""
    if isinstance(rule, TermsRule) and rule.kind == "regexp":
        lucene_regex(rule.pattern, rule.flags, rule.case_insensitive)
    elif isinstance(rule, TermsRule) and rule.kind == "wildcard":
        wildcard_regex(rule.pattern)
    for r in getattr(rule, "rules", ()):
        _check_patterns(r)
    if rule.filter is not None:
        _check_patterns(rule.filter[1])


def _fields(rule: Rule, field: str) -> set[str]:
    out = {getattr(rule, "use_field", None) or field}
    for r in getattr(rule, "rules", ()):
        out |= _fields(r, field)
    if rule.filter is not None:
        out |= _fields(rule.filter[1], field)
    return out


def evaluate_intervals(q: Intervals, seg: Segment, ctx: Context
                       ) -> tuple[np.ndarray, np.ndarray]:
    """``(mask, scores)`` of an intervals query over ``seg``. O(candidates x intervals)."""
    mask, scores = np.zeros(seg.n, dtype=bool), np.zeros(seg.n, dtype=np.float32)
    if ctx.mapping.get(q.field) is None:
        return mask, scores
    check_intervals(q, ctx)
    src = compile_rule(q.rule, q.field, seg, ctx)
    walker = _Walker(seg)
    extent = min_extent(src)
    for doc in walker.candidates(src).tolist():
        ctx.cancel.tick()
        found = walker.intervals(src, doc)
        if found:
            mask[doc] = True
            scores[doc] = interval_score(found, extent, q.boost)
    return mask, scores


def interval_score(found: list[it.Interval], extent: int, boost: float) -> np.float32:
    """Lucene's ``IntervalScorer``: float frequency, then the saturation with pivot 1."""
    freq = np.float32(0)
    for start, end, *_ in found:
        freq = np.float32(float(freq) + 1.0 / max(end - start + 1 - extent + 1, 1))
    one = np.float32(1)
    return np.float32(np.float32(boost) * np.float32(one - one / np.float32(one + freq)))


class _Walker:
    """Candidates and per-document intervals of sources over one segment (positions read
    once per term)."""

    def __init__(self, seg: Segment) -> None:
        self.seg = seg
        self._pos: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
        self._memo: dict[tuple[Src, int], list[it.Interval]] = {}

    def _positions(self, field: str, term: str) -> tuple[np.ndarray, np.ndarray]:
        key = (field, term)
        if key not in self._pos:
            fd = self.seg.fields.get(field)
            got = fd.postings.positions_of(term) if isinstance(fd, TextField) else None
            self._pos[key] = got if got is not None else (np.zeros(0, np.int32),) * 2
        return self._pos[key]

    def candidates(self, s: Src) -> np.ndarray:
        """Sorted documents that may hold an interval of ``s``."""
        if isinstance(s, Terms):
            parts = [np.unique(self._positions(s.field, t)[0]) for t in s.terms]
            return np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int32)
        if isinstance(s, Combine):
            docs = [self.candidates(x) for x in s.subs]
            if not docs:
                return np.zeros(0, np.int32)
            out = docs[0]
            for d in docs[1:]:
                out = np.union1d(out, d) if s.kind == "or" else np.intersect1d(out, d)
            return out
        if isinstance(s, (Repeat, MaxGaps)):
            return self.candidates(s.sub)
        assert isinstance(s, Filtered)
        if s.kind.startswith("not_"):
            return self.candidates(s.sub)
        return np.intersect1d(self.candidates(s.sub), self.candidates(s.ref))

    def intervals(self, s: Src, doc: int) -> list[it.Interval]:
        key = (s, doc)
        if key not in self._memo:
            self._memo[key] = self._compute(s, doc)
        return self._memo[key]

    def _compute(self, s: Src, doc: int) -> list[it.Interval]:
        if isinstance(s, Terms):
            pos: list[int] = []
            for t in s.terms:
                pos.extend(positions_in(*self._positions(s.field, t), doc))
            return [(x, x, 0) for x in sorted(pos)]
        if isinstance(s, Combine):
            lists = [self.intervals(x, doc) for x in s.subs]
            return _COMBINE[s.kind](lists)
        if isinstance(s, Repeat):
            return it.repeating(self.intervals(s.sub, doc), s.n)
        if isinstance(s, MaxGaps):
            return [x for x in self.intervals(s.sub, doc) if x[2] <= s.gaps]
        assert isinstance(s, Filtered)
        return it.filtered(s.kind, self.intervals(s.sub, doc), self.intervals(s.ref, doc))


_COMBINE: dict[str, Any] = {"ordered": it.ordered, "unordered": it.unordered,
                            "phrase": it.phrase, "or": it.disjunction}
