"""The benchmark's load generator: a closed loop of POSTs over N connections, bounded by a
request count and a time cap, summarised as p50/p99 latency and requests per second."""
from __future__ import annotations

import asyncio
import time
from dataclasses import asdict, dataclass
from typing import Any



@dataclass
class LoadStats:
    """What one bounded load run measured."""

    requests: int          # completed requests (status 200)
    errors: int            # requests that failed or answered another status
    wall_s: float
    p50_ms: float | None
    p99_ms: float | None
    mean_ms: float | None
    rps: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def percentile(sorted_values: list[float], q: float) -> float | None:
    """The ``q``-quantile (0..1) of already sorted values, by linear interpolation."""
    if not sorted_values:
        return None
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summarize(latencies_s: list[float], errors: int, wall_s: float) -> LoadStats:
    """p50/p99/mean in milliseconds and completed requests per second."""
    xs = sorted(latencies_s)
    ms = [x * 1000.0 for x in xs]
    mean = sum(ms) / len(ms) if ms else None
    return LoadStats(len(xs), errors, wall_s, _r(percentile(ms, 0.5)),
                     _r(percentile(ms, 0.99)), _r(mean), round(len(xs) / wall_s, 2)
                     if wall_s > 0 else 0.0)


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


async def run_load(client: Any, url: str, body: bytes, requests: int, connections: int,
                   time_cap_s: float, warmup: int = 2) -> LoadStats:
    """POST ``body`` to ``url`` ``requests`` times over ``connections`` concurrent workers,
    stopping early at ``time_cap_s``. Each worker sends its next request when the previous
    one is answered (closed loop)."""
    headers = {"content-type": "application/json"}
    for _ in range(warmup):
        await client.post(url, content=body, headers=headers)
    latencies: list[float] = []
    errors = 0
    issued = 0
    t_start = time.perf_counter()
    deadline = t_start + time_cap_s

    async def worker() -> None:
        nonlocal issued, errors
        while issued < requests and time.perf_counter() < deadline:
            issued += 1
            t0 = time.perf_counter()
            try:
                r = await client.post(url, content=body, headers=headers)
                ok = r.status_code == 200
            except Exception:  # noqa: BLE001 - counted, the run goes on
                ok = False
            if ok:
                latencies.append(time.perf_counter() - t0)
            else:
                errors += 1

    await asyncio.gather(*(worker() for _ in range(connections)))
    return summarize(latencies, errors, time.perf_counter() - t_start)
