"""A runner for Elasticsearch's YAML REST tests (``rest-api-spec`` format), against any HTTP server.

Why here: the proof of compatibility is that tests nobody here wrote pass unchanged. This module
holds the runner's logic — loading files, the stash, path lookup, assertions, ``skip``/``requires``
and the table mapping ``do`` API names to HTTP calls — and depends only on ``yaml``, ``orjson``
and an ``httpx.Client``, so its pure parts are unit-tested without a server
(``tests/test_yamlrunner.py``).

The format (summarised from ES ``rest-api-spec/test/README.asciidoc``): a file is a YAML stream of
one-key documents: ``setup``, ``teardown`` and one per test, each a list of one-key steps
(``do``, ``set``, ``match``, ``length``, ``is_true``, ``is_false``, ``exists``, ``gt``/``gte``/
``lt``/``lte``, ``close_to``, ``contains``, ``skip``, ``requires``). Per test: run setup, run the
steps with a fresh stash, run teardown, then delete every index.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import yaml

SERVER_VERSION = (8, 15, 0)

#: Runner capabilities (``skip.features`` / ``requires.test_runner_features``) we implement.
#: Warning headers are accepted and ignored; ``node_selector`` is ignored (one node).
FEATURES = frozenset({
    "headers", "contains", "close_to", "stash_in_path", "stash_in_key", "embedded_stash_key",
    "arbitrary_key", "warnings", "warnings_regex", "allowed_warnings", "allowed_warnings_regex",
    "node_selector", "default_shards", "catch_unauthorized", "stash_path_replace",
})

_MISSING = object()


class RunnerError(AssertionError):
    """A test failed: an assertion did not hold or a step could not run."""


class UnknownApi(RunnerError):
    """The ``do`` step names an API the hand table does not map."""


class SkipTest(Exception):
    """The test asks to be skipped (``skip`` / ``requires``); carries the reason."""


# --------------------------------------------------------------------------- loading


@dataclass
class YamlTest:
    """One test of a file: its own steps plus the file's setup and teardown."""

    rel: str          # file path relative to the conformance folder, with "/"
    name: str
    steps: list[Any]
    setup: list[Any] = field(default_factory=list)
    teardown: list[Any] = field(default_factory=list)

    @property
    def key(self) -> str:
        """``relative/file.yml::test name``, the key of the expected-failure list."""
        return f"{self.rel}::{self.name}"


class _Loader(yaml.SafeLoader):
    """YAML as ES's runner reads it: unquoted dates stay strings (no ``datetime`` values)."""


_Loader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def parse_suite(text: str, rel: str) -> list[YamlTest]:
    """The tests of one YAML stream; top-level keys of all documents merged (keys stripped)."""
    setup: list[Any] = []
    teardown: list[Any] = []
    tests: list[tuple[str, list[Any]]] = []
    for doc in yaml.load_all(text, Loader=_Loader):
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise RunnerError(f"{rel}: a document must be a map, got {type(doc).__name__}")
        for raw_key, steps in doc.items():
            key = str(raw_key).strip()
            steps = list(steps or [])
            if key == "setup":
                setup = steps
            elif key == "teardown":
                teardown = steps
            else:
                tests.append((key, steps))
    return [YamlTest(rel, name, steps, setup, teardown) for name, steps in tests]


def collect(root: Path) -> list[YamlTest]:
    """Every test of every ``*.yml``/``*.yaml`` under ``root``, in a stable order."""
    out: list[YamlTest] = []
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".yml", ".yaml"))
    for path in files:
        rel = path.relative_to(root).as_posix()
        out.extend(parse_suite(path.read_text(encoding="utf-8"), rel))
    return out


# --------------------------------------------------------------------------- stash and paths


def split_path(path: str) -> list[str]:
    """``a.b\\.c.0`` -> ``["a", "b.c", "0"]``; the empty path is the whole body."""
    if path == "":
        return []
    parts: list[str] = []
    cur: list[str] = []
    i = 0
    while i < len(path):
        ch = path[i]
        if ch == "\\" and i + 1 < len(path) and path[i + 1] == ".":
            cur.append(".")
            i += 2
            continue
        if ch == ".":
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    parts.append("".join(cur))
    return parts


_BRACED = re.compile(r"\$\{([^}]+)\}")
_BARE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


