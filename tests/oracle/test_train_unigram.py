"""The unigram trainer (subtok/trainers/unigram.py) against sentencepiece 0.2.3.

Acceptance of issue 4: trained with the same options, at least 95% of the
pieces in common with sentencepiece's unigram model and tokens per held-out
line within 1% of it; the model loads in sentencepiece and encodes exactly
as subtok does; the result does not depend on ``num_threads``.

Held-out lines: each corpus is cut into its first 90% of lines (training
input of both trainers) and the remaining 10% (evaluation).

The phases are also checked alone: seed substrings against a brute-force
byte-level suffix tree, the rescaled forward/backward against a log-space
one, the prune's alternatives, finalize.
"""

from __future__ import annotations

import math
from collections import Counter
from types import SimpleNamespace

import pytest
from pathlib import Path

from conftest import CORPORA_DIR, needs_data
from subtok.symbols import END_OF_TEXT


def _split_corpus(name: str, tmp_path, share: float = 0.9):
    """(training file, held-out lines) from the raw bytes of a corpus."""
    lines = (CORPORA_DIR / name).read_bytes().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    cut = int(len(lines) * share)
    path = tmp_path / ("train_" + name)
    path.write_bytes(b"\n".join(lines[:cut]) + b"\n")
    return path, [line.decode("utf-8") for line in lines[cut:]]


def _normal_pieces(spm, model_path) -> list[str]:
    from sentencepiece import sentencepiece_model_pb2
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(model_path.read_bytes())
    return [p.piece for p in proto.pieces if p.type == 1]


def _train_subtok(source, prefix, **options):
    from subtok.training.api import train
    return train(input=str(source), model_prefix=str(prefix), model_type="unigram",
                 quiet=True, **options)


# ----------------------------------------------------------------------------
# end to end, against the oracle


@needs_data
@pytest.mark.parametrize("corpus, vocab_size", [
    ("botchan.txt", 1000),
    ("botchan.txt", 4000),
    ("ja.txt", 2000),
    ("wagahaiwa_nekodearu.txt", 4000),
])
def test_unigram_vocabulary_close_to_sentencepiece(spm, tmp_path, corpus, vocab_size):
    source, held_out = _split_corpus(corpus, tmp_path)
    _train_subtok(source, tmp_path / "ours", vocab_size=vocab_size)
    spm.SentencePieceTrainer.train(input=str(source), model_prefix=str(tmp_path / "ref"),
                                   vocab_size=vocab_size, model_type="unigram", num_threads=1,
                                   minloglevel=2)
    ours = _normal_pieces(spm, tmp_path / "ours.model")
    ref = _normal_pieces(spm, tmp_path / "ref.model")
    assert len(ours) == len(ref) == vocab_size - 3
    assert len(set(ours)) == len(ours)
    common = len(set(ours) & set(ref))
    assert common >= 0.95 * len(ref), (common, sorted(set(ref) - set(ours))[:20])

    sp_ours = spm.SentencePieceProcessor(model_file=str(tmp_path / "ours.model"))
    sp_ref = spm.SentencePieceProcessor(model_file=str(tmp_path / "ref.model"))
    ours_tokens = sum(map(len, sp_ours.encode(held_out)))
    ref_tokens = sum(map(len, sp_ref.encode(held_out)))
    assert abs(ours_tokens - ref_tokens) <= 0.01 * ref_tokens, (ours_tokens, ref_tokens)

    import subtok
    mine = subtok.SentencePieceProcessor(tmp_path / "ours.model")
    for line in held_out[:200]:
        assert mine.encode(line) == sp_ours.encode(line)


