"""``nested`` fields: each object of a nested array is a hidden child document of its parent.

Lucene indexes the children of a document just before it in the same segment (block join);
ours sit next to the parent too, in a :class:`NestedDocs` block of the parent's segment per
nested path — columns like a segment's (postings, doc values) plus, per child, the segment row
of its root document (``root``), the row of its enclosing nested object (``up``, multi-level
nesting) and its ``offset`` in the parent's array. The parent row's visibility is the
children's, so an update or a delete replaces or removes them with it, and a normal query never
sees a child: only the ``nested`` query, sort and aggregations read a block.

Parsing (``doc_parsing.py``) puts a document's children under :data:`NESTED_KEY` of its parsed
fields as ``[path, up, offset, fields]`` rows in document order (``up``: index of the enclosing
child row, -1 at the root).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import IllegalArgument, MapperParsing

NESTED_KEY = "\x00nested"
MAX_NESTED_FIELDS = 50          # index.mapping.nested_fields.limit
MAX_NESTED_OBJECTS = 10_000     # index.mapping.nested_objects.limit
SCORE_MODES = ("avg", "max", "min", "sum", "none")


@dataclass(frozen=True)
class NestedPath:
    """A ``nested`` object field of the mapping and its copy-up options."""

    path: str
    include_in_parent: bool = False
    include_in_root: bool = False
    parent: str = ""              # the enclosing nested path ("": the root document)


def nested_paths(props: dict[str, Any], prefix: str = "", parent: str = "",
                 out: dict[str, NestedPath] | None = None) -> dict[str, NestedPath]:
    """Every nested path of a ``properties`` tree, outermost first."""
    out = {} if out is None else out
    for name, spec in props.items():
        if not isinstance(spec, dict):
            continue
        path = prefix + name
        inner = parent
        if spec.get("type") == "nested":
            out[path] = NestedPath(path, _flag(spec, "include_in_parent", path),
                                   _flag(spec, "include_in_root", path), parent)
            inner = path
        if isinstance(spec.get("properties"), dict):
            nested_paths(spec["properties"], path + ".", inner, out)
    return out


def _flag(spec: dict[str, Any], key: str, path: str) -> bool:
    value = spec.get(key, False)
    if value in (True, "true"):
        return True
    if value in (False, "false"):
        return False
    raise MapperParsing(f"Failed to parse value [{value}] as only [true] or [false] are "
                        f"allowed.", es_type="mapper_parsing_exception")


def check_nested_mapping(props: dict[str, Any]) -> None:
    """``index.mapping.nested_fields.limit``: at most 50 nested fields per index."""
    n = len(nested_paths(props))
    if n > MAX_NESTED_FIELDS:
        raise IllegalArgument(f"Limit of nested fields [{MAX_NESTED_FIELDS}] has been exceeded")


def nested_path_of(field: str, paths: dict[str, NestedPath]) -> str:
    """The innermost nested path holding ``field`` ("" when it belongs to the root)."""
    best = ""
    for p in paths:
        if field.startswith(p + ".") and len(p) > len(best):
            best = p
    return best


def check_object_count(children: list[list[Any]]) -> None:
    if len(children) > MAX_NESTED_OBJECTS:
        raise MapperParsing(
            f"The number of nested documents has exceeded the allowed limit of "
            f"[{MAX_NESTED_OBJECTS}]. This limit can be set by changing the "
            f"[index.mapping.nested_objects.limit] index level setting.",
            es_type="document_parsing_exception")


class NestedDocs:
    """The children of one nested path in one segment (see the module docstring)."""

    def __init__(self, path: str, up_path: str, root: np.ndarray, up: np.ndarray,
                 offset: np.ndarray, fields: dict[str, Any]) -> None:
        self.path = path
        self.up_path = up_path
        self.n = len(root)
        self.root = root            # int32[m]: segment row of the root document
        self.up = up                # int32[m]: row in ``up_path``'s block (root row at level 1)
        self.offset = offset        # int32[m]: index in the parent's array
        self.fields = fields
        self.nested: dict[str, NestedDocs] = {}   # the segment's blocks (shared)
        self.segment: Any = None                   # the segment holding the block
        self.routing = None

    # a child reads as its root document where aggregations and inner hits need one
    @property
    def ids(self) -> np.ndarray:
        return self._of_root("ids")

    @property
    def seq(self) -> np.ndarray:
        return self._of_root("seq")

    @property
    def version(self) -> np.ndarray:
        return self._of_root("version")

    def _of_root(self, column: str) -> np.ndarray:
        """The root document's ``column`` per child: gathered once (O(m)), then kept — the
        columns never change."""
        got = self.__dict__.get("_" + column)
        if got is None:
            got = self.__dict__["_" + column] = getattr(self.segment, column)[self.root]
        return got  # type: ignore[no-any-return]

    @property
    def sources(self) -> ChildSources:
        return ChildSources(self)

    def rows_in(self, where: str) -> np.ndarray:
        """Each child's row among the documents of ``where`` ("" root, or an enclosing nested
        path). O(m) per level."""
        if where == "":
            return self.root
        if not self.path.startswith(where + "."):
            raise IllegalArgument(f"[nested] nested path [{self.path}] is not a child of "
                                  f"[{where}]")
        if self.n == 0:
            return self.up
        rows, block = self.up, self
        while block.up_path != where:
            block = self.nested[block.up_path]
            rows = block.up[rows]
        return rows

    def identity(self, i: int) -> dict[str, Any]:
        """``_nested`` of child ``i`` as Elasticsearch renders it: ``{field, offset}``, with
        an inner ``_nested`` per deeper level; fields relative to the enclosing level."""
        chain = self._chain(i)
        out: dict[str, Any] | None = None
        for k in range(len(chain) - 1, -1, -1):
            path, offset = chain[k]
            up = chain[k - 1][0] if k else ""
            node: dict[str, Any] = {"field": path[len(up) + 1:] if up else path,
                                    "offset": offset}
            if out is not None:
                node["_nested"] = out
            out = node
        assert out is not None
        return out

    def _chain(self, i: int) -> list[tuple[str, int]]:
        """``(path, offset)`` from the outermost level down to child ``i``."""
        chain, block, row = [], self, i
        while True:
            chain.append((block.path, int(block.offset[row])))
            if block.up_path == "":
                return chain[::-1]
            row = int(block.up[row])
            block = self.nested[block.up_path]

    def child_source(self, i: int) -> Any:
        """The object of child ``i`` inside its root document's ``_source``."""
        import orjson
        obj: Any = orjson.loads(self.segment.sources[int(self.root[i])])
        up = ""
        for path, offset in self._chain(i):
            obj = _get_path(obj, path[len(up) + 1:] if up else path)
            items = [x for x in (obj if isinstance(obj, list) else [obj]) if x is not None]
            obj = items[offset] if offset < len(items) else {}
            up = path
        return obj