class Stash:
    """Values saved by ``set`` and the last response body (``$body``), reset per test."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.body: Any = None

    def clear(self) -> None:
        self.values.clear()
        self.body = None

    def __setitem__(self, key: str, value: Any) -> None:
        self.values[key] = value

    def has(self, name: str) -> bool:
        return name == "body" or name.startswith("body.") or name in self.values

    def get(self, name: str) -> Any:
        """``$name`` without the ``$``: a stashed value, ``body`` or ``body.<path>``."""
        if name in self.values:
            return self.values[name]
        if name == "body":
            return self.body
        if name.startswith("body."):
            return lookup(self.body, name[len("body."):], self)
        head, _, rest = name.partition(".")
        if rest and head in self.values:
            return lookup(self.values[head], rest, self)
        raise RunnerError(f"stashed value not found for key [${name}]")

    def resolve(self, value: Any) -> Any:
        """Replace stash references anywhere in ``value`` (maps, keys, lists, strings).

        A string that is exactly ``$name`` or ``${name}`` becomes the stashed value with its type;
        inside a larger string (e.g. a JSON line of a bulk body) ``${name}`` and ``$name`` are
        replaced by the value's text — ``$name`` only when ``name`` is stashed.
        """
        if isinstance(value, dict):
            return {self._resolve_key(k): self.resolve(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, str):
            return self._resolve_str(value)
        return value

    def _resolve_key(self, key: Any) -> Any:
        if isinstance(key, str) and "$" in key:
            return _text(self._resolve_str(key))
        return key

    def _resolve_str(self, s: str) -> Any:
        if "$" not in s:
            return s
        m = _BRACED.fullmatch(s)
        if m:
            return self.get(m.group(1))
        if s.startswith("$") and not s.startswith("${") and self.has(s[1:]):
            return self.get(s[1:])
        if s.startswith("$") and _BARE.fullmatch(s):
            return self.get(s[1:])  # a bare reference that is not stashed: a clear error
        s = _BRACED.sub(lambda m: _text(self.get(m.group(1))), s)
        return _BARE.sub(lambda m: _text(self.get(m.group(1))) if m.group(1) in self.values
                         else m.group(0), s)


def _text(value: Any) -> str:
    """A stashed value spliced into a string (JSON for structures, ``true`` for booleans)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def lookup(body: Any, path: str, stash: Stash | None = None) -> Any:
    """The value at a dotted path (``hits.hits.0._id``), ``None`` if absent.

    Numeric segments index lists; ``\\.`` escapes a dot; a ``$name`` segment is replaced by a
    stashed value; ``_arbitrary_key_`` picks the first key of a map.
    """
    found = lookup_opt(body, path, stash)
    return None if found is _MISSING else found


def lookup_opt(body: Any, path: str, stash: Stash | None = None) -> Any:
    """Like :func:`lookup` but returns the module's ``_MISSING`` sentinel for an absent path."""
    cur = body
    for part in split_path(path):
        if stash is not None and part.startswith("$"):
            part = _text(stash.resolve(part))
        if isinstance(cur, dict):
            if part == "_arbitrary_key_":
                if not cur:
                    return _MISSING
                return next(iter(cur))
            if part not in cur:
                return _MISSING
            cur = cur[part]
        elif isinstance(cur, list):
            try:
                idx = int(part)
            except ValueError:
                return _MISSING
            if not -len(cur) <= idx < len(cur):
                return _MISSING
            cur = cur[idx]
        else:
            return _MISSING
    return cur


def is_missing(value: Any) -> bool:
    return value is _MISSING


# --------------------------------------------------------------------------- skip / requires


def parse_version(text: str) -> tuple[int, ...]:
    """``"8.15.0"`` -> ``(8, 15, 0)``; suffixes such as ``-SNAPSHOT`` are ignored."""
    nums = re.findall(r"\d+", text.strip().split("-")[0])
    if not nums:
        raise RunnerError(f"bad version [{text}]")
    return tuple(int(n) for n in nums[:3]) + (0,) * (3 - len(nums[:3]))


def version_in_ranges(spec: str, version: tuple[int, ...] = SERVER_VERSION) -> bool:
    """Whether ``version`` is in a skip spec: ``"all"``, ``"a - b"`` (open ends allowed), or a
    comma-separated list of those."""
    spec = str(spec).strip()
    if spec.lower() == "all":
        return True
    for item in spec.split(","):
        item = item.strip()
        if not item:
            continue
        if "-" not in item.replace("-SNAPSHOT", ""):
            if parse_version(item) == version:
                return True
            continue
        lo_text, _, hi_text = item.partition(" - ") if " - " in item else item.partition("-")
        lo = parse_version(lo_text) if lo_text.strip() else (0, 0, 0)
        hi = parse_version(hi_text) if hi_text.strip() else (10**9, 0, 0)
        if lo <= version <= hi:
            return True
    return False


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