@needs_data
def test_unigram_training_is_deterministic_across_threads(tmp_path, monkeypatch):
    from subtok.models.unigram import trainer as unigram
    from subtok.training import corpus
    # Small chunks and no size threshold: the workers really run, each on
    # many chunks (when the machine has more than one CPU).
    monkeypatch.setattr(corpus, "NORMALIZE_PARALLEL_MIN_CHARS", 0)
    monkeypatch.setattr(corpus, "NORMALIZE_CHUNK_CHARS", 20000)
    monkeypatch.setattr(unigram, "PARALLEL_MIN_WORK", 0)
    monkeypatch.setattr(unigram, "EM_CHUNK_CHARS", 4000)
    monkeypatch.setattr(unigram, "PRUNE_CHUNK_COST", 4000)
    monkeypatch.setattr(unigram, "SEED_PARTITION_SUFFIXES", 20000)
    source = CORPORA_DIR / "de.txt"
    outputs = []
    for threads in (1, 2):
        (tmp_path / str(threads)).mkdir()
        monkeypatch.chdir(tmp_path / str(threads))
        prefix = Path("m")  # the same prefix in both runs: it is recorded in the model
        model = _train_subtok(source, prefix, vocab_size=800, num_threads=threads)
        outputs.append((prefix.with_suffix(".vocab").read_bytes(),
                        prefix.with_suffix(".model").read_bytes(), model.pieces, model.scores))
    assert outputs[0] == outputs[1]


@needs_data
def test_deferred_corpus_trains_as_a_loaded_one(monkeypatch):
    """A deferred corpus (read by the trainer in a child, as api.train has
    it for large files) gives the pieces and alphabet of the loaded one."""
    from subtok.models.unigram import trainer as unigram
    from subtok.training import corpus as corpus_module
    from subtok.training.spec import TrainerOptions
    monkeypatch.setattr(corpus_module, "LOAD_IN_CHILD_MIN_BYTES", 0)
    options = TrainerOptions.from_kwargs(input=[str(CORPORA_DIR / "ja.txt")],
                                         model_type="unigram", vocab_size=2000, num_threads=1)
    deferred = corpus_module.load_corpus(options, defer=True)
    assert deferred.load is not None and not deferred.sentences and not deferred.alphabet
    loaded = corpus_module.load_corpus(options)
    assert loaded.load is None and loaded.sentences
    assert unigram.train(deferred, options) == unigram.train(loaded, options)
    assert deferred.alphabet == loaded.alphabet and deferred.meta == loaded.meta


def _deferred_and_loaded(path, monkeypatch, **flags):
    """(deferred corpus once loaded, loaded corpus, options) of ``path``,
    the deferred one read in small chunks by two workers."""
    from subtok.training import corpus as corpus_module
    from subtok.training import followers
    from subtok.training.spec import TrainerOptions
    monkeypatch.setattr(corpus_module, "LOAD_IN_CHILD_MIN_BYTES", 0)
    monkeypatch.setattr(corpus_module, "NORMALIZE_PARALLEL_MIN_CHARS", 0)
    monkeypatch.setattr(corpus_module, "NORMALIZE_CHUNK_CHARS", 5000)
    monkeypatch.setattr(corpus_module, "NORMALIZE_MIN_CHUNK_CHARS", 5000)
    monkeypatch.setattr(followers, "COUNT_BATCH_CHARS", 700)
    flags = dict(dict(model_type="unigram", vocab_size=2000, num_threads=2), **flags)
    options = TrainerOptions.from_kwargs(input=[str(path)], **flags)
    deferred = corpus_module.load_corpus(options, defer=True).load()
    options = TrainerOptions.from_kwargs(input=[str(path)], **dict(flags, num_threads=1))
    return deferred, corpus_module.load_corpus(options), options