class ChildSources:
    """``sources[i]``: the JSON bytes of child ``i``'s object (read from its root)."""

    def __init__(self, block: NestedDocs) -> None:
        self.block = block

    def __getitem__(self, i: int) -> bytes:
        import orjson
        return orjson.dumps(self.block.child_source(int(i)))

    def __len__(self) -> int:
        return self.block.n


def _get_path(obj: Any, path: str) -> Any:
    """``obj[path]`` where a dotted path may be spelled as objects or as one dotted key."""
    if not isinstance(obj, dict):
        return None
    if path in obj:
        return obj[path]
    head, _, rest = path.partition(".")
    return _get_path(obj.get(head), rest) if rest else None

def build_blocks(per_doc: list[dict[str, Any]],
                 make_fields: Callable[[list[dict[str, Any]], int], dict[str, Any]]
                 ) -> dict[str, NestedDocs]:
    """The nested blocks of a new segment whose documents parsed to ``per_doc``.

    ``make_fields(parsed_children, m)`` builds the columns the way a segment builds its own.
    Children keep document order, so each block is sorted by root row."""
    rows: dict[str, list[tuple[int, int, int, dict[str, Any]]]] = {}
    where: dict[tuple[int, int], tuple[str, int]] = {}   # (doc, child index) -> (path, row)
    ups: dict[str, str] = {}
    for doc, parsed in enumerate(per_doc):
        for k, (path, up, offset, fields) in enumerate(parsed.get(NESTED_KEY, ())):
            if up < 0:
                up_row, ups[path] = doc, ""
            else:
                ups[path], up_row = where[(doc, up)]
            block = rows.setdefault(path, [])
            where[(doc, k)] = (path, len(block))
            block.append((doc, up_row, offset, fields))
    blocks: dict[str, NestedDocs] = {}
    for path, entries in rows.items():
        m = len(entries)
        col = lambda i: np.fromiter((e[i] for e in entries), dtype=np.int32, count=m)  # noqa: E731
        blocks[path] = NestedDocs(path, ups[path], col(0), col(1), col(2),
                                  make_fields([e[3] for e in entries], m))
    return link(blocks)


