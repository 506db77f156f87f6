"""Statistics for the sampling tests: exact distributions by enumeration
and a chi-square test with its p-value computed here (no scipy).

Samplers are checked against the exact distribution ``p ∝ exp(θ · score)``
of a lattice's segmentations; ``chi_square_p`` says how likely the
observed frequencies are under it.
"""

from __future__ import annotations

import collections
import math

from subtok.models.unigram.lattice import EOS, Lattice


def enumerate_paths(lattice: Lattice) -> list[tuple[int, ...]]:
    """Every BOS→EOS path of the lattice (node indices)."""
    out: list[tuple[int, ...]] = []

    def walk(pos: int, prefix: tuple[int, ...]) -> None:
        for node in lattice.starts[pos]:
            if node == EOS:
                out.append(prefix)
            else:
                walk(pos + lattice.lengths[node], prefix + (node,))

    walk(0, ())
    return out


def exact_log_probs(lattice: Lattice, theta: float,
                    paths: list[tuple[int, ...]] | None = None) -> dict[tuple[int, ...], float]:
    """log p(path) with p ∝ exp(θ · Σ score), over ``paths`` (default: all)."""
    if paths is None:
        paths = enumerate_paths(lattice)
    logs = {p: theta * sum(lattice.scores[i] for i in p) for p in paths}
    top = max(logs.values())
    log_z = top + math.log(sum(math.exp(v - top) for v in logs.values()))
    return {p: v - log_z for p, v in logs.items()}


def path_score(lattice: Lattice, path) -> float:
    return sum(lattice.scores[i] for i in path)


def upper_gamma_q(a: float, x: float) -> float:
    """Regularized upper incomplete gamma Q(a, x).

    Series for P(a, x) when x < a + 1, else a continued fraction for Q
    (modified Lentz); both converge fast in their region.
    """
    if x <= 0.0:
        return 1.0
    log_front = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1.0:
        term = total = 1.0 / a
        denom = a
        for _ in range(100000):
            denom += 1.0
            term *= x / denom
            total += term
            if abs(term) < abs(total) * 1e-16:
                break
        return max(0.0, 1.0 - total * math.exp(log_front))
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 100000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        step = d * c
        h *= step
        if abs(step - 1.0) < 1e-16:
            break
    return math.exp(log_front) * h


def chi2_sf(statistic: float, dof: int) -> float:
    """P(X ≥ statistic) for X ~ chi-square with ``dof`` degrees of freedom."""
    return upper_gamma_q(dof / 2.0, statistic / 2.0)


def chi_square_p(counts: collections.Counter, probs: dict, total: int) -> float:
    """Goodness-of-fit p-value; cells expecting < 5 draws are pooled."""
    assert set(counts) <= set(probs), "sampled outside the support: %r" % (set(counts) - set(probs))
    cells, pooled_o, pooled_e = [], 0, 0.0
    for key, p in probs.items():
        expected, observed = total * p, counts.get(key, 0)
        if expected < 5.0:
            pooled_o += observed
            pooled_e += expected
        else:
            cells.append([observed, expected])
    if pooled_e > 0.0:
        if pooled_e < 5.0 and cells:
            smallest = min(cells, key=lambda cell: cell[1])
            smallest[0] += pooled_o
            smallest[1] += pooled_e
        else:
            cells.append([pooled_o, pooled_e])
    assert len(cells) >= 2
    statistic = sum((o - e) ** 2 / e for o, e in cells)
    return chi2_sf(statistic, len(cells) - 1)