@needs_data
@pytest.mark.parametrize("lines, flags, counted", [
    ("botchan", {}, True),
    ("botchan", {"treat_whitespace_as_suffix": True}, True),
    ("botchan", {"split_by_whitespace": False}, True),
    ("botchan", {"allow_whitespace_only_pieces": True, "remove_extra_whitespaces": False}, True),
    ("botchan", {"add_dummy_prefix": False, "user_defined_symbols": "the,ing"}, True),
    ("botchan", {"input_sentence_size": 1500, "shuffle_input_sentence": True}, True),
    ("botchan", {"character_coverage": 0.98}, True),
    ("tsv", {"input_format": "tsv"}, True),
    ("blank", {}, False),                         # a line normalizing to "" (order swapped)
    ("nospace", {"character_coverage": 0.5}, False),   # "▁" masked: no word split
    ("nul", {"normalization_rule_name": "identity"}, False),
    ("botchan", {"pretokenization_delimiter": "e"}, False),
])
def test_deferred_units_and_seed_entries_are_the_sentences_ones(tmp_path, monkeypatch, lines,
                                                                 flags, counted):
    """The deferred corpus's units and seed entries, counted chunk by chunk
    in the normalizing workers, are those of the kept sentences (the
    corner cases where they would differ load the sentences)."""
    from subtok.models.unigram import trainer as unigram
    text = (CORPORA_DIR / "botchan.txt").read_text(encoding="utf-8").splitlines()[:2000]
    if lines == "tsv":
        text = ["%s\t%d" % (line, 1 + i % 3) for i, line in enumerate(text) if line.strip()]
    elif lines == "blank":
        text[100] = "   "
    elif lines == "nospace":
        text = [line.replace(" ", "") for line in text]
    elif lines == "nul":
        text[100] = "a\0b " + text[100]
    path = tmp_path / "input.txt"
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    deferred, loaded, options = _deferred_and_loaded(path, monkeypatch, **flags)
    assert (deferred.entries is not None) == counted and bool(deferred.sentences) != counted
    assert loaded.entries is None and loaded.sentences
    units, entries = unigram.collect_units(deferred, options)
    assert units == unigram.collect_units(loaded, options)[0]
    assert entries == unigram.collect_units(loaded, options)[1]
    assert deferred.alphabet == loaded.alphabet and list(deferred.alphabet) == list(loaded.alphabet)


@needs_data
def test_progress_reports_em_steps():
    from subtok.models.unigram import trainer as unigram
    from subtok.training.corpus import load_corpus
    from subtok.training.spec import TrainerOptions
    options = TrainerOptions.from_kwargs(input=[str(CORPORA_DIR / "ja.txt")],
                                         model_type="unigram", vocab_size=2000, num_threads=1)
    corpus = load_corpus(options)
    lines: list[str] = []
    pieces = unigram.train(corpus, options, lines.append)
    assert any(line.startswith("EM sub_iter=0 size=") and " obj=" in line for line in lines)
    assert any(line.startswith("prune size=") for line in lines)
    assert unigram.train(corpus, options, None) == pieces  # progress=None is fine too
    assert len(pieces) == 2000 - len(corpus.meta)
    scores = [s for _, s in pieces]
    assert scores == sorted(scores, reverse=True)
    assert set(corpus.alphabet) <= {p for p, _ in pieces}


# ----------------------------------------------------------------------------
# phases


def _brute_force_nodes(sentences: list[str], validator, max_length: int) -> dict[str, int]:
    """sentencepiece 0.2.3's seed substrings, from a plain suffix sort.

    Internal nodes of the byte-level suffix tree of the sentences joined by
    NUL (none after the last one), on character boundaries, as valid pieces
    of 2 .. max_length characters; a node ending with a NUL counts for the
    string before it, and the counts of a string found both ways add up.
    """
    data = b"\0".join(s.encode("utf-8") for s in sentences)
    width = 4 * (max_length + 2)
    order = sorted(range(len(data)), key=lambda p: data[p:p + width])

    def lcp(a: int, b: int) -> int:
        x, y = data[a:a + width], data[b:b + width]
        m = 0
        while m < len(x) and m < len(y) and x[m] == y[m]:
            m += 1
        return m

    found: dict[str, int] = Counter()
    stack = [(0, 0)]
    for i in range(1, len(order) + 1):
        depth = lcp(order[i - 1], order[i]) if i < len(order) else 0
        left = i - 1
        while depth < stack[-1][0]:
            node_depth, left = stack.pop()
            raw = data[order[left]:order[left] + node_depth]
            if raw.endswith(b"\0"):
                raw = raw[:-1]
            if b"\0" not in raw:
                try:
                    piece = raw.decode("utf-8")
                except UnicodeDecodeError:
                    piece = ""
                if 2 <= len(piece) <= max_length and validator.is_valid(piece):
                    found[piece] += i - left
        if depth > stack[-1][0]:
            stack.append((depth, left))
    return dict(found)