def link(blocks: dict[str, NestedDocs]) -> dict[str, NestedDocs]:
    for b in blocks.values():
        b.nested = blocks
    return blocks


def merge_blocks(sources: list[Any], remaps: list[np.ndarray],
                 merge_fields: Callable[[list[tuple[Any, np.ndarray, np.ndarray]], int],
                                        dict[str, Any]]) -> dict[str, NestedDocs]:
    """The nested blocks of a merged segment: the children of the kept rows, renumbered.

    ``remaps[i]`` is the new row of each old row of source ``i`` (-1: dropped); outer levels
    are merged first so that deeper levels can follow their ``up`` rows. O(children)."""
    paths = list(dict.fromkeys(p for s in sources for p in s.nested))
    paths.sort(key=lambda p: p.count("."))
    out: dict[str, NestedDocs] = {}
    child_remaps: dict[str, list[np.ndarray]] = {}
    for path in paths:
        parts, roots, ups, offsets, new_maps, up_path, base = [], [], [], [], [], "", 0
        for i, s in enumerate(sources):
            b = s.nested.get(path)
            if b is None:
                new_maps.append(np.zeros(0, dtype=np.int64))
                continue
            up_path = b.up_path
            up_map = remaps[i] if up_path == "" else child_remaps[up_path][i]
            new_up = up_map[b.up] if b.n else np.zeros(0, dtype=np.int64)
            keep = np.flatnonzero(new_up >= 0)
            m = np.full(b.n, -1, dtype=np.int64)
            m[keep] = np.arange(base, base + len(keep))
            base += len(keep)
            new_maps.append(m)
            parts.append((b.fields, keep, m))
            roots.append(remaps[i][b.root[keep]])
            ups.append(new_up[keep])
            offsets.append(b.offset[keep])
        child_remaps[path] = new_maps
        if base:
            cat = lambda xs: np.concatenate(xs).astype(np.int32)  # noqa: E731
            out[path] = NestedDocs(path, up_path, cat(roots), cat(ups), cat(offsets),
                                   merge_fields(parts, base))
    return link(out)


def join_scores(child_rows: np.ndarray, child_scores: np.ndarray, n: int, mode: str
                ) -> tuple[np.ndarray, np.ndarray]:
    """``(mask, scores)`` over ``n`` parents from matching children and their parent rows:
    ``score_mode`` as Lucene's ``ToParentBlockJoinQuery`` (``none``: 0). O(m) NumPy."""
    mask = np.zeros(n, dtype=bool)
    mask[child_rows] = True
    if mode == "none" or not len(child_rows):
        return mask, np.zeros(n, dtype=np.float32)
    s = child_scores.astype(np.float64)
    if mode == "max":
        out = np.full(n, -np.inf)
        np.maximum.at(out, child_rows, s)
    elif mode == "min":
        out = np.full(n, np.inf)
        np.minimum.at(out, child_rows, s)
    else:
        out = np.zeros(n)
        np.add.at(out, child_rows, s)
        if mode == "avg":
            out = out / np.maximum(np.bincount(child_rows, minlength=n), 1)
    out[~mask] = 0
    return mask, out.astype(np.float32)


def doc_sets(seg: Any, vis: np.ndarray) -> list[tuple[str, dict[str, Any], np.ndarray]]:
    """``(path, columns, visible)`` of a segment's documents ("") and of each nested path's
    children (visible with their root document)."""
    out: list[tuple[str, dict[str, Any], np.ndarray]] = [("", seg.fields, vis)]
    for path, block in seg.nested.items():
        out.append((path, block.fields, vis[block.root]))
    return out
