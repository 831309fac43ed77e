"""Suggesters over several indices: each index's shards look up with that index's own mapping.

Elasticsearch builds a suggester on every shard from the shard's mapping, so two indices that
map one field differently (another analyzer, other contexts, a completion field in one index
and not in the other) each answer by their own mapping. The coordinator builds the shards'
plans here, once per index (:func:`plan_suggesters`):

* ``completion``: each index's plan from its own mapping. An index whose field is no
  completion field gets a :class:`~cluster.engine.suggest_completion.RefusedPlan` that its
  shards raise (Elasticsearch's shard failure, in ``_shards.failures``); when no index can
  build it the search fails with that error, as before. A ``fuzzy`` prefix scales weights by
  one boost computed from the analysed prefix, so indices that analyse the prefix differently
  are refused with a 400 naming the suggester.
* ``term`` and ``phrase``: the response has one entry per token of the text, analysed once, so
  indices whose analyses of the text differ are refused with a 400 naming the suggester
  rather than answered by one of them. An index that does not map the field reads the text as
  the first index that maps it.

Each suggester's reduce reads its text with the mapping of the first index that maps its field
(``reduce_mappings``), not the first suggester's.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..engine.mapping import Mapping
from ..engine.suggest_completion import RefusedPlan
from ..errors import IllegalArgument, SearchError
from .suggest import Suggestion, TermSuggestion, shard_plan
from .suggest_completion import CompletionSuggestion, completion_plan


@dataclass(frozen=True)
class IndexPlans:
    """One index's shard plans: ``ShardQuery.suggest``, ``phrase_suggest``, ``completion``."""

    terms: tuple[Any, ...] = ()
    phrases: tuple[Any, ...] = ()
    completion: tuple[Any, ...] = ()


@dataclass(frozen=True)
class SuggestPlans:
    per_index: dict[str, IndexPlans]      # index name -> its shards' plans
    reduce_mappings: dict[str, Any]       # suggester name -> the mapping its reduce reads


def plan_suggesters(suggestions: tuple[Suggestion, ...],
                    indices: list[tuple[str, Any]]) -> SuggestPlans:
    """The plans of ``suggestions`` for each ``(index name, mapping)``; raises the 400s the
    module docstring names. O(suggesters x indices) analyses of the suggesters' texts."""
    indices = indices or [("", Mapping())]
    terms: dict[str, list[Any]] = {name: [] for name, _ in indices}
    phrases: dict[str, list[Any]] = {name: [] for name, _ in indices}
    completion: dict[str, list[Any]] = {name: [] for name, _ in indices}
    reduce_mappings: dict[str, Any] = {}
    for s in suggestions:
        if isinstance(s, CompletionSuggestion):
            plans = _completion(s, indices)
            for name, _ in indices:
                completion[name].append(plans[name])
            reduce_mappings[s.name] = next(m for name, m in indices
                                           if not isinstance(plans[name], RefusedPlan))
            continue
        first = _first_mapping(s.field, indices)
        reduce_mappings[s.name] = first
        built = {name: shard_plan((s,), m if m.get(s.field) is not None else first)
                 for name, m in indices}
        if any(b != built[indices[0][0]] for b in built.values()):
            kind = "term" if isinstance(s, TermSuggestion) else "phrase"
            raise IllegalArgument(f"[suggest] the indices {sorted(built)} analyse the text of "
                                  f"[{s.name}] on field [{s.field}] differently; a [{kind}] "
                                  "suggester over them is not supported by this server")
        for name, (t, p) in built.items():
            terms[name].extend(t)
            phrases[name].extend(p)
    return SuggestPlans({name: IndexPlans(tuple(terms[name]), tuple(phrases[name]),
                                          tuple(completion[name])) for name, _ in indices},
                        reduce_mappings)


def _first_mapping(field: str, indices: list[tuple[str, Any]]) -> Any:
    return next((m for _, m in indices if m.get(field) is not None), indices[0][1])


def _completion(s: CompletionSuggestion, indices: list[tuple[str, Any]]) -> dict[str, Any]:
    """Each index's plan, or a ``RefusedPlan`` carrying the error its shards fail with."""
    plans: dict[str, Any] = {}
    errors: list[SearchError] = []
    for name, mapping in indices:
        try:
            plans[name] = completion_plan(s, mapping)
        except SearchError as e:
            plans[name] = RefusedPlan(s.name, e)
            errors.append(e)
    if len(errors) == len(indices):
        raise errors[0]
    if s.fuzzy is not None:
        prefixes = {p.prefix for p in plans.values() if not isinstance(p, RefusedPlan)}
        if len(prefixes) > 1:
            raise IllegalArgument(f"[suggest] the indices {sorted(plans)} analyse the prefix "
                                  f"of [{s.name}] on field [{s.field}] differently; a fuzzy "
                                  "[completion] suggester over them is not supported by this "
                                  "server")
    return plans
