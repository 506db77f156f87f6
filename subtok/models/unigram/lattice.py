"""Subword regularization: sampling and n-best over the unigram lattice.

A unigram model scores a segmentation by the sum of its piece scores (log
probabilities). Besides the single best path (Viterbi) sentencepiece offers

* **n-best**: the ``n`` highest-scoring segmentations, best first, found by
  an exact "forward-DP, backward-A*" search (:meth:`Lattice.nbest`);
* **sampling** from ``p(path) ∝ exp(θ · score(path))`` (θ = ``alpha``, an
  inverse temperature) by forward-filtering / backward-sampling over the
  whole lattice (:meth:`Lattice.sample`), or among the n-best only
  (:func:`choose_hypothesis`);
* **sampling without replacement** with the Gumbel-top-k trick and an
  estimate of each sample's inclusion probability
  (:func:`sample_encode_and_score`), and the **entropy** of ``p``
  (:meth:`Lattice.entropy`).

BPE-dropout lives in :meth:`subtok.models.bpe.model.BPEModel.merge`; this module
only covers the lattice.

Numbers follow sentencepiece: wherever its C++ keeps a ``float`` (node
scores, Viterbi accumulators, forward log-weights, hypothesis scores,
entropies) we round to float32 with :func:`f32`, because n-best order and
ties depend on that rounding; probabilities used only to draw a sample are
computed in doubles (the draw is random anyway). The n-best search also
reproduces the order in which libstdc++'s ``std::priority_queue`` pops
hypotheses of equal score (see :class:`_StdHeap`).

Randomness always comes from a ``random.Random`` passed in by the caller, so
that callers decide about seeding (the CLI seeds one generator per input
line, which keeps ``--random_seed`` reproducible with any number of worker
processes).
"""

from __future__ import annotations

import bisect
import math
import random

from subtok.models.unigram.model import f32
from subtok.vocab import PieceType

#: Node indices of the begin- and end-of-sentence nodes of every lattice.
BOS, EOS = 0, 1
#: sentencepiece's ``kMaxNBestSize``: larger n-best / sampling sizes fail.
MAX_NBEST_SIZE = 512
#: Memory guards of sentencepiece 0.2.3's n-best search (see Lattice.nbest).
_MAX_AGENDA = 10000
_MIN_AGENDA = 512
_MAX_HYPOTHESES = 100000
_MAX_ALLOCATED = 500000
_MAX_SHRINKS = 10
#: ``LogSumExp`` ignores the smaller term when it is this much smaller.
_LOG_EPSILON = 50.0


#: 0.2.3's Python ``encode(enable_sampling=True)`` rejects these arguments.
SAMPLING_ARGS_MESSAGE = (
    'When enable_sampling is True, We must specify "nbest_size > 1" or "nbest_size = -1", '
    'and "alpha". "nbest_size" is enabled only on unigram mode ignored in BPE-dropout. '
    'when "nbest_size = -1" , this method samples from all candidates on the lattice '
    'instead of nbest segmentations.')


def new_rng(seed: int | None = None) -> random.Random:
    """A generator seeded with ``seed``, or from fresh OS entropy if None."""
    return random.Random(seed)


def line_rng(seed: int, line_number: int) -> random.Random:
    """The generator for one input line under ``--random_seed``.

    Seeding from (seed, line number) rather than sharing one stream makes a
    line's sample independent of which worker process encodes it and of
    the lines before it. The combination is arithmetic, not ``hash()``,
    which is salted per process for strings.
    """
    return random.Random(seed * 1_000_003 + line_number)


def log_sum_exp(x: float, y: float) -> float:
    """``log(e^x + e^y)`` as sentencepiece's ``LogSumExp`` computes it.

    The difference is taken in float32, the logarithm in doubles, and a term
    more than 50 nats below the other is dropped; the result is a float.
    """
    if x < y:
        x, y = y, x
    if x > f32(y + _LOG_EPSILON):
        return x
    return f32(x + math.log(math.exp(f32(y - x)) + 1.0))


