"""``suggest``: the ``phrase`` suggester (Elasticsearch's ``NoisyChannelSpellChecker``), exact
across shards.

The text is analyzed with the field's search analyzer; each ``direct_generator`` draws, per
token, the field's terms within its edit distance (shards send them with document and total
frequencies, ``engine/suggest_phrase.py``; here they are summed). Every path that corrects at
most ``max_errors`` tokens is scored as ``exp(sum(log10(channel * language model)))`` — the
mix of bases is Elasticsearch's — and kept above ``confidence`` times the input's own score.
The language model is a unigram one (no shingle fields here, so ``gram_size`` is 1). Its
count of distinct terms is the number of documents, as Elasticsearch takes it for an index of
more than one segment (Lucene does not know the count there): exact sums, so the answer does
not depend on how documents are spread over shards and segments.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field as dc_field
from typing import Any

import numpy as np

from ..errors import IllegalArgument
from .suggest_phrase_parse import Generator, PhraseSuggestion

MAX_PATHS = 100_000   # ours: corrections scored for one suggester (bounds the enumeration)


@dataclass(frozen=True)
class Candidate:
    """One term at one position: its statistics and its channel (string distance) score."""

    term: str
    df: int
    ttf: int
    distance: float            # 1.0 for the user's own term
    score: float = 0.0         # distance * (ttf + 1) / (sum_ttf + 1): orders the candidates
    user: bool = dc_field(default=False, compare=False)


def phrase_plan(s: PhraseSuggestion, tokens: tuple[str, ...]
                ) -> tuple[tuple[str, str, tuple[str, ...], int, int], ...]:
    """What each shard looks up for the suggester: one entry per generator."""
    return tuple((f"{s.name}\x00{i}", g.field, tokens, g.max_edits, g.prefix_length)
                 for i, g in enumerate(s.generators))


def reduce_phrase(s: PhraseSuggestion, tokens: list[str], partials: list[dict[str, Any]]
                  ) -> list[dict[str, Any]]:
    """The suggester's one entry (the whole text) with its corrections, best first."""
    entry: dict[str, Any] = {"text": s.text, "offset": 0, "length": len(s.text), "options": []}
    merged = [_merge([p[f"{s.name}\x00{i}"] for p in partials]) for i in range(len(s.generators))]
    if not tokens or len(tokens) >= s.token_limit or not merged or merged[0]["sum_ttf"] == 0:
        return [entry]
    lm = merged[0]
    sets = [_candidates(s, lm, merged, i, tok) for i, tok in enumerate(tokens)]
    entry["options"] = _corrections(s, lm, sets)
    return [entry]


def _merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The shards' partials summed: exact collection-wide frequencies."""
    out: dict[str, Any] = {"docs": sum(p["docs"] for p in parts),
                           "sum_ttf": sum(p["sum_ttf"] for p in parts), "tokens": []}
    for i in range(len(parts[0]["tokens"]) if parts else 0):
        own = [0, 0]
        cands: dict[str, list[int]] = {}
        for p in parts:
            (df, ttf), found = p["tokens"][i]
            own[0] += df
            own[1] += ttf
            for term, (cdf, cttf, edits) in found.items():
                c = cands.setdefault(term, [0, 0, edits])
                c[0] += cdf
                c[1] += cttf
        out["tokens"].append((tuple(own), cands))
    return out


def _candidates(s: PhraseSuggestion, lm: dict[str, Any], merged: list[dict[str, Any]],
                at: int, tok: str) -> tuple[Candidate, list[Candidate]]:
    """The user's term and the best ``shard_size`` corrections of all generators."""
    (df, ttf), _ = lm["tokens"][at]
    original = Candidate(tok, df, ttf, 1.0, _cand_score(1.0, ttf, lm["sum_ttf"]), user=True)
    drawn: dict[str, Candidate] = {}
    for g, m in zip(s.generators, merged):
        for c in _draw(g, m, at, tok):
            drawn.setdefault(c.term, c)
    ranked = sorted(drawn.values(), key=lambda c: (-c.score, _desc(c.term)))
    return original, ranked[:s.shard_size]


def _desc(term: str) -> tuple[int, ...]:
    """A key that sorts later (zzz) terms first, as Elasticsearch's ``Candidate`` ties do."""
    return tuple(-ord(ch) for ch in term) + (1,)


