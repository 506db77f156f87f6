"""Subword regularization options shared by every model that samples.

Limits and messages of sentencepiece 0.2.3's sampling and n-best API, and
how subtok seeds its random generators. The algorithms live with the
models: unigram sampling and n-best over the lattice
(:mod:`subtok.models.unigram.lattice`), BPE-dropout in
:meth:`subtok.models.bpe.model.BPEModel.merge`.

Randomness always comes from a ``random.Random`` passed in by the caller,
so that callers decide about seeding (the CLI seeds one generator per input
line, which keeps ``--random_seed`` reproducible with any number of worker
processes).
"""

from __future__ import annotations

import random

#: sentencepiece's ``kMaxNBestSize``: larger n-best / sampling sizes fail.
MAX_NBEST_SIZE = 512

#: 0.2.3's Python ``encode(enable_sampling=True)`` rejects these arguments.
SAMPLING_ARGS_MESSAGE = (
    'When enable_sampling is True, We must specify "nbest_size > 1" or "nbest_size = -1", '
    'and "alpha". "nbest_size" is enabled only on unigram mode ignored in BPE-dropout. '
    'when "nbest_size = -1" , this method samples from all candidates on the lattice '
    'instead of nbest segmentations.')


def new_rng(seed: int | None = None) -> random.Random:
    """A generator seeded with ``seed``, or from fresh OS entropy if None."""
    return random.Random(seed)


#: The generator processors share unless given their own (sentencepiece
#: too has one process-wide seed, ``SetRandomGeneratorSeed``).
_shared: list[random.Random] = []


def shared_rng() -> random.Random:
    """The process-wide generator (fresh entropy until seeded)."""
    if not _shared:
        _shared.append(random.Random())
    return _shared[0]


def seed_shared_rng(seed: int | None) -> None:
    """``set_random_generator_seed``: reseed the process-wide generator."""
    shared_rng().seed(seed)


def line_rng(seed: int, line_number: int) -> random.Random:
    """The generator for one input line under ``--random_seed``.

    Seeding from (seed, line number) rather than sharing one stream makes a
    line's sample independent of which worker process encodes it and of
    the lines before it. The combination is arithmetic, not ``hash()``,
    which is salted per process for strings.
    """
    return random.Random(seed * 1_000_003 + line_number)


__all__ = ["MAX_NBEST_SIZE", "SAMPLING_ARGS_MESSAGE", "new_rng", "line_rng", "shared_rng",
           "seed_shared_rng"]