@needs_data
@pytest.mark.parametrize("corpus, flags", [
    ("botchan.txt", {}),
    ("botchan.txt", {"treat_whitespace_as_suffix": True}),
    ("botchan.txt", {"split_by_whitespace": False}),
    ("botchan.txt", {"add_dummy_prefix": False}),
    ("de.txt", {}),
    ("ja.txt", {}),
])
def test_seed_substrings_are_the_suffix_tree_nodes(corpus, flags, monkeypatch):
    from subtok.models.unigram import trainer as unigram
    from subtok.training.corpus import load_corpus
    from subtok.training.spec import TrainerOptions
    from subtok.training.validity import PieceValidator
    lines = (CORPORA_DIR / corpus).read_text(encoding="utf-8").split("\n")[:300]
    options = TrainerOptions.from_kwargs(model_type="unigram", vocab_size=8000, **flags)
    loaded = load_corpus(options, lines=lines)
    validator = PieceValidator(options)
    _, entries = unigram.collect_units(loaded, options)
    found = unigram.frequent_substrings(entries, options.max_sentencepiece_length, validator)
    expected = _brute_force_nodes([s for s, _ in loaded.sentences], validator,
                                  options.max_sentencepiece_length)
    assert dict(found) == expected
    assert found == sorted(found, key=lambda kv: (-kv[1], kv[0]))
    # The compact hand-over (what the reading child sends), small
    # partitions run by two workers, and counts beyond 64 bits (count
    # files) find the same.
    compact = unigram.SeedEntries(entries)
    assert dict(compact.items()) == entries and len(compact) == len(entries)
    assert list(compact.ends) == [key for key in entries if END_OF_TEXT in key]
    monkeypatch.setattr(unigram, "PARALLEL_MIN_WORK", 0)
    monkeypatch.setattr(unigram, "SEED_PARTITION_SUFFIXES", 500)
    assert unigram.frequent_substrings(compact, options.max_sentencepiece_length, validator,
                                       num_threads=2) == found
    huge = {key: count << 70 for key, count in entries.items()}
    assert (unigram.frequent_substrings(huge, options.max_sentencepiece_length, validator)
            == [(piece, count << 70) for piece, count in found])


@needs_data
def test_seed_layout_is_each_entry_cut_at_its_follower():
    """The seed search's layout (``scan`` and ``weight_at``) made with
    C-level passes over the joined keys is each key's stretch, NUL for its
    follower and separator, its count at each of those positions; keys
    those passes cannot take (a separator inside, a NUL that is not only
    the follower's first) are laid out one by one, the same way."""
    from subtok.models.unigram import trainer as unigram
    from subtok.training.corpus import load_corpus
    from subtok.training.spec import TrainerOptions
    lines = (CORPORA_DIR / "botchan.txt").read_text(encoding="utf-8").split("\n")[:300]
    options = TrainerOptions.from_kwargs(model_type="unigram", vocab_size=8000)
    _, entries = unigram.collect_units(load_corpus(options, lines=lines), options)
    assert any("\x00" in key for key in entries) and any(END_OF_TEXT in key for key in entries)
    odd = dict(entries)
    odd["ab\uffffc" + "d"] = 3       # a separator inside a stretch
    odd["xy" + "\x00\x00"] = 2      # NUL as the follower's character too
    for given in (entries, odd):
        expected_scan, expected_weights = [], []
        for key, count in unigram.SeedEntries(given).items():
            cut = key.find("\x00")
            cut = len(key) - 1 if cut < 0 else cut
            expected_scan.append(key[:cut] + "\x00" * (len(key) - cut + 1))
            expected_weights += [count] * (len(key) + 1)
        scan, weight_at = unigram._scan_layout(unigram.SeedEntries(given), 18)
        assert scan == "".join(expected_scan) + "\x00" * 18
        assert list(weight_at) == expected_weights + [0] * 18