def gumbel(rng: random.Random) -> float:
    """A standard Gumbel draw, ``-log(-log(U + 1e-7))``, as sentencepiece.

    The ``1e-7`` offset bounds the draw from below; the clamp below keeps
    ``U + 1e-7`` under 1 so that the outer logarithm stays defined (the
    C++ float uniform can come that close to 1 as well).
    """
    u = min(rng.random() + 1e-7, 1.0 - 2.0 ** -53)
    return -math.log(-math.log(u))


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



def _sift_up(heap: list, hole: int, item: tuple) -> None:
    """libstdc++'s __push_heap: move ``item`` up from ``hole`` (max-heap on
    item[0]; an equal key does not pass its parent)."""
    key = item[0]
    while hole > 0:
        parent = (hole - 1) // 2
        if not heap[parent][0] < key:
            break
        heap[hole] = heap[parent]
        hole = parent
    heap[hole] = item

class _StdHeap:
    """A max-heap on ``item[0]`` that pops equal keys as libstdc++ does.

    sentencepiece keeps n-best hypotheses in a ``std::priority_queue``
    compared by ``fx <``. Among hypotheses with *identical* float scores the
    one popped first is decided by the heap layout of ``push_heap`` /
    ``pop_heap`` (sift down always to a leaf, then back up), which Python's
    ``heapq`` does not reproduce. Emulating it keeps n-best lists in
    sentencepiece's order even on exact ties.
    """

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: list[tuple] = []

    def __len__(self) -> int:
        return len(self.items)

    def push(self, item: tuple) -> None:
        heap = self.items
        heap.append(item)
        _sift_up(heap, len(heap) - 1, item)

    def pop(self) -> tuple:
        heap = self.items
        top = heap[0]
        value = heap.pop()
        size = len(heap)
        if not size:
            return top
        # __adjust_heap: move the hole at the root down to a leaf, always
        # to the larger child (the left one only if the right is smaller) ...
        hole = child = 0
        while child < (size - 1) // 2:
            child = 2 * (child + 1)
            if heap[child][0] < heap[child - 1][0]:
                child -= 1
            heap[hole] = heap[child]
            hole = child
        if size % 2 == 0 and child == (size - 2) // 2:
            child = 2 * (child + 1)
            heap[hole] = heap[child - 1]
            hole = child - 1
        # ... then __push_heap the former last element up from there.
        _sift_up(heap, hole, value)
        return top


def user_defined_score(length: int) -> float:
    """Score of a USER_DEFINED node of ``length`` characters in the lattice.

    sentencepiece 0.2.3 scores user-defined pieces ``0.1 · length − 0.1``
    whatever the model's scores; its Viterbi ``Encode`` counts the length
    in UTF-8 bytes (see models/unigram.py) but the lattice that n-best and
    sampling use counts characters (checked against 0.2.3's n-best scores,
    e.g. "▁xxbos" scores 0.5 there and "▁▁" 0.1). Computed as 0.2.3 does:
    ``0.1 * (length - 1)`` in doubles, rounded to float.
    """
    return f32(0.1 * (length - 1))


def best_two(left: list[int], accs: list[float]) -> tuple[int, float, float]:
    """(first node with the largest acc, that acc, the second largest acc).

    The second is -inf when there is a single candidate.
    """
    best_node = left[0]
    best = accs[best_node]
    second = -float("inf")
    for node in left[1:]:
        value = accs[node]
        if value > best:
            second, best, best_node = best, value, node
        elif value > second:
            second = value
    return best_node, best, second


def exact_choice(left: list[int], accs: list[float], score: float) -> tuple[int, float]:
    """Float32 argmax of ``acc + score`` over ``left``; the first wins ties."""
    best_node, best = -1, 0.0
    for node in left:
        total = f32(accs[node] + score)
        if best_node < 0 or total > best:
            best, best_node = total, node
    return best_node, best


