"""The ``phrase`` suggester's options, checked as Elasticsearch's ``PhraseSuggestionBuilder``
and ``DirectCandidateGeneratorBuilder`` check them; what we do not build (``collate``, shingle
``gram_size``, generators' ``pre_filter``/``post_filter``) is refused by name."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import IllegalArgument, ParsingError

PHRASE_OPTIONS = ("field", "text", "size", "shard_size", "gram_size", "analyzer",
                  "real_word_error_likelihood", "confidence", "max_errors", "separator",
                  "token_limit", "force_unigrams", "direct_generator", "highlight", "smoothing",
                  "collate")
GENERATOR_OPTIONS = ("field", "suggest_mode", "max_edits", "prefix_length", "min_word_length",
                     "size", "min_doc_freq", "max_term_freq", "accuracy", "max_inspections",
                     "sort", "string_distance", "pre_filter", "post_filter")
MAX_SIZE = 100   # ours: corrections, and candidates of a generator


@dataclass(frozen=True)
class Generator:
    """One ``direct_generator`` (Lucene's ``DirectSpellChecker`` settings)."""

    field: str
    suggest_mode: str = "missing"
    max_edits: int = 2
    prefix_length: int = 1
    min_word_length: int = 4
    size: int = 5
    min_doc_freq: float = 0.0
    max_term_freq: float = 0.01
    accuracy: float = 0.5
    sort: str = "score"         # which ``size`` candidates are kept: best score or frequency
    max_inspections: int = 5    # Lucene looks at ``size * max_inspections`` terms first


@dataclass(frozen=True)
class PhraseSuggestion:
    """One ``phrase`` suggester of the request."""

    name: str
    text: str
    field: str
    generators: tuple[Generator, ...]
    size: int = 5
    shard_size: int = 5
    analyzer: str | None = None
    real_word_error_likelihood: float = 0.95
    confidence: float = 1.0
    max_errors: float = 0.5     # Elasticsearch's DEFAULT_MAX_ERRORS (its docs say 1.0)
    separator: str = " "
    token_limit: int = 10
    pre_tag: str | None = None
    post_tag: str | None = None
    smoothing: str = "stupid_backoff"
    alpha: float = 0.5          # laplace


def parse_phrase(name: str, opts: Any, text: Any) -> PhraseSuggestion:
    """The ``phrase`` object of suggester ``name``."""
    if not isinstance(opts, dict):
        raise ParsingError(f"[phrase] suggester [{name}] must be an object")
    for k in opts:
        if k not in PHRASE_OPTIONS:
            raise ParsingError(f"suggester[phrase] doesn't support field [{k}]")
    if "collate" in opts:
        raise IllegalArgument("[collate] of the [phrase] suggester is not supported by this "
                              "server (it needs search templates)")
    field = opts.get("field")
    if not isinstance(field, str) or not field:
        raise IllegalArgument("The required field option [field] is missing")
    if not isinstance(text, str):
        raise IllegalArgument("The required text option is missing")
    if _int(opts, "gram_size", 1) < 1:
        raise IllegalArgument("gram_size must be >= 1")
    if opts.get("gram_size", 1) != 1:
        raise IllegalArgument("[gram_size] above 1 needs a shingle field, which this server "
                              "does not support")
    size = _int(opts, "size", 5, low=1)
    pre, post = _highlight(opts.get("highlight"))
    smoothing, alpha = _smoothing(opts.get("smoothing"))
    return PhraseSuggestion(
        name, text, field, _generators(opts.get("direct_generator"), field),
        size=size, shard_size=_int(opts, "shard_size", max(size, 5), low=1),
        analyzer=_str(opts, "analyzer"),
        real_word_error_likelihood=_positive(opts, "real_word_error_likelihood", 0.95),
        confidence=_number(opts, "confidence", 1.0, "confidence must be >= 0.0"),
        max_errors=_positive(opts, "max_errors", 0.5),
        separator=_str(opts, "separator") or " ",
        token_limit=_int(opts, "token_limit", 10, low=1, msg="token_limit must be >= 1"),
        pre_tag=pre, post_tag=post, smoothing=smoothing, alpha=alpha)


def _generators(value: Any, field: str) -> tuple[Generator, ...]:
    """The ``direct_generator`` list; one with the suggester's field when absent."""
    if value is None:
        return (Generator(field),)
    if not isinstance(value, list) or not value:
        raise ParsingError("[direct_generator] must be a non-empty array of objects")
    return tuple(_generator(g, field) for g in value)


def _generator(g: Any, field: str) -> Generator:
    if not isinstance(g, dict):
        raise ParsingError("[direct_generator] must be a non-empty array of objects")
    for k in g:
        if k not in GENERATOR_OPTIONS:
            raise ParsingError(f"[direct_generator] unknown field [{k}]")
    for k in ("pre_filter", "post_filter"):
        if k in g:
            raise IllegalArgument(f"[{k}] of a [direct_generator] is not supported by this "
                                  "server")
    if not isinstance(g.get("field"), str) or not g["field"]:
        raise IllegalArgument("Required [field]")
    if g["field"] != field:
        raise IllegalArgument(f"a [direct_generator] on another field [{g['field']}] than the "
                              f"suggester's [{field}] is not supported by this server")
    mode = g.get("suggest_mode", "missing")
    if mode not in ("missing", "popular", "always"):
        raise IllegalArgument(f"Illegal suggest mode {mode}")
    if g.get("string_distance", "internal") != "internal":
        raise IllegalArgument(f"[string_distance] [{g['string_distance']}] is not supported "
                              "by this server (only [internal])")
    if g.get("sort", "score") not in ("score", "frequency"):
        raise IllegalArgument(f"Illegal suggest sort {g['sort']}")
    max_edits = _int(g, "max_edits", 2)
    if not 1 <= max_edits <= 2:
        raise IllegalArgument("Illegal max_edits value " + str(max_edits))
    return Generator(g["field"], suggest_mode=mode, max_edits=max_edits,
                     prefix_length=_int(g, "prefix_length", 1),
                     min_word_length=_int(g, "min_word_length", 4),
                     size=_int(g, "size", 5, low=1),
                     min_doc_freq=_number(g, "min_doc_freq", 0.0),
                     max_term_freq=_number(g, "max_term_freq", 0.01),
                     accuracy=_number(g, "accuracy", 0.5), sort=g.get("sort", "score"),
                     max_inspections=_int(g, "max_inspections", 5, low=1))


def _highlight(value: Any) -> tuple[str | None, str | None]:
    if value is None:
        return None, None
    if not isinstance(value, dict):
        raise ParsingError("[highlight] of the [phrase] suggester must be an object")
    for k in value:
        if k not in ("pre_tag", "post_tag"):
            raise ParsingError(f"suggester[phrase][highlight] doesn't support field [{k}]")
    pre, post = _str(value, "pre_tag"), _str(value, "post_tag")
    if (pre is None) != (post is None):
        raise IllegalArgument("Pre and post tag must both be null or both not be null.")
    return pre, post


def _smoothing(value: Any) -> tuple[str, float]:
    """The smoothing model; only its unigram part applies (``gram_size`` 1), but every model's
    options are checked."""
    if value is None:
        return "stupid_backoff", 0.5
    if not isinstance(value, dict) or len(value) != 1:
        raise ParsingError("suggester[phrase] [smoothing] must name exactly one model")
    kind, opts = next(iter(value.items()))
    if not isinstance(opts, dict):
        raise ParsingError(f"[{kind}] smoothing must be an object")
    allowed = {"stupid_backoff": ("discount",), "laplace": ("alpha",),
               "linear": ("trigram_lambda", "bigram_lambda", "unigram_lambda")}
    if kind not in allowed:
        raise IllegalArgument(f"suggester[phrase] doesn't support object field [{kind}]")
    for k in opts:
        if k not in allowed[kind]:
            raise ParsingError(f"suggester[phrase][smoothing][{kind}] doesn't support "
                               f"field [{k}]")
    for k in opts:
        _number(opts, k, 0.0)
    if kind == "linear":
        lambdas = [float(opts.get(k, 0.0)) for k in allowed[kind]]
        if abs(sum(lambdas) - 1.0) > 0.001:
            raise IllegalArgument("linear smoothing lambdas must sum to 1")
    return kind, float(opts.get("alpha", 0.5))


def _str(opts: dict[str, Any], key: str) -> str | None:
    v = opts.get(key)
    if v is not None and not isinstance(v, str):
        raise ParsingError(f"[{key}] must be a string")
    return v


def _positive(opts: dict[str, Any], key: str, default: float) -> float:
    v = _number(opts, key, default, f"{key} must be > 0.0")
    if v <= 0:
        raise IllegalArgument(f"{key} must be > 0.0")
    return v


def _number(opts: dict[str, Any], key: str, default: float, msg: str | None = None) -> float:
    v = opts.get(key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
        raise IllegalArgument(msg or f"[{key}] must be a non-negative number, found [{v}]")
    return float(v)


def _int(opts: dict[str, Any], key: str, default: int, low: int = 0,
         msg: str | None = None) -> int:
    v = opts.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or v < low or v > 10_000:
        raise IllegalArgument(msg or f"[{key}] must be an integer in [{low}, 10000], "
                              f"found [{v}]")
    if key in ("size", "shard_size") and v > MAX_SIZE:
        raise IllegalArgument(f"[{key}] above [{MAX_SIZE}] is not supported by this server")
    return v
