"""The unigram lattice: every algorithm over it, in one place.

A unigram model scores a segmentation by the sum of its piece scores (log
probabilities); the lattice of a text holds every piece that can start at
each position. sentencepiece runs several algorithms over it, and so do we,
each reproducing one sentencepiece function:

* :func:`encode_optimized` — ``UnigramModel::EncodeOptimized``, the best
  path as ``Encode`` finds it: one best value per *position*, float32 sums,
  and 0.2.3's shift of the sums back to 0 past :data:`RESET_THRESHOLD`.
  The encoder runs it where its word cache cannot be trusted (see
  :meth:`~subtok.models.unigram.model.UnigramModel.context_head`); the
  tests hold the cached fast path against it.
* :class:`Lattice` — sentencepiece's ``Lattice`` with its nodes:
  ``Viterbi`` (one best predecessor per *node*, float32), the forward
  algorithm, forward-filtering / backward-sampling, ``NBest`` (with the
  Gumbel-top-k variant) and ``CalculateEntropy``. The n-best, sampling and
  entropy APIs use it.
* The trainer's lattices (:func:`populate_nodes`, :class:`UnitLattices`,
  :func:`populate_marginal`, :func:`unit_viterbi`) — what
  ``UnigramModel::PopulateNodes``, ``Lattice::PopulateMarginal`` and
  ``Lattice::Viterbi`` do for the E-step and the prune, as compact node
  lists ``(begin, end, piece index)`` in doubles.

Why more than one best-path algorithm. ``EncodeOptimized`` and
``Lattice::Viterbi`` agree except where float32 rounding makes two
candidates tie: the first keeps one value per end position (the first
strictly larger offer wins), the second lets every node pick its own
predecessor among the rounded sums; sentencepiece's ``Encode`` uses the
first and its n-best search the second, and both results are compared with
sentencepiece bit for bit. The trainer's :func:`unit_viterbi` follows
``Lattice::Viterbi``'s tie rule but sums in doubles, like the rest of the
trainer's E-step (see :mod:`subtok.models.unigram.trainer`), over node
lists built once per unit and renumbered between EM steps: the prune runs
it over every distinct word of the corpus, where a :class:`Lattice` per
unit would be rebuilt at every step. Making it round like
``Lattice::Viterbi`` (float32, a predecessor per node) would follow
sentencepiece more closely in near-ties, but it changes what the trainer
computes, so it is a decision of its own rather than part of sharing code.

The cached encoder of :mod:`subtok.models.unigram.model` (``_forward`` /
``_best_path``) is not here: it is the fast path, a doubles Viterbi from
score 0 with the margins that tell when its result equals
:func:`encode_optimized`'s.

Numbers follow sentencepiece: wherever its C++ keeps a ``float`` (node
scores, Viterbi accumulators, forward log-weights, hypothesis scores,
entropies) we round to float32 (:mod:`subtok.float32`), because n-best order
and ties depend on that rounding; probabilities used only to draw a sample
are computed in doubles (the draw is random anyway). The n-best search also
reproduces the order in which libstdc++'s ``std::priority_queue`` pops
hypotheses of equal score (see :class:`_StdHeap`).
"""

from __future__ import annotations

import bisect
import math
import random
from array import array
from itertools import accumulate, compress

from subtok.float32 import f32, float32_cell
from subtok.vocab import PieceType

#: Node indices of the begin- and end-of-sentence nodes of every lattice.
BOS, EOS = 0, 1
#: Memory guards of sentencepiece 0.2.3's n-best search (see Lattice.nbest).
_MAX_AGENDA = 10000
_MIN_AGENDA = 512
_MAX_HYPOTHESES = 100000
_MAX_ALLOCATED = 500000
_MAX_SHRINKS = 10
#: ``LogSumExp`` ignores the smaller term when it is this much smaller.
_LOG_EPSILON = 50.0

#: Sentencepiece 0.2.3's Encode shifts its accumulated scores back to 0
#: where one passes this magnitude (``UnigramModel::EncodeOptimized``).
RESET_THRESHOLD = 100000.0


def passes_reset(score: float) -> bool:
    """True where sentencepiece shifts ``score`` (and what follows) to 0."""
    return not -RESET_THRESHOLD <= score <= RESET_THRESHOLD


# ----------------------------------------------------------------------------
# Encode's best path


