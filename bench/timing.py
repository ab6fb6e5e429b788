"""Side-by-side timing: every method sampled in the same rounds, medians compared."""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable, Mapping

Sample = Callable[[], Awaitable[object]]


async def interleaved(
    methods: Mapping[str, Sample], rounds: int, warmup: int = 2
) -> dict[str, float]:
    """Median seconds per method; each round runs every method once, in turn."""
    samples: dict[str, list[float]] = {name: [] for name in methods}
    for round_index in range(warmup + rounds):
        for name, method in methods.items():
            started = time.perf_counter()
            await method()
            elapsed = time.perf_counter() - started
            if round_index >= warmup:
                samples[name].append(elapsed)
    return {name: statistics.median(values) for name, values in samples.items()}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms" if seconds < 1 else f"{seconds:.2f} s"