def _log_space_expected(text: str, model, weight: float) -> tuple[dict[int, float], float]:
    """Reference forward/backward with log-sum-exp (no rescaling needed)."""
    n = len(text)
    nodes = []
    for i in range(n):
        single = False
        for j in range(i + 1, min(n, i + model.max_length) + 1):
            k = model.table.get(text[i:j])
            if k is not None:
                nodes.append((i, j, k, model.scores[k]))
                single = single or j == i + 1
        if not single:
            nodes.append((i, i + 1, model.unk_index, model.unk_score))

    def lse(values):
        top = max(values)
        return top + math.log(math.fsum(math.exp(v - top) for v in values))

    alpha = [[] for _ in range(n + 1)]
    alpha_final = [0.0] * (n + 1)
    alpha[0] = [0.0]
    for i, j, k, s in sorted(nodes, key=lambda x: x[0]):
        if alpha[i]:
            alpha_final[i] = lse(alpha[i])
            alpha[i] = []
        alpha[j].append(alpha_final[i] + s)
    alpha_final[n] = lse(alpha[n])
    beta = [[] for _ in range(n + 1)]
    beta_final = [0.0] * (n + 1)
    for i, j, k, s in sorted(nodes, key=lambda x: -x[1]):
        if beta[j]:
            beta_final[j] = lse(beta[j])
            beta[j] = []
        beta[i].append(s + beta_final[j])
    z = alpha_final[n]
    expected: dict[int, float] = Counter()
    for i, j, k, s in nodes:
        expected[k] += weight * math.exp(alpha_final[i] + s + beta_final[j] - z)
    return expected, z


def test_forward_backward_rescales_long_units():
    from subtok.models.unigram import trainer as unigram
    from subtok.models.unigram.lattice import populate_marginal, populate_nodes
    text = ("\u2581" + "abcab" * 7 + "c") * 120  # 4440 characters, Z far below 1e-308
    pieces = [("a", -9.0), ("b", -9.5), ("c", -10.0), ("\u2581", -8.0), ("ab", -7.0),
              ("bc", -12.0), ("abc", -6.5), ("ca", -11.0), ("\u2581ab", -8.5)]
    model = unigram._Model(pieces)
    probs = model.node_probs
    got = [0.0] * (len(pieces) + 2)
    loglik = 0.0
    for unit, weight in ((text, 3), ("cab\u2581x", 2)):
        nodes = populate_nodes(unit, model.table.get, model.max_length)
        loglik += weight * populate_marginal(nodes, len(unit), weight, probs, got,
                                             model.max_length)
    got[0] += got[-1]  # unknown nodes count for piece 0
    want, z = _log_space_expected(text, model, 3)
    want_short, z_short = _log_space_expected("cab\u2581x", model, 2)
    assert z < -800  # the linear-space path had to rescale
    assert loglik == pytest.approx(3 * z + 2 * z_short, rel=1e-12)
    for k in range(len(pieces)):
        total = want.get(k, 0.0) + want_short.get(k, 0.0)
        assert got[k] == pytest.approx(total, rel=1e-9, abs=1e-12)


def test_piece_alternatives():
    from subtok.models.unigram import trainer as unigram
    model = unigram._Model([("a", -2.0), ("b", -2.0), ("ab", -3.0), ("bb", -9.0), ("abb", -4.5)])
    assert unigram.piece_alternatives(model, "a") is None          # a single path
    assert unigram.piece_alternatives(model, "ab") == [0, 1]       # a + b is the runner-up
    assert unigram.piece_alternatives(model, "bb") is False        # b + b beats it
    assert unigram.piece_alternatives(model, "abb") == [2, 1]      # ab + b


