"""``shardsearch`` command line: ``serve`` (the HTTP service), ``load``, ``bench``,
``hash-password`` and ``check`` (verify a data directory offline)."""
from __future__ import annotations

import argparse
import os
import signal
import sys


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(0)


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from shardsearch.api.app import create_app
    from shardsearch.api.deps import RayCoordinator
    from shardsearch.cluster.coordinator import get_coordinator
    from shardsearch.cluster.distribution.runtime import start_ray, stop_ray
    from shardsearch.api.guards import ESHttpToolsProtocol

    from shardsearch.api.auth import AuthConfig, is_loopback

    try:
        auth = AuthConfig.load(args.auth_file)
    except ValueError as e:
        print(f"shardsearch: {e}", file=sys.stderr, flush=True)
        return 2
    if not is_loopback(args.host) and not auth.enabled and not args.insecure:
        print(f"shardsearch: refusing to listen on {args.host} without credentials: anyone "
              "who can reach it could read and change every index. Configure API keys or "
              "users (--auth-file, SHARDSEARCH_API_KEYS, SHARDSEARCH_USERS), or pass "
              "--insecure if the network is trusted.", file=sys.stderr, flush=True)
        return 2
    busy = _port_in_use(args.host, args.port)
    if busy:
        print(f"shardsearch: port {args.port} on {args.host} is in use ({busy}): another "
              "shardsearch, Elasticsearch or OpenSearch may be running. Stop it, or choose "
              "another port with --port.", file=sys.stderr, flush=True)
        return 1
    os.umask(0o077)   # every file the service and the Ray it starts create: owner only
    data_dir = None if args.in_memory else (args.data_dir or _default_data_dir())
    if data_dir is not None:
        from shardsearch.cluster.distribution.raytoken import private_dir
        private_dir(data_dir)
    address = args.ray_address or os.environ.get("RAY_ADDRESS") or None
    info = start_ray(address, num_cpus=args.num_cpus, object_store_mb=args.object_store_mb,
                     token_dir=data_dir, token_file=args.ray_token_file)
    where = "a private local Ray" if address is None else f"the Ray cluster at {address}"
    handle = get_coordinator(data_dir=data_dir)
    import ray
    try:
        ray.get(handle.ping.remote())   # waits for indices found in the data dir to recover
    except ray.exceptions.RayError as e:
        print(f"shardsearch: the coordinator could not start: {e}", file=sys.stderr,
              flush=True)
        if info.get("started"):
            stop_ray()
        return 1
    app = create_app(RayCoordinator(handle), auth=auth)
    stored = "in memory only" if data_dir is None else f"data in {data_dir}"
    print(f"shardsearch: using {where}; {stored}; listening on http://{args.host}:{args.port}"
          + ("" if auth.enabled else " (no authentication)"), flush=True)
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level=args.log_level,
                            access_log=False, lifespan="off", http=ESHttpToolsProtocol)
    server = uvicorn.Server(config)
    # uvicorn re-raises the signal it handled after its graceful shutdown; make SIGTERM end
    # the process through Python (so Ray is stopped below) rather than by the default action.
    signal.signal(signal.SIGTERM, _exit_on_signal)
    if address is not None:
        import threading
        threading.Thread(target=_watch_cluster, args=(handle, server, where), daemon=True,
                         name="cluster-watch").start()
    try:
        server.run()
    except KeyboardInterrupt:
        pass  # uvicorn re-raises the Ctrl-C it handled once it has shut down gracefully
    finally:
        if info.get("started"):
            stop_ray()
        print("shardsearch: stopped", flush=True)
    return 0


def _watch_cluster(handle: object, server: object, where: str, every_s: float = 2.0,
                   misses: int = 3) -> None:
    """Stop serving when the joined Ray cluster is gone (its coordinator stops answering
    ``misses`` pings in a row): a service without its cluster can only answer errors."""
    import time

    import ray
    missed = 0
    while not server.should_exit:   # type: ignore[attr-defined]
        time.sleep(every_s)
        try:
            ray.get(handle.ping.remote(), timeout=5)   # type: ignore[attr-defined]
            missed = 0
        except Exception:  # noqa: BLE001 - any failure to reach it counts as a miss
            missed += 1
        if missed >= misses:
            print(f"shardsearch: lost {where} (its coordinator does not answer); stopping",
                  file=sys.stderr, flush=True)
            server.should_exit = True   # type: ignore[attr-defined]
            return


