"""Domain errors that know their Elasticsearch type and HTTP status.

The engine raises these; only ``api/errors.py`` turns them into Elasticsearch's JSON envelope::

    SearchError                      (status 500, never raised on purpose)
    ├── IllegalArgument              illegal_argument_exception, 400
    ├── ParsingError                 parsing_exception, 400
    ├── XContentParseError           x_content_parse_exception, 400
    ├── ActionRequestValidation      action_request_validation_exception, 400
    ├── MapperParsing                mapper_parsing_exception, 400
    ├── TooManyClauses               too_many_clauses / too_many_nested_clauses, 400
    ├── IndexNotFound                index_not_found_exception, 404
    ├── ResourceAlreadyExists        resource_already_exists_exception, 400
    ├── SearchContextMissing         search_context_missing_exception, 404
    ├── VersionConflict              version_conflict_engine_exception, 409
    ├── SearchPhaseExecution         search_phase_execution_exception, 503
    ├── ContentTooLong               content_too_long_exception, 413
    ├── SimulatedFailure             simulated_failure_exception, 503 (simulated trouble)
    ├── ShardTimeout                 search_timeout_exception, 504 (internal: a shard gave up)
    └── TaskCancelled                task_cancelled_exception, 400 (its caller went away)

They pickle with their extra fields so they survive a trip through Ray. Errors that come back
from another process arrive wrapped (a Ray task error whose ``cause`` is ours):
:func:`domain_error` and :func:`remote_cause` unwrap them, :func:`actor_died` tells an
unreachable actor from an error of the request — by name, so nothing here imports Ray.
"""
from __future__ import annotations

from typing import Any


class SearchError(Exception):
    """Base of every error the service reports; carries the Elasticsearch type and status."""

    es_type = "exception"
    status = 500

    def __init__(self, reason: str, *, es_type: str | None = None, status: int | None = None,
                 **extra: Any) -> None:
        super().__init__(reason)
        self.reason = reason
        if es_type is not None:
            self.es_type = es_type
        if status is not None:
            self.status = status
        self.extra = extra

    def __reduce__(self):  # keep type/status/extra across pickling (Ray)
        return (_rebuild, (type(self), self.reason, self.es_type, self.status, self.extra))

    def to_cause(self) -> dict[str, Any]:
        """The `root_cause` entry / `error` object Elasticsearch would print for this error."""
        out: dict[str, Any] = {"type": self.es_type, "reason": self.reason}
        out.update(self.extra)
        return out


def _rebuild(cls, reason, es_type, status, extra):
    err = cls.__new__(cls)
    Exception.__init__(err, reason)
    err.reason, err.es_type, err.status, err.extra = reason, es_type, status, extra
    return err


class IllegalArgument(SearchError):
    es_type = "illegal_argument_exception"
    status = 400


class ParsingError(SearchError):
    es_type = "parsing_exception"
    status = 400


class XContentParseError(SearchError):
    es_type = "x_content_parse_exception"
    status = 400


class ActionRequestValidation(SearchError):
    es_type = "action_request_validation_exception"
    status = 400


class MapperParsing(SearchError):
    es_type = "mapper_parsing_exception"
    status = 400


class TooManyClauses(SearchError):
    es_type = "too_many_clauses"
    status = 400


class IndexNotFound(SearchError):
    es_type = "index_not_found_exception"
    status = 404

    def __init__(self, index: str, reason_suffix: str | None = None, **kw: Any) -> None:
        """``reason_suffix``: the write's ``require_alias`` named ``index``, not an alias."""
        more = "" if reason_suffix is None else \
            f" and [require_alias] request flag is [true] and [{reason_suffix}] is not an alias"
        super().__init__(f"no such index [{index}]{more}", index=index,
                         **{"resource.type": "index_or_alias", "resource.id": index,
                            "index_uuid": "_na_"}, **kw)


class IndexClosed(SearchError):
    """A read or write that names a closed index (``POST /{index}/_close``)."""

    es_type = "index_closed_exception"
    status = 400

    def __init__(self, index: str, uuid: str = "_na_") -> None:
        super().__init__("closed", index=index, index_uuid=uuid)


class ResourceAlreadyExists(SearchError):
    es_type = "resource_already_exists_exception"
    status = 400


class InvalidIndexName(SearchError):
    es_type = "invalid_index_name_exception"
    status = 400


class SearchContextMissing(SearchError):
    es_type = "search_context_missing_exception"
    status = 404


class StaleGeneration(SearchError):
    """A search guessed a shard's latest refresh from cached statistics and the shard has
    refreshed since; the coordinator drops the cache and runs the search again (internal)."""

    es_type = "stale_generation_exception"
    status = 503


class VersionConflict(SearchError):
    es_type = "version_conflict_engine_exception"
    status = 409


class SearchPhaseExecution(SearchError):
    es_type = "search_phase_execution_exception"
    status = 503


class ContentTooLong(SearchError):
    es_type = "content_too_long_exception"
    status = 413


class SimulatedFailure(SearchError):
    """A shard call failed on purpose (``fail_rate``); becomes a ``_shards.failures`` entry."""

    es_type = "simulated_failure_exception"
    status = 503


class ShardTimeout(SearchError):
    """A shard gave up on a call because the search's deadline passed (internal: the
    coordinator reports the shard as timed out, never this error)."""

    es_type = "search_timeout_exception"
    status = 504


class TaskCancelled(SearchError):
    """Work stopped because whoever asked for it went away (a client that disconnected, a
    coordinator that gave up on the shard): nobody is left to read this error."""

    es_type = "task_cancelled_exception"
    status = 400


# --- errors that crossed a process boundary ----------------------------------------------------

def remote_cause(exc: BaseException) -> BaseException:
    """What a Ray task error wraps (its ``cause``), or ``exc`` itself when it wraps nothing."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, BaseException) else exc


def domain_error(exc: BaseException) -> BaseException:
    """The :class:`SearchError` inside a Ray task error, else ``exc`` itself.

    A Ray task error is also an instance of the remote error's class, but only its ``cause``
    keeps per-instance fields (an ``es_type`` other than the class's, ``extra``)."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, SearchError) else exc


def actor_died(exc: BaseException) -> bool:
    """The call failed because its actor is dead, restarting or unreachable (Ray's
    ``Actor*Error`` family, told by name), not because of the request."""
    return "Actor" in type(exc).__name__ or "Actor" in type(remote_cause(exc)).__name__
