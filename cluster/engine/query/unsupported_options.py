"""Options Elasticsearch defines that this server does not implement: a value equal to
Elasticsearch's default cannot change an answer and is accepted; any other is refused by name
(never accepted and ignored)."""
from __future__ import annotations

import re
from typing import Any, Callable

from ...errors import IllegalArgument
from .parse_helpers import bool_option, int_option

#: rewrites that score every match with the query's boost alone, as we do for multi-term queries
CONSTANT_REWRITES = ("constant_score", "constant_score_blended", "constant_score_boolean")
_TOP_TERMS = re.compile(r"top_terms_(blended_freqs_|boost_)?(\d{1,9})")
MAX_DETERMINIZED_STATES = 10000


def refuse(name: str, key: str) -> IllegalArgument:
    return IllegalArgument(f"[{name}] [{key}] is not supported by this server")


def check_rewrite(name: str, value: Any) -> None:
    """``QueryParsers.parseRewriteMethod``: the constant-score rewrites give our scores; the
    scoring ones (``scoring_boolean``, ``top_terms_*``) are refused by name; unknown names fail
    as Elasticsearch's shard does."""
    if value is None or value in CONSTANT_REWRITES:
        return
    if value == "scoring_boolean" or _TOP_TERMS.fullmatch(str(value)):
        raise IllegalArgument(f"[{name}] rewrite [{value}] is not supported by this server")
    raise IllegalArgument(f"failed to create query: Failed to parse rewrite_method [{value}]",
                          es_type="query_shard_exception")


def require_default(name: str, body: dict[str, Any], key: str, default: Any) -> None:
    """Refuse ``key`` by name unless absent or equal to Elasticsearch's ``default``."""
    if key not in body:
        return
    parse: Callable[[str, str, Any], Any] = bool_option if isinstance(default, bool) \
        else int_option
    if parse(name, key, body[key]) != default:
        raise refuse(name, key)


def check_query_string_options(name: str, body: dict[str, Any]) -> None:
    """``query_string`` / ``simple_query_string`` options not implemented here."""
    require_default(name, body, "enable_position_increments", True)
    require_default(name, body, "max_determinized_states", MAX_DETERMINIZED_STATES)
    check_rewrite(name, body.get("rewrite"))


def check_regexp_options(body: dict[str, Any]) -> None:
    """``regexp``'s ``max_determinized_states`` and ``rewrite``; ``flags_value`` (the numeric
    flags) is refused unless it is ALL (``-1`` or ``65535``)."""
    require_default("regexp", body, "max_determinized_states", MAX_DETERMINIZED_STATES)
    check_rewrite("regexp", body.get("rewrite"))
    if "flags_value" in body and int_option("regexp", "flags_value", body["flags_value"]) \
            not in (-1, 0xFFFF):
        raise refuse("regexp", "flags_value")