_GTE_FEATURE = re.compile(r"gte_v(\d+\.\d+\.\d+)")


def cluster_feature_met(name: str, version: tuple[int, ...] = SERVER_VERSION) -> bool:
    """Synthetic version features ``gte_vX.Y.Z`` hold when X.Y.Z <= our version; named
    cluster features we do not claim."""
    m = _GTE_FEATURE.fullmatch(str(name).strip())
    return bool(m) and parse_version(m.group(1)) <= version


def skip_reason(step: dict[str, Any], version: tuple[int, ...] = SERVER_VERSION,
                features: frozenset[str] = FEATURES) -> str | None:
    """Why a ``skip``/``requires`` step skips the test, or ``None`` when it runs."""
    (kind, spec), = step.items()
    spec = spec or {}
    reason = spec.get("reason", "")
    if kind == "skip":
        missing = [f for f in _as_list(spec.get("features")) if f not in features]
        if missing:
            return f"runner lacks features {missing}"
        if "version" in spec and version_in_ranges(spec["version"], version):
            return f"version {'.'.join(map(str, version))} in [{spec['version']}]: {reason}"
        if spec.get("awaits_fix"):
            return f"awaits fix: {spec['awaits_fix']}"
        for f in _as_list(spec.get("cluster_features")):
            if cluster_feature_met(f, version):
                return f"cluster feature [{f}] present: {reason}"
        if spec.get("known_issues"):
            return f"known issues: {reason}"
        return None
    if kind == "requires":
        missing = [f for f in _as_list(spec.get("test_runner_features")) if f not in features]
        if missing:
            return f"runner lacks features {missing}"
        unmet = [f for f in _as_list(spec.get("cluster_features"))
                 if not cluster_feature_met(f, version)]
        if unmet:
            return f"cluster features {unmet} not met: {reason}"
        return None
    raise RunnerError(f"not a skip step: {kind}")


# --------------------------------------------------------------------------- APIs


@dataclass(frozen=True)
class Route:
    """One way to call an API: the HTTP method(s) (body-less first) and a path template."""

    methods: tuple[str, ...]
    path: str

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(re.findall(r"\{(\w+)\}", self.path))


def _r(methods: str, *paths: str) -> list[Route]:
    return [Route(tuple(methods.split("|")), p) for p in paths]