def _port_in_use(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on, checked before Ray starts (seconds of work and
    a traceback otherwise); None when it is free."""
    import socket
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        return f"cannot resolve {host}: {e}"
    family, _, _, _, addr = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # as uvicorn binds
        try:
            s.bind(addr)
        except OSError as e:
            return e.strerror or str(e)
    return None


def _default_data_dir() -> str:
    import platformdirs
    return platformdirs.user_data_dir("shardsearch")


def _hash_password(args: argparse.Namespace) -> int:
    import getpass

    from shardsearch.api.passwords import hash_secret
    secret = sys.stdin.readline().rstrip("\n") if args.stdin else getpass.getpass("secret: ")
    if not secret:
        print("shardsearch: empty secret", file=sys.stderr)
        return 2
    print(hash_secret(secret))
    return 0


def _bench(args: argparse.Namespace) -> int:
    from shardsearch.benchmarks.bench import main as bench_main
    return bench_main(args)


def _load(args: argparse.Namespace) -> int:
    from shardsearch.load import main as load_main
    return load_main(args)


EXAMPLES = """examples:
  shardsearch serve                                  # http://127.0.0.1:9200, data kept
  shardsearch serve --in-memory --port 9201          # a scratch service
  shardsearch load books.ndjson.gz --index books --shards 3 --id-field isbn
  zcat dump.ndjson.gz | shardsearch load - --url http://127.0.0.1:9201
  shardsearch bench --quick                          # about a minute
  shardsearch hash-password                          # for the --auth-file
  shardsearch check ~/.local/share/shardsearch       # verify every checksum, offline
"""


def _check(args: argparse.Namespace) -> int:
    from pathlib import Path

    from shardsearch.cluster.engine.check import check_data_dir, render
    from shardsearch.cluster.engine.meta_store import DataDirLock
    if not Path(args.data_dir).is_dir():
        print(f"shardsearch: no such directory [{args.data_dir}]", file=sys.stderr, flush=True)
        return 2
    lock = None
    if args.repair:     # never change files a running service is writing
        try:
            lock = DataDirLock(args.data_dir)
        except RuntimeError as e:
            print(f"shardsearch: {e}: stop it before --repair", file=sys.stderr, flush=True)
            return 2
    try:
        report = check_data_dir(args.data_dir, repair=args.repair)
    finally:
        if lock is not None:
            lock.release()
    print(render(report, args.data_dir), flush=True)
    return 1 if report.damaged else 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="shardsearch",
                                description="A sharded, Elasticsearch-compatible search service "
                                            "whose shards are Ray actors.",
                                epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="run the HTTP service (Elasticsearch REST API)",
                       description="Run the HTTP service. With no Ray address a private local "
                                   "Ray is started (and stopped on exit).")
    s.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1: this machine only)")
    s.add_argument("--port", type=int, default=9200, help="TCP port (default 9200)")
    s.add_argument("--ray-address", default=None,
                   help="join this Ray cluster (e.g. 'auto' or 'HOST:6379'); default: the "
                        "RAY_ADDRESS environment variable, else start a private local Ray")
    s.add_argument("--ray-token-file", default=None,
                   help="file holding the Ray cluster's auth token, for --ray-address (default: "
                        "Ray's lookup: RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH, ~/.ray/auth_token). "
                        "A private Ray's token is generated into the data folder")
    s.add_argument("--num-cpus", type=int, default=None,
                   help="CPUs for the embedded Ray (default: all of this machine's)")
    s.add_argument("--object-store-mb", type=int, default=None,
                   help="object store size for the embedded Ray, in MiB (default: Ray's)")
    s.add_argument("--data-dir", default=None,
                   help="where indices are stored (default: the user's data folder, "
                        "e.g. ~/.local/share/shardsearch); indices found there are reopened")
    s.add_argument("--in-memory", action="store_true",
                   help="keep indices in memory only (lost when the service stops)")
    s.add_argument("--auth-file", default=None,
                   help="JSON file of API keys and users allowed to connect (see README); "
                        "also SHARDSEARCH_API_KEYS / SHARDSEARCH_USERS")
    s.add_argument("--insecure", action="store_true",
                   help="allow listening on a non-loopback address without credentials")
    s.add_argument("--log-level", default="warning",
                   choices=["critical", "error", "warning", "info", "debug"],
                   help="HTTP server log level (default warning)")
    s.set_defaults(func=_serve)
    h = sub.add_parser("hash-password", help="print a salted scrypt hash for the auth file",
                       description="Read a password or API key (prompted, or one line of stdin "
                                   "with --stdin) and print its salted scrypt hash, for "
                                   "'password_hash' / 'key_hash' in the --auth-file.")
    h.add_argument("--stdin", action="store_true", help="read the secret from standard input")
    h.set_defaults(func=_hash_password)
    ld = sub.add_parser("load", help="bulk-load an NDJSON file (or stdin) into a service",
                        description="Bulk-load NDJSON — one document per line, or _bulk "
                                    "action/source pairs; gzipped or not — into a running "
                                    "service over HTTP, with a progress bar and a summary. "
                                    "Exits non-zero if any line or document failed.",
                        epilog="example: shardsearch load gcide.ndjson.gz --index gcide "
                               "--shards 2")
    from shardsearch.load import add_arguments as load_arguments
    load_arguments(ld)
    ld.set_defaults(func=_load)
    b = sub.add_parser("bench", help="benchmark against Tantivy and SQLite over loopback HTTP",
                       description="Start the service (and its peers) on 127.0.0.1, bulk-load a "
                                   "corpus and measure latency, throughput, indexing rate and "
                                   "memory. Bounded; writes JSON, a table and PNG plots.")
    from shardsearch.benchmarks.bench import add_arguments
    add_arguments(b)
    b.set_defaults(func=_bench)
    ck = sub.add_parser("check", help="verify a data directory offline (like CheckIndex)",
                        description="Verify every checksum and cross-reference of a data "
                                    "directory (stop the service first): meta.json, snapshots, "
                                    "write-ahead logs, command numbering. Prints what is "
                                    "damaged and what would be lost; exits 1 on damage, 0 "
                                    "when clean (a torn last record is cut by the service "
                                    "itself and is not damage).")
    ck.add_argument("data_dir", help="the service's --data-dir")
    ck.add_argument("--repair", action="store_true",
                    help="keep what is verifiably intact: cut a log at its first bad record "
                         "after copying the originals into corrupted-<UTC time>/, and say "
                         "exactly what was dropped")
    ck.set_defaults(func=_check)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
