"""The concurrency conditions a write may carry, checked before it is numbered.

``if_seq_no`` + ``if_primary_term`` (compare and write) and ``version`` with ``version_type``
``external`` / ``external_gte`` (a version kept by another system). The shard applies them
(``engine/shard.py``, ``_precondition``); here are Elasticsearch's validation rules and texts for
the combinations it refuses before any shard sees the write.
"""
from __future__ import annotations

from typing import Any

from ..errors import ActionRequestValidation, IllegalArgument

VERSION_TYPES = ("internal", "external", "external_gte")
INTERNAL_VERSION = ("internal versioning can not be used for optimistic concurrency control. "
                    "Please use `if_seq_no` and `if_primary_term` instead")


_LONG = (-2**63, 2**63 - 1)


def _int(value: Any, name: str) -> int | None:
    """``value`` as a plain ``int`` in Java's long range, as Elasticsearch parses it from JSON
    (a fraction is cut off). The Python API can hand over anything (``np.int64``, ``inf``,
    ``2**70``): normalised or refused here, so a bad option fails its item alone and never
    reaches a shard or its log."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise IllegalArgument(f"[{name}] must be a number, got [{value}]")
    try:
        out = int(value)
    except (TypeError, ValueError):
        raise IllegalArgument(f"Failed to parse int parameter [{name}] with value "
                              f"[{value}]") from None
    except OverflowError:   # an infinite float
        out = None
    if out is None or not _LONG[0] <= out <= _LONG[1]:
        raise IllegalArgument(f"Value [{value}] is out of range for a long")
    return out


_CONDITIONS = ("if_seq_no", "if_primary_term", "version", "version_type")


def write_conditions(item: dict[str, Any]) -> dict[str, Any]:
    """The checked conditions of one write item (``if_seq_no``, ``if_primary_term``,
    ``version``, ``version_type``), only those it has; raises the 400 Elasticsearch raises."""
    if all(item.get(k) is None for k in _CONDITIONS):
        return {}   # the common write: nothing to check
    action = item["action"]
    seq_no = _int(item.get("if_seq_no"), "if_seq_no")
    term = _int(item.get("if_primary_term"), "if_primary_term")
    version = _int(item.get("version"), "version")
    vtype = item.get("version_type")
    errors: list[str] = []
    if vtype is not None:
        if not isinstance(vtype, str) or vtype not in VERSION_TYPES:
            raise IllegalArgument(f"No version type match [{vtype}]")
        vtype = VERSION_TYPES[VERSION_TYPES.index(vtype)]   # a plain str, not a subclass
    external = vtype in ("external", "external_gte")
    if seq_no is not None and seq_no < 0 and seq_no != -2:
        raise IllegalArgument(f"sequence numbers must be non negative. got [{seq_no}].")
    if term is not None and term < 0:
        raise IllegalArgument(f"primary term must be non negative. got [{term}]")
    if external and action == "create":
        errors.append("create operations only support internal versioning. use index instead")
    elif external and action == "update":
        errors.append(INTERNAL_VERSION)
    elif external and (version is None or version < 0):
        errors.append(f"illegal version value [{-3 if version is None else version}] for "
                      f"version type [{str(vtype).upper()}]")
    elif not external and version is not None:
        errors.append(INTERNAL_VERSION)
    if seq_no is not None and external:
        errors.append(f"compare and write operations can not be used with version type "
                      f"[{str(vtype).lower()}]")
    if seq_no is not None and term in (None, 0):
        errors.append("ifSeqNo is set, but primary term is [0]")
    if seq_no is None and term not in (None, 0):
        errors.append(f"ifSeqNo is unassigned, but primary term is [{term}]")
    if errors:
        raise ActionRequestValidation("Validation Failed: " + "".join(
            f"{n}: {e};" for n, e in enumerate(errors, 1)))
    out: dict[str, Any] = {}
    if seq_no is not None:
        out["if_seq_no"], out["if_primary_term"] = seq_no, term
    if external:
        out["version"], out["version_type"] = version, vtype
    return out