#: ``do`` API name -> routes, most specific first (the first whose parts are all given wins).
#: Names and paths as in ES's ``rest-api-spec/api/*.json`` (OpenSearch's for the PIT names).
APIS: dict[str, list[Route]] = {
    "info": _r("GET", "/"),
    "ping": _r("HEAD", "/"),
    "search": _r("GET|POST", "/{index}/_search", "/_search"),
    "count": _r("GET|POST", "/{index}/_count", "/_count"),
    "field_caps": _r("GET|POST", "/{index}/_field_caps", "/_field_caps"),
    "msearch": _r("GET|POST", "/{index}/_msearch", "/_msearch"),
    "index": _r("PUT", "/{index}/_doc/{id}") + _r("POST", "/{index}/_doc"),
    "create": _r("PUT", "/{index}/_create/{id}"),
    "get": _r("GET", "/{index}/_doc/{id}"),
    "exists": _r("HEAD", "/{index}/_doc/{id}"),
    "get_source": _r("GET", "/{index}/_source/{id}"),
    "delete": _r("DELETE", "/{index}/_doc/{id}"),
    "update": _r("POST", "/{index}/_update/{id}"),
    "mget": _r("GET|POST", "/{index}/_mget", "/_mget"),
    "bulk": _r("POST", "/{index}/_bulk", "/_bulk"),
    "delete_by_query": _r("POST", "/{index}/_delete_by_query"),
    "explain": _r("GET|POST", "/{index}/_explain/{id}"),
    "scroll": _r("GET|POST", "/_search/scroll"),
    "clear_scroll": _r("DELETE", "/_search/scroll"),
    "open_point_in_time": _r("POST", "/{index}/_pit"),
    "close_point_in_time": _r("DELETE", "/_pit"),
    "create_pit": _r("POST", "/{index}/_search/point_in_time"),
    "delete_pit": _r("DELETE", "/_search/point_in_time"),
    "get_all_pits": _r("GET", "/_search/point_in_time/_all"),
    "delete_all_pits": _r("DELETE", "/_search/point_in_time/_all"),
    "indices.create": _r("PUT", "/{index}"),
    "indices.delete": _r("DELETE", "/{index}"),
    "indices.get": _r("GET", "/{index}"),
    "indices.exists": _r("HEAD", "/{index}"),
    "indices.refresh": _r("POST|GET", "/{index}/_refresh", "/_refresh"),
    "indices.get_mapping": _r("GET", "/{index}/_mapping", "/_mapping"),
    "indices.put_mapping": _r("PUT|POST", "/{index}/_mapping"),
    "indices.get_settings": _r("GET", "/{index}/_settings/{name}", "/{index}/_settings",
                               "/_settings/{name}", "/_settings"),
    "indices.put_settings": _r("PUT", "/{index}/_settings", "/_settings"),
    "cluster.health": _r("GET", "/_cluster/health/{index}", "/_cluster/health"),
    "cluster.put_settings": _r("PUT", "/_cluster/settings"),
    "cluster.get_settings": _r("GET", "/_cluster/settings"),
    "indices.put_alias": _r("PUT|POST", "/{index}/_alias/{name}", "/_alias/{name}",
                            "/{index}/_alias", "/_alias"),
    "indices.get_alias": _r("GET", "/{index}/_alias/{name}", "/_alias/{name}",
                            "/{index}/_alias", "/_alias"),
    "indices.exists_alias": _r("HEAD", "/{index}/_alias/{name}", "/_alias/{name}"),
    "indices.delete_alias": _r("DELETE", "/{index}/_alias/{name}"),
    "indices.update_aliases": _r("POST", "/_aliases"),
    "indices.open": _r("POST", "/{index}/_open"),
    "indices.close": _r("POST", "/{index}/_close"),
    "indices.stats": _r("GET", "/{index}/_stats/{metric}", "/_stats/{metric}",
                        "/{index}/_stats", "/_stats"),
    "cat.aliases": _r("GET", "/_cat/aliases/{name}", "/_cat/aliases"),
    "cat.count": _r("GET", "/_cat/count/{index}", "/_cat/count"),
    "cat.health": _r("GET", "/_cat/health"),
    "cat.nodes": _r("GET", "/_cat/nodes"),
    "cat.segments": _r("GET", "/_cat/segments/{index}", "/_cat/segments"),
    "cat.indices": _r("GET", "/_cat/indices/{index}", "/_cat/indices"),
    "cat.shards": _r("GET", "/_cat/shards/{index}", "/_cat/shards"),
}

#: APIs whose list/string body is NDJSON.
NDJSON_APIS = frozenset({"bulk", "msearch"})


@dataclass
class HttpCall:
    """A ``do`` step resolved to one HTTP request."""

    method: str
    path: str
    params: dict[str, str]
    body: bytes | None
    headers: dict[str, str]