class Lattice:
    """All pieces that can start at each position of a normalized string.

    Node 0 is BOS (ends at position 0), node 1 is EOS (starts at ``len``);
    the others come from ``model.nodes_at`` position by position, so
    ``ends[p]`` lists the nodes ending at ``p`` by ascending start (longest
    first) — the order sentencepiece iterates, which decides ties.
    """

    def __init__(self, model, text: str) -> None:
        self.text = text
        n = len(text)
        begins, lengths, ids, scores = [0, n], [0, 0], [-1, -1], [0.0, 0.0]
        starts: list[list[int]] = [[] for _ in range(n + 1)]
        ends: list[list[int]] = [[] for _ in range(n + 1)]
        ends[0].append(BOS)
        starts[n].append(EOS)
        nodes_at = model.nodes_at
        types = model.vocab.types
        for pos in range(n):
            here = starts[pos]
            for length, piece_id, score in nodes_at(text, pos):
                if types[piece_id] == PieceType.USER_DEFINED:
                    score = user_defined_score(length)
                node = len(begins)
                begins.append(pos)
                lengths.append(length)
                ids.append(piece_id)
                scores.append(score)
                here.append(node)
                ends[pos + length].append(node)
        self.begins, self.lengths, self.ids, self.scores = begins, lengths, ids, scores
        self.starts, self.ends = starts, ends
        self._acc: list[float] | None = None
        self._best: list[int] | None = None
        self._alpha: dict[float, list[float]] = {}
        self._tables: dict[float, dict[int, list[float]]] = {}

    def __len__(self) -> int:
        return len(self.begins)

    # -- paths ----------------------------------------------------------
    def pairs(self, path: list[int]) -> list[tuple[str, int]]:
        """``(piece, id)`` pairs of a path (node indices, BOS/EOS excluded)."""
        text, begins, lengths, ids = self.text, self.begins, self.lengths, self.ids
        return [(text[begins[i]:begins[i] + lengths[i]], ids[i]) for i in path]

    def path_score(self, path: list[int], theta: float = 1.0) -> float:
        """``θ · Σ score``, the unnormalized log-weight of a path (doubles)."""
        theta = f32(theta)
        scores = self.scores
        return sum(f32(theta * scores[i]) for i in path)

    # -- Viterbi ----------------------------------------------------------
    def viterbi(self) -> list[int]:
        """Best path, with sentencepiece's float32 sums and tie rule.

        Every node starting at ``p`` chooses among the same predecessors
        ``ends[p]``, maximizing ``float32(acc + score)``; the first wins a
        tie. Since rounding is monotone, the predecessor with the largest
        ``acc`` wins for all of them unless two candidates are within
        rounding distance, in which case the float32 sums are compared one
        by one. ``self._acc`` keeps every node's accumulated score for the
        n-best search.
        """
        if self._best is not None:
            return self._best
        size = len(self.begins)
        acc = [0.0] * size
        prev = [-1] * size
        scores, ends = self.scores, self.ends
        for pos, right in enumerate(self.starts):
            if not right:
                continue
            left = ends[pos]
            best_node, best, second = best_two(left, acc)
            bound = abs(best) + max(abs(scores[r]) for r in right)
            close = best - second <= bound * 2.0 ** -20
            for r in right:
                score = scores[r]
                if not close:
                    acc[r] = f32(best + score)
                    prev[r] = best_node
                    continue
                prev[r], acc[r] = exact_choice(left, acc, score)
        path = []
        node = prev[EOS]
        while node != BOS:
            path.append(node)
            node = prev[node]
        path.reverse()
        self._acc, self._best = acc, path
        return path

    # -- forward algorithm ------------------------------------------------
    def alpha(self, theta: float) -> list[float]:
        """Forward log-weights ``a[r] = log Σ_{paths BOS→r} exp(θ·score)``.

        ``a[r]`` excludes r's own score; ``a[EOS]`` is ``log Z``. All nodes
        starting at a position share their predecessors and therefore their
        value. Accumulated in float32 with sentencepiece's ``LogSumExp``.
        """
        found = self._alpha.get(theta)
        if found is not None:
            return found
        th = f32(theta)
        a = [0.0] * len(self.begins)
        scores, ends = self.scores, self.ends
        for pos, right in enumerate(self.starts):
            if not right:
                continue
            total = None
            for node in ends[pos]:
                term = f32(f32(th * scores[node]) + a[node])
                total = term if total is None else log_sum_exp(total, term)
            for r in right:
                a[r] = total
        self._alpha[theta] = a
        return a

    def _table(self, theta: float, pos: int) -> list[float]:
        """Cumulative weights of the predecessors ending at ``pos``.

        In backward sampling the distribution over the predecessor of a node
        depends only on where the node starts, so it is computed once per
        position and reused by every later draw.
        """
        tables = self._tables.setdefault(theta, {})
        found = tables.get(pos)
        if found is None:
            a, scores, th = self.alpha(theta), self.scores, f32(theta)
            logs = [a[l] + f32(th * scores[l]) for l in self.ends[pos]]
            top = max(logs)
            found = []
            total = 0.0
            for value in logs:
                total += math.exp(value - top)
                found.append(total)
            tables[pos] = found
        return found

    def sample(self, theta: float, rng: random.Random) -> list[int]:
        """One path drawn from ``p ∝ exp(θ·score)`` (FFBS).

        Forward filtering gives ``a``; then, from EOS backwards, the
        predecessor ``l`` of the current node is drawn with probability
        ``exp(a[l] + θ·score(l) − a[node])`` until BOS is reached. The
        product of these conditionals is exactly ``p(path)``.
        """
        ends, begins = self.ends, self.begins
        path = []
        node = EOS
        while True:
            pos = begins[node]
            table = self._table(theta, pos)
            k = bisect.bisect_right(table, rng.random() * table[-1])
            left = ends[pos]
            node = left[min(k, len(left) - 1)]
            if node == BOS:
                break
            path.append(node)
        path.reverse()
        return path

    def entropy(self, theta: float) -> float:
        """Entropy of ``p ∝ exp(θ·score)`` over all paths, in nats.

        With ``t = θ·score(l) + a[l] − a[r]``, the log-probability that the
        path into ``r`` comes through ``l``, the expected log-probability of
        the paths into ``r`` is ``N[r] = Σ_l e^t (N[l] + t)`` (chain rule of
        entropy); one forward pass gives ``N[EOS]`` and the entropy is
        ``−N[EOS]``. Accumulated in float32 like sentencepiece's
        ``CalculateEntropy``.
        """
        a = self.alpha(theta)
        th = f32(theta)
        h = [0.0] * len(self.begins)
        scores, ends = self.scores, self.ends
        for pos, right in enumerate(self.starts):
            if not right:
                continue
            z = a[right[0]]
            total = 0.0
            for node in ends[pos]:
                t = f32(th * scores[node]) + a[node] - z
                total = f32(total + math.exp(t) * (h[node] + t))
            for r in right:
                h[r] = total
        return -h[EOS]

    # -- n-best -------------------------------------------------------------
    def nbest(self, size: int, sample: bool = False, theta: float = 0.0,
              rng: random.Random | None = None) -> list[tuple[list[int], float]]:
        """The ``size`` best paths with their scores, best first.

        Forward DP, backward A*: Viterbi gives every node the exact best
        score ``acc`` of a path from BOS to it, which is an admissible (in
        fact exact) heuristic. Hypotheses are suffixes ``node → … → EOS``
        with ``gx`` = their own score and priority ``fx = acc[node] + gx``,
        the best total of any full path through that suffix; extending the
        best hypothesis leftwards until it reaches BOS yields complete paths
        in exactly descending order.

        With ``sample=True`` the same search runs on Gumbel-perturbed
        log-probabilities instead (stochastic beam search, Kool et al.
        2019): a hypothesis' ``gx`` is its log-probability ``p`` of being a
        suffix, each child gets ``p + Gumbel`` conditioned on the maximum
        over the siblings being the parent's perturbed value, so complete
        paths pop out as a sample of ``size`` distinct paths drawn without
        replacement, with their perturbed scores.

        Memory guards, as in sentencepiece 0.2.3 (they make the result
        inexact only on long, repetitive inputs): when the agenda holds 10000
        hypotheses, or more than ``m = min(512, 10·size)`` while 100000 new
        hypotheses have been created since the last shrink, only the best
        ``m`` are kept (with the suffixes they point to, which count as
        created again); after 10 shrinks, or once 500000 hypotheses have
        been created in total, the search gives up and returns the Viterbi
        path alone.
        """
        if size < 1 or len(self.begins) == 2:
            return []
        if size == 1 and not sample:
            return [self._viterbi_result()]
        begins, ends, scores = self.begins, self.ends, self.scores
        agenda = _StdHeap()
        if sample:
            if rng is None:
                raise ValueError("sampling needs a random generator")
            a = self.alpha(theta)
            th = f32(theta)
            agenda.push((f32(gumbel(rng)), EOS, 0.0, None))
        else:
            self.viterbi()
            acc = self._acc
            agenda.push((acc[EOS], EOS, 0.0, None))
        results: list[tuple[list[int], float]] = []
        keep = min(_MIN_AGENDA, 10 * size)
        created = total = 1          # hypotheses since the last shrink / ever
        created_limit = _MAX_HYPOTHESES
        shrinks = 0
        while agenda:
            top = agenda.pop()
            fx, node, gx, _ = top
            if node == BOS:
                path = []
                link = top[3]
                while link[1] != EOS:
                    path.append(link[1])
                    link = link[3]
                results.append((path, fx))
                if len(results) == size:
                    break
                continue
            left = ends[begins[node]]
            if sample:
                z = a[node]
                logs = [f32(f32(f32(gx + a[l]) + f32(th * scores[l])) - z) for l in left]
                perturbed = [f32(p + gumbel(rng)) for p in logs]
                highest = max(perturbed)
                for l, p, g in zip(left, logs, perturbed):
                    agenda.push((f32(_conditioned(fx, g, highest)), l, p, top))
            else:
                for l in left:
                    agenda.push((f32(acc[l] + gx), l, f32(scores[l] + gx), top))
            created += len(left)
            total += len(left)
            if total >= _MAX_ALLOCATED or created >= _MAX_ALLOCATED:
                return [self._viterbi_result()]
            if len(agenda) >= _MAX_AGENDA or (len(agenda) > keep and created >= created_limit):
                if shrinks >= _MAX_SHRINKS:
                    return [self._viterbi_result()]
                shrinks += 1
                shrunk = _StdHeap()
                kept: set[int] = set()
                for _ in range(min(len(agenda), keep)):
                    hyp = agenda.pop()
                    shrunk.push(hyp)
                    while hyp is not None and id(hyp) not in kept:
                        kept.add(id(hyp))
                        hyp = hyp[3]
                agenda = shrunk
                created = len(kept)
                created_limit = created + _MAX_HYPOTHESES
        return results

    def _viterbi_result(self) -> tuple[list[int], float]:
        path = self.viterbi()
        return path, self._acc[EOS]


def _conditioned(parent: float, g: float, highest: float) -> float:
    """A child's Gumbel value given that the siblings' maximum is ``parent``.

    Shifts ``g`` (whose siblings' maximum is ``highest``) into a Gumbel
    truncated at ``parent``: ``−log(e^−parent − e^−highest + e^−g)``, in the
    numerically stable form of Kool et al. (appendix B). The maximal child
    gets exactly ``parent``.
    """
    if g >= highest:
        return parent
    e = math.exp(g - highest)
    if e >= 1.0:
        return parent
    v = f32(f32(parent - g) + math.log1p(-e))
    return parent - max(v, 0.0) - math.log1p(math.exp(-abs(v)))


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


def sample_encode_and_score(lattice: Lattice, num_samples: int, theta: float, wor: bool,
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
    log_z = lattice.alpha(theta)[EOS]
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