def encode_optimized(model, text: str, start: float = 0.0) -> tuple[list[tuple[int, int, int, float]], float]:
    """Exact float32 best path over ``text`` from accumulated score ``start``,
    as ``UnigramModel::EncodeOptimized`` finds it.

    ``model`` gives the nodes (its ``nodes_at``). Returns (path, final
    accumulated score); the path is a list of (begin, length, id, score).

    One best value per end position; every piece starting at ``i`` offers
    ``float32(best[i] + score)`` to the position where it ends, and an
    offer replaces the value there only if strictly larger, so among equal
    float32 sums the first offered wins (the earliest start, i.e. the
    longest piece). Where ``best[i]`` passes RESET_THRESHOLD, it is first
    subtracted (in float32) from ``best[i]`` and from every value already
    offered at or after ``i``, as sentencepiece 0.2.3 does. The final score
    returned carries the shifts made inside ``text``; one due where it ends
    is made where the next text starts (here too, at position 0). ``start``
    is the score sentencepiece has where ``text`` begins, its earlier
    shifts made.
    """
    n = len(text)
    rounded = float32_cell()
    best = [start] + [0.0] * n
    back: list = [None] * (n + 1)  # (begin, length, id, score) of the best node ending here
    nodes_at = model.nodes_at
    frontier = 0  # the farthest position offered to so far
    for i in range(n):
        acc = best[i]
        if passes_reset(acc):
            for j in range(i, frontier + 1):
                if j == i or back[j] is not None:
                    rounded[0] = best[j] - acc
                    best[j] = rounded[0]
            acc = 0.0
        for length, piece_id, score in nodes_at(text, i):
            end = i + length
            if end > frontier:
                frontier = end
            rounded[0] = acc + score
            value = rounded[0]
            if back[end] is None or value > best[end]:
                best[end] = value
                back[end] = (i, length, piece_id, score)
    path = []
    end = n
    while end:
        node = back[end]
        path.append(node)
        end = node[0]
    path.reverse()
    return path, best[n]


# ----------------------------------------------------------------------------
# The Lattice: sentencepiece's nodes and the algorithms over them


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
    in UTF-8 bytes (see :class:`~subtok.models.unigram.model.UnigramModel`) but the lattice that n-best and
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
    """sentencepiece's ``Lattice``, as ``UnigramModel::PopulateNodes`` fills
    it: all pieces that can start at each position of a normalized string.

    Node 0 is BOS (ends at position 0), node 1 is EOS (starts at ``len``);
    the others come from ``model.nodes_at`` position by position, so
    ``ends[p]`` lists the nodes ending at ``p`` by ascending start (longest
    first) — the order sentencepiece iterates, which decides ties.

    Its algorithms are sentencepiece's, in its float32: ``Viterbi``
    (:meth:`viterbi`), ``ForwardAlgorithm`` (:meth:`alpha`), ``Sample``
    (:meth:`sample`), ``CalculateEntropy`` (:meth:`entropy`) and ``NBest``
    (:meth:`nbest`). The n-best, sampling and entropy APIs use it; plain
    encoding does not (see the module docstring).
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

    def log_z(self, theta: float) -> float:
        """``log Σ_paths exp(θ·score)``: the forward weight of EOS."""
        return self.alpha(theta)[EOS]

    # -- Viterbi ----------------------------------------------------------
    def viterbi(self) -> list[int]:
        """Best path, as ``Lattice::Viterbi``: float32 sums, per-node choice.

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
        rounded = float32_cell()
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
                    rounded[0] = best + score
                    acc[r] = rounded[0]
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


# ----------------------------------------------------------------------------
# The trainer's lattices: compact node lists, in doubles

# Node piece ids in the trainer's lattices besides real indices: an unknown
# node (no one-character piece at its position; counts for piece 0, as
# sentencepiece's training model leaves unk_id at 0) and a node whose piece
# was removed since the lattice was built (probability 0). Both index the
# per-step value lists from the end.
UNKNOWN = -1
DROPPED = -2

#: Linear-space forward/backward: positions whose probability falls below
#: this are rescaled (with the others the remaining nodes can reach) by a
#: power of two, which is exact.
_TINY = 2.0 ** -400
_LN2 = math.log(2.0)