def test_m_step_and_digamma():
    from subtok.models.unigram import trainer as unigram
    # sentencepiece's series is good to ~1e-10
    assert unigram.digamma(1.0) == pytest.approx(-0.5772156649015329, abs=1e-9)
    assert unigram.digamma(10.5) == pytest.approx(2.3030010342976865, abs=1e-9)
    pieces = [("x", 0.0), ("y", 0.0), ("z", 0.0)]
    out = unigram.run_m_step(pieces, [10.0, 0.49, 2.0])
    assert [p for p, _ in out] == ["x", "z"]
    # expected count 10 over a total of 12 (the dropped 0.49 does not count):
    # digamma(10) - digamma(12) = -(1/10 + 1/11), computed independently
    assert out[0][1] == pytest.approx(-(1 / 10 + 1 / 11), abs=1e-6)


def test_finalize_adds_every_character_and_sorts():
    from subtok.float32 import f32
    from subtok.models.unigram import trainer as unigram
    pieces = [("ab", -1.0), ("a", -2.0), ("abc", -2.0), ("bc", -5.0)]
    alphabet = {"a": 10, "b": 7, "c": 7}
    out = unigram.finalize(pieces, alphabet, 5)
    assert [p for p, _ in out] == ["ab", "a", "abc", "c", "b"]
    assert dict(out)["b"] == -5.0 and dict(out)["c"] == f32(-5.0 + f32(0.0001))


def test_collect_units_matches_words_with_counts():
    from subtok.models.unigram import trainer as unigram
    from subtok.training.corpus import words_with_counts
    from subtok.training.spec import TrainerOptions
    sentences = [("\u2581a\u2581bb\u2581a", 1), ("x\u2581a", 1), ("\u2581bb\u2585c\u2581a", 3),
                 ("\u2581a", 1), ("\u2581\u2581q", 1)]
    corpus = SimpleNamespace(sentences=sentences, alphabet={}, meta=[])
    for flags in ({}, {"treat_whitespace_as_suffix": True}, {"allow_whitespace_only_pieces": True}):
        options = TrainerOptions.from_kwargs(model_type="unigram", **flags)
        units, entries = unigram.collect_units(corpus, options)
        assert units == words_with_counts(corpus, options)
    options = TrainerOptions.from_kwargs(model_type="unigram")
    _, entries = unigram.collect_units(corpus, options)
    # stretch + follower: the next character; U+2585 cuts a word; at a
    # sentence end NUL + the next sentence's first character; END at the end
    assert entries["\u2581a\u2581"] == 1
    assert entries["\u2581a\0x"] == 1
    assert entries["\u2581a\0\u2581"] == 1 + 3 + 1
    assert entries["\u2581bb\u2585"] == 3 and entries["c\u2581"] == 3
    assert entries["x\u2581"] == 1 and entries["\u2581\u2581"] == 1
    assert entries["\u2581q" + END_OF_TEXT] == 1
    assert entries["\u2581bb\u2581"] == 1 and len(entries) == 9


