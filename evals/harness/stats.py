"""The statistics a run reports: a Wilson score interval for a rate, and the unbiased pass@k estimator."""

from __future__ import annotations

import math

Z_95 = 1.959963984540054


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval for `successes` out of `n` (95% by default); (0, 1) when n is 0."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denominator = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return (max(0.0, center - half), min(1.0, center + half))


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of k samples, drawn from n trials of which c passed, passes.

    The unbiased estimator of Chen et al. (2021): 1 - C(n-c, k) / C(n, k).
    """
    if not 0 < k <= n or not 0 <= c <= n:
        raise ValueError(f"pass@k needs 0 < k <= n and 0 <= c <= n (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None