def populate_nodes(text: str, get, max_length: int) -> list[tuple[int, int, int]]:
    """The trainer's ``PopulateNodes``: the lattice of ``text`` as nodes
    (begin, end, piece index), by begin, then length.

    ``get`` is the ``get`` of the trainer's
    :func:`~subtok.models.unigram.trie.index_table` (piece -> index), and
    ``max_length`` the length of its longest piece: a scan from one
    position looks up every string up to it. Where no one-character piece
    starts, an :data:`UNKNOWN` node comes first.
    """
    nodes = []
    append = nodes.append
    n = len(text)
    for i, char in enumerate(text):
        k = get(char)
        append((i, i + 1, UNKNOWN if k is None else k))
        stop = i + max_length
        for j in range(i + 2, (n if stop > n else stop) + 1):
            k = get(text[i:j])
            if k is not None:
                append((i, j, k))
    return nodes


class UnitLattices:
    """The lattices of a run of units, kept between EM steps as flat arrays.

    Pieces only ever disappear during training, so a lattice never gains a
    node: it is built once from the seed pieces (``table``, their
    :func:`~subtok.models.unigram.trie.index_table`), then every step
    renumbers the piece ids (:meth:`renumber`). A removed one-character
    piece turns into an unknown node (exactly what the lattice would then
    hold), any other removed piece into a dropped node (probability 0,
    score -inf); dropped nodes are swept out when they become many.
    Units are numbered from 0 in the order of ``texts``. Positions take the
    smallest array type that holds the longest unit's (they are most of
    the trainer's memory).
    """

    def __init__(self, texts: list[str], table: dict[str, int], max_length: int,
                 visit=None) -> None:
        """``visit(u, nodes)``, when given, is called with every unit's
        nodes as soon as they are built (the first E-step runs on these
        rather than taking them back out of the arrays)."""
        get = table.get
        longest = max(map(len, texts), default=0)
        code = "B" if longest <= 0xFF else "H" if longest <= 0xFFFF else "I"
        self.begins, self.ends = array(code), array(code)
        self.ids = array(_id_code(len(table)))
        self.offsets = array("q", [0])
        for u, text in enumerate(texts):
            nodes = populate_nodes(text, get, max_length)
            if nodes:
                begins, ends, ids = zip(*nodes)
                self.begins.extend(begins)
                self.ends.extend(ends)
                self.ids.extend(ids)
            self.offsets.append(len(self.ids))
            if visit is not None:
                visit(u, nodes)

    def nodes(self, u: int) -> list[tuple[int, int, int]]:
        s, t = self.offsets[u], self.offsets[u + 1]
        return list(zip(self.begins[s:t], self.ends[s:t], self.ids[s:t]))

    def renumber(self, mapping: "list[int] | array") -> None:
        """Apply ``mapping``: old id -> new id, UNKNOWN or DROPPED (which map to themselves)."""
        code = _id_code(max(mapping, default=0) + 1)
        self.ids = array(code, map(mapping.__getitem__, self.ids))
        # A dropped node adds nothing to any sum, but the sweep is not
        # cheap either: every element put in a new array is parsed like an
        # argument (a sweep at a sixteenth dropped cost more instructions
        # than the passes it spared). The mask is bytes (one per node, where
        # a list would take a pointer per node).
        if self.ids.count(DROPPED) * 4 > len(self.ids):
            keep = bytes(map(DROPPED.__ne__, self.ids))
            self.ids = array(code, compress(self.ids, keep))
            code = self.begins.typecode
            self.begins = array(code, compress(self.begins, keep))
            self.ends = array(code, compress(self.ends, keep))
            offsets = self.offsets
            counts = [keep.count(1, offsets[u], offsets[u + 1]) for u in range(len(offsets) - 1)]
            self.offsets = array("q", accumulate(counts, initial=0))


def _id_code(size: int) -> str:
    """The array type of node ids for ``size`` pieces (UNKNOWN and DROPPED
    are negative): two bytes while they fit. The seeds are often more than
    fit, the pieces left after the first EM step often fewer, and the ids
    are most of the lattices' memory."""
    return "h" if size <= 0x7FFF else "i"