def param_text(value: Any) -> str:
    """A query-string or path value as ES clients send it: lists comma-joined, ``true``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(param_text(v) for v in value)
    return str(value)


def encode_body(api: str, body: Any) -> tuple[bytes | None, str]:
    """The request bytes and content type; lists (and bulk/msearch strings) become NDJSON."""
    if body is None:
        return None, "application/json"
    if isinstance(body, list):
        lines = [b if isinstance(b, str) else json.dumps(b) for b in body]
        return ("\n".join(lines) + "\n").encode(), "application/x-ndjson"
    if isinstance(body, str):
        if api in NDJSON_APIS:
            text = body if body.endswith("\n") else body + "\n"
            return text.encode(), "application/x-ndjson"
        return body.encode(), "application/json"
    return json.dumps(body).encode(), "application/json"


def build_call(api: str, args: dict[str, Any], headers: dict[str, str] | None = None) -> HttpCall:
    """Map a resolved ``do`` step (API name + params) onto method, path, query and body."""
    routes = APIS.get(api)
    if routes is None:
        raise UnknownApi(f"unknown API [{api}]: not in the runner's table (tests/yamlrunner.py "
                         "APIS); add its method and path to run this test")
    args = dict(args)
    body = args.pop("body", None)
    for route in routes:
        if all(p in args and args[p] is not None for p in route.parts):
            break
    else:
        needed = sorted({p for r in routes for p in r.parts})
        raise RunnerError(f"API [{api}] needs path parts {needed}, got {sorted(args)}")
    path = route.path
    for part in route.parts:
        path = path.replace("{" + part + "}", quote(param_text(args.pop(part)), safe=",*"))
    payload, ctype = encode_body(api, body)
    if payload is not None and len(route.methods) > 1 and "POST" in route.methods:
        method = "POST"
    else:
        method = route.methods[0]
    params = {k: param_text(v) for k, v in args.items() if v is not None}
    hdrs = {"Content-Type": ctype} if payload is not None else {}
    hdrs.update(headers or {})
    return HttpCall(method, path, params, payload, hdrs)


# --------------------------------------------------------------------------- responses


@dataclass
class Response:
    status: int
    body: Any
    text: str


#: ``catch`` names -> HTTP status (``request`` is any other error status).
CATCHES = {"bad_request": 400, "unauthorized": 401, "forbidden": 403, "missing": 404,
           "request_timeout": 408, "conflict": 409, "unavailable": 503}


def java_text(value: Any) -> str:
    """A value as Java's ``Map.toString`` prints it: what ES matches ``catch: /regex/`` against."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={java_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(java_text(v) for v in value) + "]"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def check_catch(catch: str, resp: Response) -> None:
    """Whether the error response is the one the ``catch`` expects; raise if not."""
    status = resp.status
    if catch in CATCHES:
        if status != CATCHES[catch]:
            raise RunnerError(f"expected [{catch}] ({CATCHES[catch]}) but got {status}: "
                              f"{resp.text[:2000]}")
        return
    if catch == "request":
        if status < 400 or status in CATCHES.values():
            raise RunnerError(f"expected a generic request error (4xx/5xx other than "
                              f"{sorted(CATCHES.values())}) but got {status}: {resp.text[:2000]}")
        return
    if catch == "param":
        if status < 400:
            raise RunnerError(f"expected a parameter error but got {status}")
        return
    if len(catch) > 2 and catch.startswith("/") and catch.endswith("/"):
        if status < 400:
            raise RunnerError(f"expected an error matching {catch} but got {status}: "
                              f"{resp.text[:2000]}")
        error = resp.body.get("error") if isinstance(resp.body, dict) else None
        subject = java_text(error) if error is not None else resp.text
        regex = catch[1:-1]
        if not (re.search(regex, subject) or re.search(regex, resp.text)):
            raise RunnerError(f"error did not match {catch}: {resp.text[:2000]}")
        return
    raise RunnerError(f"unknown catch [{catch}]")


# --------------------------------------------------------------------------- assertions