def _draw(g: Generator, m: dict[str, Any], at: int, tok: str) -> list[Candidate]:
    """Lucene's ``DirectSpellChecker.suggestSimilar`` with the generator's options."""
    (own_df, _), cands = m["tokens"][at]
    docs = m["docs"]
    if len(tok) < g.min_word_length or (g.suggest_mode == "missing" and own_df > 0):
        return []
    max_q = g.max_term_freq if g.max_term_freq >= 1 else math.ceil(g.max_term_freq * docs)
    if own_df > max_q:
        return []
    floor = _threshold(g, own_df, docs)
    words = []
    for term, (df, ttf, edits) in cands.items():
        if df < floor or (g.suggest_mode == "popular" and df <= own_df):
            continue
        if len(term) < g.min_word_length:
            continue
        dist = float(np.float32(1.0 - edits / min(len(term), len(tok))))
        if dist < g.accuracy:
            continue
        words.append((dist, df, term, ttf))
    # Lucene's fuzzy enumeration keeps the best ``size * max_inspections`` by distance
    # (earlier terms on ties) before ranking them
    words.sort(key=lambda w: (-w[0], w[2]))
    del words[g.size * g.max_inspections:]
    if g.sort == "frequency":
        words.sort(key=lambda w: (-w[1], -w[0], w[2]))
    else:
        words.sort(key=lambda w: (-w[0], -w[1], w[2]))
    return [Candidate(t, df, ttf, d, _cand_score(d, ttf, m["sum_ttf"]))
            for d, df, t, ttf in words[:g.size]]


def _threshold(g: Generator, own_df: int, docs: int) -> float:
    """The least document frequency of a candidate: ``min_doc_freq``, raised for the
    ``missing`` and ``popular`` modes by Elasticsearch's ``thresholdTermFrequency``."""
    floor = g.min_doc_freq if g.min_doc_freq >= 1 else math.ceil(g.min_doc_freq * docs)
    if g.suggest_mode == "always" or own_df <= 0:
        return floor
    plateau = int(g.min_doc_freq) if g.min_doc_freq >= 1 else int(docs * g.min_doc_freq)
    if own_df - plateau <= 0:
        return floor
    raised = max(0, round(own_df * math.log10(own_df - plateau) / math.log10(5) + 1))
    return max(floor, raised)


def _cand_score(distance: float, ttf: int, sum_ttf: int) -> float:
    return distance * (ttf + 1) / (sum_ttf + 1)


def _corrections(s: PhraseSuggestion, lm: dict[str, Any],
                 sets: list[tuple[Candidate, list[Candidate]]]) -> list[dict[str, Any]]:
    """Every path with at most ``max_errors`` corrections, scored; the best ``size``."""
    n = len(sets)
    errors = int(s.max_errors) if s.max_errors >= 1 else _java_round(s.max_errors * n)
    errors = max(1, errors)
    word = _word_scorer(s, lm)
    originals = [o for o, _ in sets]
    cutoff = 5e-324   # Java's Double.MIN_VALUE
    if s.confidence > 0:
        cutoff = math.exp(sum(word(c) for c in originals)) * s.confidence
    found = []
    for path in _paths(sets, errors):
        score = math.exp(sum(word(c) for c in path))
        if score > cutoff:
            found.append((score, path))
    found.sort(key=lambda f: (-f[0], [c.term for c in f[1]]))
    return [_option(s, score, path) for score, path in found[:s.size]]


def _paths(sets: list[tuple[Candidate, list[Candidate]]], errors: int) -> list[list[Candidate]]:
    """The paths the search visits (each position: the user's term, or a correction while
    the ``errors`` budget lasts), refused beyond ``MAX_PATHS``. O(paths × tokens)."""
    out: list[list[Candidate]] = []

    def walk(at: int, path: list[Candidate], left: int) -> None:
        if at == len(sets):
            if len(out) >= MAX_PATHS:
                raise IllegalArgument(f"[phrase] suggester would score more than [{MAX_PATHS}] "
                                      "corrections; lower [max_errors] or the generators' "
                                      "[size]")
            out.append(list(path))
            return
        original, corrections = sets[at]
        for c in [original, *(corrections if left > 0 else [])]:
            path.append(c)
            walk(at + 1, path, left - (0 if c.user else 1))
            path.pop()
    walk(0, [], errors)
    return out


def _word_scorer(s: PhraseSuggestion, lm: dict[str, Any]) -> Any:
    """``log10(channel * unigram)`` of one candidate (Elasticsearch's ``WordScorer``)."""
    voc = lm["sum_ttf"]
    num_terms = lm["docs"]

    def score(c: Candidate) -> float:
        channel = s.real_word_error_likelihood if c.distance == 1.0 else c.distance
        if s.smoothing == "laplace":
            unigram = (c.ttf + s.alpha) / (voc + s.alpha * num_terms)
        else:
            unigram = (1.0 + c.ttf) / (voc + num_terms)
        return math.log10(channel * unigram)
    return score


def _java_round(x: float) -> int:
    return math.floor(x + 0.5)


def _option(s: PhraseSuggestion, score: float, path: list[Candidate]) -> dict[str, Any]:
    out: dict[str, Any] = {"text": " ".join(c.term for c in path)}
    if s.pre_tag is not None:
        out["highlighted"] = _highlighted(path, s.pre_tag, s.post_tag or "")
    out["score"] = float(np.float32(score))
    return out


def _highlighted(path: list[Candidate], pre: str, post: str) -> str:
    """The correction with each run of corrected terms in one pair of tags."""
    words: list[str] = []
    run: list[str] = []
    for c in path:
        if c.user:
            if run:
                words.append(pre + " ".join(run) + post)
                run = []
            words.append(c.term)
        else:
            run.append(c.term)
    if run:
        words.append(pre + " ".join(run) + post)
    return " ".join(words)
