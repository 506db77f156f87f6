"""Subword regularization on top of the unigram lattice: what sentencepiece's
``SampleEncode`` and ``SampleEncodeAndScore`` do with the lattice's
algorithms (:mod:`subtok.models.unigram.lattice`). The limits, messages
and seeding every sampling model shares are in :mod:`subtok.regularization`.

* sampling among the n-best only (:func:`choose_hypothesis`);
* sampling with or without replacement, with scores
  (:func:`sample_encode_and_score`): log-probabilities, or the Gumbel-top-k
  inclusion probabilities of priority sampling.

The draws themselves (forward-filtering / backward-sampling, the
Gumbel-perturbed n-best search) are lattice algorithms and live with the
lattice. This module imports nothing from it: it only calls the methods of
the lattice it is handed.
"""

from __future__ import annotations

import bisect
import math
import random
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from subtok.models.unigram.lattice import Lattice

def inclusion_log_prob(x: float) -> float:
    """``log(1 - exp(-exp(x)))``: log P(a path is among the k Gumbel-top samples).

    ``x`` is the path's log-probability minus the (k+1)-th perturbed score
    κ; a Gumbel-perturbed log-probability exceeds κ with probability
    ``1 - exp(-exp(x))``. For very negative ``x`` the direct formula loses
    all precision, so a Taylor series of ``log(1 - exp(-e^x))`` in ``e^x``
    is used there (as sentencepiece does).
    """
    if x <= -10.0:
        e = math.exp(x)
        return x - e / 2.0 + e * e / 24.0 - e ** 4 / 2880.0
    return math.log(-math.expm1(-math.exp(min(x, 700.0))))


def _draw(weights: list[float], rng: random.Random) -> int:
    """Index drawn with probability proportional to ``weights``."""
    cumulative = []
    total = 0.0
    for w in weights:
        total += w
        cumulative.append(total)
    k = bisect.bisect_right(cumulative, rng.random() * total)
    return min(k, len(weights) - 1)


def choose_hypothesis(hypotheses: list[tuple[list[int], float]], alpha: float,
                      rng: random.Random) -> list[int]:
    """Pick one n-best path with probability ∝ ``exp(alpha · score)``.

    This is what sentencepiece does for ``SampleEncode`` with
    ``nbest_size > 1``: sampling restricted to the n best segmentations,
    normalized by a log-sum-exp in doubles.
    """
    logs = [alpha * score for _, score in hypotheses]
    top = max(logs)
    k = _draw([math.exp(x - top) for x in logs], rng)
    return hypotheses[k][0]


def sample_encode_and_score(lattice: "Lattice", num_samples: int, theta: float, wor: bool,
                            include_best: bool, rng: random.Random) -> list[tuple[list[int], float]]:
    """Paths with scores, as sentencepiece's ``SampleEncodeAndScore``.

    * ``wor=False``: ``num_samples`` independent draws (with replacement);
      each score is the path's log-probability ``θ·score − log Z``.
    * ``wor=True``: ``num_samples`` distinct paths by Gumbel-top-k. The
      search returns ``num_samples + 1`` paths; the last one's perturbed
      score κ is the threshold, and each kept path's score is its log
      inclusion probability ``log P(G > κ)`` — which makes
      ``Σ f(path) · p(path) / P(incl)`` an unbiased estimate of ``E[f]``
      (priority sampling). Like sentencepiece, when the lattice has no more
      than ``num_samples`` paths the last one still serves as κ and is
      dropped.
    * ``include_best`` (only with ``wor``): the Viterbi path comes first,
      with score 0 (it is always included), and is removed from the sample,
      or the sample's last path is dropped if it was not there.
    """
    if include_best and not wor:
        raise ValueError("include_best is only supported with wor=True.")
    log_z = lattice.log_z(theta)
    if not wor:
        out = []
        for _ in range(num_samples):
            path = lattice.sample(theta, rng)
            out.append((path, lattice.path_score(path, theta) - log_z))
        return out
    results: list[tuple[list[int], float]] = []
    drawn = lattice.nbest(num_samples + 1, sample=True, theta=theta, rng=rng)
    if include_best:
        best = lattice.viterbi()
        results.append((best, 0.0))
        paths = [path for path, _ in drawn]
        if best in paths:
            del drawn[paths.index(best)]
        elif drawn:
            drawn.pop()
    if not drawn:
        return results
    kappa = drawn.pop()[1]
    for path, _ in drawn:
        x = lattice.path_score(path, theta) - log_z - kappa
        results.append((path, inclusion_log_prob(x)))
    return results


__all__ = ["choose_hypothesis", "inclusion_log_prob", "sample_encode_and_score"]