def populate_marginal(nodes, n: int, weight: int, probs, expected, max_length: int) -> float:
    """``Lattice::PopulateMarginal``: add ``weight`` x the marginal of every
    node to ``expected`` (indexed by piece; UNKNOWN and DROPPED from the
    end); return log Z.

    Forward and backward run on probabilities in doubles, not on float32
    logs (the trainer's arithmetic, see :mod:`subtok.models.unigram.trainer`):
    ``alpha[j]`` gets the contributions of the nodes ending at j, pushed in
    begin order; the backward pass walks the nodes in reverse, so
    ``beta[j]`` is final when a node ending at j is met, and adds the
    node's marginal at once. A unit whose probability underflows is redone
    with rescaling.
    """
    alpha = [0.0] * (n + 1)
    alpha[0] = 1.0
    for i, j, k in nodes:
        alpha[j] += alpha[i] * probs[k]
    z = alpha[n]
    if not z >= _TINY:
        return _populate_marginal_rescaled(nodes, n, weight, probs, expected, max_length)
    scale = weight / z
    alpha = [a * scale for a in alpha]
    beta = [0.0] * (n + 1)
    beta[n] = 1.0
    for i, j, k in reversed(nodes):
        x = probs[k] * beta[j]
        beta[i] += x
        expected[k] += alpha[i] * x
    return math.log(z)


def _rescale(values: list, lo: int, hi: int) -> int:
    """Multiply ``values[lo..hi]`` by the power of two that brings their max near 1."""
    top = max(values[lo:hi + 1])
    if top <= 0.0:
        return 0
    e = -math.frexp(top)[1]
    ldexp = math.ldexp
    for j in range(lo, hi + 1):
        values[j] = ldexp(values[j], e)
    return e


def _populate_marginal_rescaled(nodes, n, weight, probs, expected, max_length) -> float:
    """:func:`populate_marginal` for units whose probabilities underflow doubles.

    When the prefix probability of a position falls below ``_TINY``, it and
    every later position the remaining nodes can reach (``max_length``
    ahead) are multiplied by one power of two, which is exact; the true
    ``alpha[i]`` is ``alpha[i] * 2**-shifts[i]``. The backward pass does the
    same with one running exponent, and every marginal is corrected by the
    difference of exponents.
    """
    alpha = [0.0] * (n + 1)
    alpha[0] = 1.0
    shifts = [0] * (n + 1)
    shift = 0
    current = -1
    for i, j, k in nodes:
        if i != current:  # position i is final: every node ending there was seen
            current = i
            if alpha[i] < _TINY:
                shift += _rescale(alpha, i, min(n, i + max_length))
            shifts[i] = shift
        alpha[j] += alpha[i] * probs[k]
    if alpha[n] < _TINY:
        shift += _rescale(alpha, n, n)
    shifts[n] = shift
    z = alpha[n]
    scale = weight / z
    beta = [0.0] * (n + 1)
    beta[n] = 1.0
    bshift = 0
    current = n
    ldexp = math.ldexp
    for i, j, k in reversed(nodes):
        if i != current:
            if beta[current] < _TINY:
                bshift += _rescale(beta, current, min(n, current + max_length))
            current = i
        x = probs[k] * beta[j]
        beta[i] += x
        expected[k] += ldexp(alpha[i] * x * scale, shift - shifts[i] - bshift)
    return math.log(z) - shift * _LN2


def unit_viterbi(nodes, n: int, scores) -> tuple[list[int], float]:
    """``Lattice::Viterbi`` as the trainer runs it: the piece ids of the
    best path over ``nodes`` (last piece first) and its score.

    ``scores`` is indexed by piece (UNKNOWN and DROPPED from the end).
    Sums are doubles (see the module docstring); of equal sums the earliest
    begin (the longest node) wins, sentencepiece's tie rule, because nodes
    are offered in begin order and only a strictly larger sum replaces.
    """
    best = [-math.inf] * (n + 1)
    best[0] = 0.0
    back = [None] * (n + 1)
    for node in nodes:
        i, j, k = node
        v = best[i] + scores[k]
        if v > best[j]:
            best[j] = v
            back[j] = node
    path = []
    j = n
    while j > 0:
        i, j, k = back[j]
        path.append(k)
        j = i
    return path, best[n]


__all__ = ["BOS", "EOS", "RESET_THRESHOLD", "UNKNOWN", "DROPPED", "Lattice", "UnitLattices",
           "encode_optimized", "passes_reset", "populate_marginal", "populate_nodes",
           "unit_viterbi", "log_sum_exp", "gumbel", "user_defined_score"]