def values_equal(actual: Any, expected: Any) -> bool:
    """Deep equality as ES's ``match``: numbers compare by value, booleans are not numbers."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return float(actual) == float(expected) if (isinstance(actual, float) or
                                                    isinstance(expected, float)) \
            else actual == expected
    if isinstance(expected, dict):
        return (isinstance(actual, dict) and actual.keys() == expected.keys()
                and all(values_equal(actual[k], expected[k]) for k in expected))
    if isinstance(expected, list):
        return (isinstance(actual, list) and len(actual) == len(expected)
                and all(values_equal(a, e) for a, e in zip(actual, expected)))
    if expected is None:
        return actual is None
    return type(actual) is type(expected) and actual == expected


def _is_truthy(value: Any) -> bool:
    if value is None or value is _MISSING:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value != 0
    if isinstance(value, str):
        return value.lower() not in ("", "false", "0")
    return True


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise RunnerError(f"{what} is not a number: {value!r}")
    try:
        return float(value)
    except ValueError:
        raise RunnerError(f"{what} is not a number: {value!r}") from None


_COMPARE: dict[str, Callable[[float, float], bool]] = {
    "gt": lambda a, b: a > b, "gte": lambda a, b: a >= b,
    "lt": lambda a, b: a < b, "lte": lambda a, b: a <= b,
}


def _actual(path: str, stash: Stash) -> Any:
    """The value an assertion checks: a path in the last body, or a ``$stashed`` value."""
    if path.startswith("$"):
        return stash.resolve(path)
    return lookup_opt(stash.body, path, stash)


def _show(value: Any) -> str:
    return "<missing>" if value is _MISSING else repr(value)


def run_assertion(kind: str, spec: Any, stash: Stash) -> None:
    """Check one assertion step against the last response; raise :class:`RunnerError`."""
    if kind in ("is_true", "is_false", "exists"):
        path = str(spec) if spec is not None else ""
        actual = _actual(path, stash)
        if kind == "is_true" and not _is_truthy(actual):
            raise RunnerError(f"is_true [{path}]: got {_show(actual)}")
        if kind == "is_false" and _is_truthy(actual):
            raise RunnerError(f"is_false [{path}]: got {_show(actual)}")
        if kind == "exists" and (actual is _MISSING or actual is None):
            raise RunnerError(f"exists [{path}]: missing")
        return
    if not isinstance(spec, dict) or not spec:
        raise RunnerError(f"{kind} expects a map, got {spec!r}")
    items = list(spec.items())
    if kind == "match" and len(items) == 2 and any(k == "epsilon" for k, _ in items):
        (path, expected), = [(k, v) for k, v in items if k != "epsilon"]
        eps = float(spec["epsilon"])
        actual = _actual(str(path), stash)
        exp = stash.resolve(expected)
        if abs(_number(actual, str(path)) - _number(exp, "expected")) > eps:
            raise RunnerError(f"match [{path}]: {_show(actual)} not within {eps} of {exp!r}")
        return
    for path, expected in items:
        path = str(path)
        actual = _actual(path, stash)
        expected = stash.resolve(expected)
        where = f"{kind} [{path}]"
        if kind == "match":
            _match(where, actual, expected)
        elif kind == "length":
            if actual is _MISSING or not isinstance(actual, (list, dict, str)):
                raise RunnerError(f"{where}: no list/map/string there, got {_show(actual)}")
            if len(actual) != int(expected):
                raise RunnerError(f"{where}: length {len(actual)} != {expected}: {actual!r}"[:3000])
        elif kind in _COMPARE:
            if actual is _MISSING or actual is None:
                raise RunnerError(f"{where}: missing")
            if not _COMPARE[kind](_number(actual, where), _number(expected, "expected")):
                raise RunnerError(f"{where}: {actual!r} is not {kind} {expected!r}")
        elif kind == "close_to":
            if not isinstance(expected, dict) or "value" not in expected:
                raise RunnerError(f"{where}: expects {{value, error}}")
            err = float(expected.get("error", 0.0))
            if abs(_number(actual, where) - float(expected["value"])) > err:
                raise RunnerError(f"{where}: {actual!r} not within {err} of {expected['value']}")
        elif kind == "contains":
            if isinstance(actual, list):
                if not any(_contains_item(a, expected) for a in actual):
                    raise RunnerError(f"{where}: {expected!r} not in {actual!r}"[:3000])
            elif isinstance(actual, str):
                if str(expected) not in actual:
                    raise RunnerError(f"{where}: {expected!r} not in {actual!r}")
            else:
                raise RunnerError(f"{where}: not a list or string: {_show(actual)}")
        else:
            raise RunnerError(f"unknown assertion [{kind}]")


def _contains_item(actual: Any, expected: Any) -> bool:
    """``contains`` with a map: the list item has at least those entries (ES semantics)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        return all(k in actual and values_equal(actual[k], v) for k, v in expected.items())
    return values_equal(actual, expected)


def _match(where: str, actual: Any, expected: Any) -> None:
    if isinstance(expected, str):
        e = expected.strip()
        if len(e) > 2 and e.startswith("/") and e.endswith("/"):
            if not isinstance(actual, str):
                raise RunnerError(f"{where}: expected a string to match {e}, got {_show(actual)}")
            if not re.search(e[1:-1], actual, re.VERBOSE):
                raise RunnerError(f"{where}: {actual!r} does not match {e}")
            return
    if expected is None:
        if actual is not None and actual is not _MISSING:
            raise RunnerError(f"{where}: expected null, got {actual!r}")
        return
    if actual is _MISSING or actual is None:
        raise RunnerError(f"{where}: missing (expected {expected!r})")
    if not values_equal(actual, expected):
        raise RunnerError(f"{where}: got {actual!r}, expected {expected!r}"[:3000])


# --------------------------------------------------------------------------- executing


#: Keys of a ``do`` map that are runner directives, not API calls.
DO_DIRECTIVES = {"catch", "headers", "warnings", "warnings_regex", "allowed_warnings",
                 "allowed_warnings_regex", "node_selector"}