@needs_data
@pytest.mark.parametrize("workers,compact", [(1, False), (2, False), (2, True)])
def test_cached_lattices_match_fresh_ones(monkeypatch, workers, compact):
    """Renumbered lattices (dropped pieces, lost characters, new order) give
    exactly what lattices built from scratch for the new pieces give (built
    from the seeds as a list, or compactly as the trainer passes them)."""
    from subtok.models.unigram import trainer as unigram
    from subtok.training.corpus import load_corpus
    from subtok.training.spec import TrainerOptions
    from subtok.training.validity import PieceValidator
    monkeypatch.setattr(unigram, "PARALLEL_MIN_WORK", 0)
    monkeypatch.setattr(unigram, "EM_CHUNK_CHARS", 3000)
    lines = (CORPORA_DIR / "botchan.txt").read_text(encoding="utf-8").split("\n")[:400]
    options = TrainerOptions.from_kwargs(model_type="unigram", vocab_size=8000)
    corpus = load_corpus(options, lines=lines)
    units, entries = unigram.collect_units(corpus, options)
    seeds = unigram.make_seed_pieces(corpus, options, entries, PieceValidator(options))
    # Keep every third piece, lose the characters "e" and "t", reverse the order.
    later = [(p, s - 0.5) for n, (p, s) in enumerate(seeds) if n % 3 == 0 and p not in "et"][::-1]
    first = seeds
    if compact:
        first = unigram._CompactPieces(seeds)
        assert list(first) == seeds and len(first) == len(seeds)
        assert first[0] == seeds[0] and first[-1] == seeds[-1] and first[3:5] == seeds[3:5]
        assert list(first.names()) == [p for p, _ in seeds]
    cached = unigram._LatticeRunner(units, workers)
    try:
        unigram.run_e_step(unigram._Model(first), first, cached)
        got = unigram.run_e_step(unigram._Model(later), later, cached)
        got_viterbi = list(cached.run("viterbi", unigram._Model(later), later))
    finally:
        cached.close()
    fresh = unigram._LatticeRunner(units, 1)
    try:
        want = unigram.run_e_step(unigram._Model(later), later, fresh)
        want_viterbi = list(fresh.run("viterbi", unigram._Model(later), later))
    finally:
        fresh.close()
    assert got == want
    assert got_viterbi == want_viterbi


def test_prune_unreachable_after_a_prune_searches_only_pieces_with_unknown_characters():
    from subtok.models.unigram import trainer as unigram
    # "b" is not a piece: "abc"'s alternative a + <unk> + c (6 - 11 + 6)
    # beats its own -1, so the search must look at it; "ac"'s characters
    # are pieces, and it loses to a + c, while "ca" beats c + a.
    pieces = [("a", 6.0), ("c", 6.0), ("abc", -1.0), ("ac", -1.0), ("ca", 20.0)]
    full = unigram.prune_unreachable(pieces)
    assert [p for p, _ in full] == ["a", "c", "ca"]
    assert unigram.prune_unreachable(pieces, pruned=True) == [
        ("a", 6.0), ("c", 6.0), ("ac", -1.0), ("ca", 20.0)]


@needs_data
def test_prune_unreachable_after_a_prune_is_the_full_search(monkeypatch):
    """What :func:`prune` keeps, the full search and the shortcut agree on."""
    from subtok.models.unigram import trainer as unigram
    from subtok.training.corpus import load_corpus
    from subtok.training.spec import TrainerOptions
    from subtok.training.validity import PieceValidator
    lines = (CORPORA_DIR / "botchan.txt").read_text(encoding="utf-8").split("\n")[:400]
    options = TrainerOptions.from_kwargs(model_type="unigram", vocab_size=300)
    corpus = load_corpus(options, lines=lines)
    units, entries = unigram.collect_units(corpus, options)
    pieces = unigram.make_seed_pieces(corpus, options, entries, PieceValidator(options))
    lattices = unigram._LatticeRunner(units, 1)
    try:
        for _ in range(2):
            expected, _ = unigram.run_e_step(unigram._Model(pieces), pieces, lattices)
            pieces = unigram.run_m_step(pieces, expected)
        # a prune that drops a character, so the shortcut has suspects
        pieces, _ = unigram.prune(pieces, unigram._Model(pieces), lattices, 300, 0.5)
    finally:
        lattices.close()
    singles = {p for p, _ in pieces if len(p) == 1}
    assert any(not singles.issuperset(p) for p, _ in pieces)
    assert unigram.prune_unreachable(pieces, pruned=True) == unigram.prune_unreachable(pieces)
