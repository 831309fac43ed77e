"""What a shard copy answers when it cannot run a command or a read (Elasticsearch types)."""
from __future__ import annotations

from ..errors import SearchError


class CopyBehind(SearchError):
    """The copy missed commands; it must catch up before it takes new ones."""

    es_type = "shard_not_in_sync_exception"
    status = 503

    def __init__(self, reason: str, last_op: int = -1) -> None:
        super().__init__(reason, last_op=last_op)


class CopyDiverged(SearchError):
    """The copy's history differs from the group's (an unacknowledged command): rebuild it."""

    es_type = "shard_copy_diverged_exception"
    status = 503


class CopyCorrupted(SearchError):
    """The copy's files are damaged (``failure`` says how): it takes no command until it is
    rebuilt from a healthy copy or repaired (``shardsearch check --repair``)."""

    es_type = "corrupt_index_exception"
    status = 500


class DiskFull(SearchError):
    """The log could not be written (no space left): the command was rolled back, nothing was
    acknowledged. Elasticsearch's answer at its flood-stage watermark."""

    es_type = "cluster_block_exception"
    status = 429

    def __init__(self, index: str) -> None:
        super().__init__(f"index [{index}] blocked by: [TOO_MANY_REQUESTS/12/disk usage "
                         "exceeded flood-stage watermark, index has read-only-allow-delete "
                         "block];")


class GenerationAhead(SearchError):
    """A generation this copy has not reached yet (a refresh is still on its way to it)."""

    es_type = "shard_generation_ahead_exception"
    status = 503


class GenerationGone(SearchError):
    """A snapshot older than what this copy can reproduce (it was rebuilt after a crash)."""

    es_type = "search_context_missing_exception"
    status = 404