class Runner:
    """Runs YAML tests over an ``httpx.Client`` whose ``base_url`` is the server."""

    def __init__(self, client: Any, version: tuple[int, ...] = SERVER_VERSION) -> None:
        self.client = client
        self.version = version
        self.stash = Stash()
        self.clean = False      # True right after a wipe that deleted every index it listed

    # -- the ES runner's per-test life cycle
    def run(self, test: YamlTest) -> None:
        """Setup, steps, teardown, then delete every index; raise :class:`SkipTest` to skip."""
        for steps in (test.setup, test.steps):
            reason = self.leading_skip(steps)
            if reason:
                raise SkipTest(reason)
        if not self.clean:
            self.wipe()
        self.clean = False
        try:
            self.stash.clear()
            self.run_steps(test.setup, "setup")
            self.stash.clear()
            self.run_steps(test.steps, "test")
        finally:
            try:
                self.run_steps(test.teardown, "teardown")
            finally:
                self.wipe()

    def leading_skip(self, steps: list[Any]) -> str | None:
        for step in steps:
            if not isinstance(step, dict) or len(step) != 1:
                break
            kind = next(iter(step))
            if kind not in ("skip", "requires"):
                break
            reason = skip_reason(step, self.version)
            if reason:
                return reason
        return None

    def wipe(self) -> None:
        """Delete every index, as ES's runner does between tests. The runner is the server's
        only writer between its tests, so a wipe that deleted all it listed leaves the next test
        nothing to wipe first (one listing per test, not two)."""
        resp = self.client.get("/_cat/indices", params={"format": "json"})
        if resp.status_code != 200:
            return
        statuses = [self.client.delete("/" + quote(str(row["index"]), safe="")).status_code
                    for row in resp.json()]
        self.clean = all(s == 200 for s in statuses)

    def run_steps(self, steps: Iterable[Any], phase: str) -> None:
        for n, step in enumerate(steps):
            if not isinstance(step, dict) or len(step) != 1:
                raise RunnerError(f"{phase} step {n}: a step is a one-key map, got {step!r}")
            (kind, spec), = step.items()
            try:
                self.run_step(kind, spec)
            except SkipTest:
                raise
            except UnknownApi:
                raise
            except RunnerError as e:
                raise RunnerError(f"{phase} step {n} ({kind}): {e}") from None

    def run_step(self, kind: str, spec: Any) -> None:
        if kind in ("skip", "requires"):
            return  # leading skips were decided before running
        if kind == "do":
            self.do(spec)
        elif kind == "set":
            for path, name in (spec or {}).items():
                value = _actual(str(path), self.stash)
                if value is _MISSING:
                    raise RunnerError(f"set: no value at [{path}]")
                self.stash[str(name)] = value
        else:
            run_assertion(kind, spec, self.stash)

    def do(self, spec: dict[str, Any]) -> Response:
        """One API call; with ``catch`` the error is expected, else any error fails."""
        spec = dict(spec or {})
        catch = spec.pop("catch", None)
        headers = {str(k): str(v) for k, v in (spec.pop("headers", None) or {}).items()}
        for d in DO_DIRECTIVES:
            spec.pop(d, None)
        if len(spec) != 1:
            raise RunnerError(f"do: expected exactly one API, got {sorted(spec)}")
        (api, args), = spec.items()
        args = self.stash.resolve(dict(args or {}))
        ignore = {int(x) for x in _as_list(args.pop("ignore", None))}
        call = build_call(api, args, self.stash.resolve(headers))
        resp = self.send(call)
        self.stash.body = resp.body
        if catch is not None:
            check_catch(str(catch), resp)
        elif resp.status >= 400 and resp.status not in ignore and not (
                call.method == "HEAD" and resp.status == 404):
            raise RunnerError(f"{api} -> {call.method} {call.path} {call.params}: "
                              f"HTTP {resp.status}: {resp.text[:2000]}")
        return resp

    def send(self, call: HttpCall) -> Response:
        r = self.client.request(call.method, call.path, params=call.params, content=call.body,
                                headers=call.headers)
        text = r.text
        if call.method == "HEAD":
            return Response(r.status_code, 200 <= r.status_code < 300, text)
        body: Any = text
        if "json" in r.headers.get("content-type", "") and text:
            try:
                body = json.loads(text)
            except ValueError:
                body = text
        return Response(r.status_code, body, text)
