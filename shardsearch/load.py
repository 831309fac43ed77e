"""``shardsearch load FILE|-``: bulk-load NDJSON into a running service, with progress.

Talks to the service over HTTP (``--url``, default ``http://127.0.0.1:9200``) exactly as any
Elasticsearch client would — ``_bulk`` in batches — so it also loads into Elasticsearch or
OpenSearch. Every failed item and every unreadable line is counted and the first few are printed;
the exit status is non-zero when anything failed, so a script never mistakes a partial load for
a complete one.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

from shardsearch.cluster.documents.ndjson_file import BadLine, Item, Source, bulk_body, items

SHOWN_ERRORS = 10


@dataclass
class Tally:
    """What a load did: printed at the end, and the exit status."""
    docs: int = 0
    errors: int = 0
    samples: list[str] = field(default_factory=list)

    def fail(self, where: str, reason: str) -> None:
        self.errors += 1
        if len(self.samples) < SHOWN_ERRORS:
            self.samples.append(f"{where}: {reason}")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="NDJSON file (gzipped or not), or '-' for standard input; "
                                "one document per line, or _bulk action/source pairs")
    p.add_argument("--index", default=None,
                   help="target index (needed for plain documents; fills a missing _index "
                        "in action lines)")
    p.add_argument("--id-field", default=None, help="take each document's _id from this field")
    p.add_argument("--shards", type=int, default=None,
                   help="create the index with this many shards first (if it does not exist)")
    p.add_argument("--batch-size", type=int, default=1000, help="documents per _bulk request")
    p.add_argument("--url", default="http://127.0.0.1:9200", help="the service's address")
    p.add_argument("--api-key", default=None, help="an API key (Authorization: ApiKey ...)")
    p.add_argument("--user", default=None, help="USER:PASSWORD for basic authentication")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def main(args: argparse.Namespace) -> int:
    """Entry point of ``shardsearch load``."""
    if args.batch_size < 1:
        print("shardsearch load: --batch-size must be at least 1", file=sys.stderr)
        return 2
    try:
        source = Source(args.file)
    except OSError as e:
        print(f"shardsearch load: {e}", file=sys.stderr)
        return 2
    with _client(args) as client:
        try:
            _prepare_index(client, args)
        except (httpx.HTTPError, RuntimeError) as e:
            print(f"shardsearch load: {e}", file=sys.stderr)
            return 1
        t0 = time.perf_counter()
        tally = _load(client, source, args)
        if args.index:
            client.post(f"/{args.index}/_refresh")
        seconds = time.perf_counter() - t0
    source.close()
    rate = tally.docs / seconds if seconds > 0 else 0.0
    print(f"loaded {tally.docs:,} documents in {seconds:.1f} s ({rate:,.0f} docs/s); "
          f"{tally.errors:,} errors", file=sys.stderr)
    for line in tally.samples:
        print(f"  {line}", file=sys.stderr)
    return 1 if tally.errors else 0


def _client(args: argparse.Namespace) -> httpx.Client:
    headers = {}
    if args.api_key:
        headers["authorization"] = f"ApiKey {args.api_key}"
    auth = tuple(args.user.split(":", 1)) if args.user else None
    return httpx.Client(base_url=args.url, headers=headers, auth=auth, timeout=300)  # type: ignore


def _prepare_index(client: httpx.Client, args: argparse.Namespace) -> None:
    """Create the index with ``--shards`` when asked and it does not exist yet."""
    if args.shards is None:
        return
    if not args.index:
        raise RuntimeError("--shards needs --index")
    if client.head(f"/{args.index}").status_code == 200:
        return
    r = client.put(f"/{args.index}", json={"settings": {"number_of_shards": args.shards}})
    if r.status_code != 200:
        raise RuntimeError(f"could not create [{args.index}]: {r.text[:500]}")


def _load(client: httpx.Client, source: Source, args: argparse.Namespace) -> Tally:
    tally, batch = Tally(), []
    bar = _progress(source, args.no_progress)
    path = f"/{args.index}/_bulk" if args.index else "/_bulk"
    for it in items(source.lines(), args.index, args.id_field):
        if isinstance(it, BadLine):
            tally.fail(f"line {it.line}", it.reason)
            continue
        if not args.index and "_index" not in next(iter(it.action.values())):
            tally.fail(f"line {it.line}", "no index: pass --index or put _index in the action")
            continue
        batch.append(it)
        if len(batch) >= args.batch_size:
            _send(client, path, batch, tally)
            batch = []
            _advance(bar, source, tally)
    if batch:
        _send(client, path, batch, tally)
    _advance(bar, source, tally)
    if bar is not None:
        bar.close()
    return tally


def _send(client: httpx.Client, path: str, batch: list[Item], tally: Tally) -> None:
    r = client.post(path, content=bulk_body(batch),
                    headers={"content-type": "application/x-ndjson"})
    if r.status_code != 200:
        for it in batch:
            tally.fail(f"line {it.line}", f"_bulk answered {r.status_code}: {r.text[:300]}")
        return
    for it, entry in zip(batch, orjson.loads(r.content)["items"]):
        result = next(iter(entry.values()))
        if "error" in result:
            err = result["error"]
            reason = err.get("reason") if isinstance(err, dict) else str(err)
            tally.fail(f"line {it.line}", f"{err.get('type', 'error')}: {reason}"
                       if isinstance(err, dict) else reason)
        else:
            tally.docs += 1


def _progress(source: Source, off: bool) -> Any:
    """A tqdm bar over the input's bytes (or its documents, for stdin); None when off."""
    if off:
        return None
    from tqdm import tqdm
    if source.size is not None:
        return tqdm(total=source.size, unit="B", unit_scale=True, desc="loading",
                    file=sys.stderr)
    return tqdm(unit=" docs", desc="loading", file=sys.stderr)


def _advance(bar: Any, source: Source, tally: Tally) -> None:
    if bar is None:
        return
    done = source.consumed if source.size is not None else tally.docs + tally.errors
    bar.update(max(0, done - bar.n))
    bar.set_postfix(docs=tally.docs, errors=tally.errors, refresh=False)
