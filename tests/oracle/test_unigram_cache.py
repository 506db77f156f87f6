"""The unigram per-word cache never changes a result.

The fast path reuses each word's standalone segmentation only when float32
rounding at the sentence's accumulated score cannot flip it; these tests
hold it against a plain whole-sentence Viterbi (no cache) and against
sentencepiece on the lines where the accumulated score is largest: the
longest paragraphs of gutenberg_en and runs of tie-prone characters.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import CORPORA_DIR, MODELS_DIR, corpus_paths, needs_corpora, needs_data
from subtok import SentencePieceProcessor
from subtok.models.unigram.lattice import encode_optimized
from tiny_models import META, N, S, lines_of, make


TIE_PRONE = ["-" * 5000, "\u2026" * 700, ("ab " * 3000).strip(), "=-" * 2000,
             ". " * 2500, ("x" * 9 + " ") * 500]


def _longest_lines(count: int) -> list[str]:
    lines = (CORPORA_DIR / "gutenberg_en.txt").read_text(encoding="utf-8").split("\n")
    return sorted(lines, key=len)[-count:]


@needs_data
@pytest.mark.parametrize("name", ["maxtext_c4_unigram32k", "test_model", "chinese_llama_human_unigram"])
def test_cached_encoding_equals_whole_sentence_viterbi_and_oracle(spm, name):
    import subtok
    path = str(MODELS_DIR / (name + ".model"))
    mine = subtok.SentencePieceProcessor(path)
    ref = spm.SentencePieceProcessor(model_file=path)
    model = mine.model
    for text in _longest_lines(12) + TIE_PRONE:
        normalized = mine.normalizer.normalize(text)
        cached = model.encode(normalized)
        path_nodes, _ = encode_optimized(model, normalized)
        plain = [(normalized[b:b + n], i) for b, n, i, _ in path_nodes]
        assert cached == plain
        assert mine.encode(text) == ref.encode(text)
        assert lines_of(mine).encode_line(text, True) == " ".join(map(str, ref.encode(text)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(offsets=st.lists(st.integers(-6, 6), min_size=5, max_size=5), scale=st.integers(16, 20),
       words=st.lists(st.sampled_from(["ab", "ba", "aba", "abab", "bab", "a", "b", "c", "abc"]),
                      min_size=1, max_size=5),
       filler=st.integers(0, 3500))
def test_near_ties_at_large_accumulated_scores_match_sentencepiece(spm, offsets, scale, words,
                                                                   filler):
    """Words whose segmentations tie up to a few 2**-scale, after filler
    words that push the accumulated score up to ~213000 (ulp 1/64), past
    sentencepiece's reset to 0 at 100000 and again at 200000: the cache
    must reuse a word only where float32 rounding cannot flip its path,
    and fall back to the exact computation elsewhere."""
    d = [k * 2.0 ** -scale for k in offsets]
    model = make(META + [(S, -1.0, N), ("a", -2.0, N), ("b", -2.0, N), ("c", -60.0, N),
                         ("ab", -4.0 + d[0], N), (S + "a", -3.0 + d[1], N), (S + "ab", -5.0 + d[2], N),
                         ("ba", -4.0 + d[3], N), ("bab", -6.0 + d[4], N)])
    ref = spm.SentencePieceProcessor(model_proto=model)
    mine = SentencePieceProcessor(model_proto=model)
    tail = " ".join(words)
    mine.encode(tail)
    lines_of(mine).encode_line(tail, True)  # both caches now hold the words computed alone
    lines_of(mine).encode_line(tail, False)
    line = "c " * filler + tail
    expected = ref.encode(line)
    assert mine.encode(line) == expected
    assert lines_of(mine).encode_line(line, True) == " ".join(map(str, expected))
    assert lines_of(mine).encode_line(line, False) == " ".join(ref.encode(line, out_type=str))


@pytest.mark.parametrize("scale", [16, 18, 20])
@pytest.mark.parametrize("sign", [-1, 1])
def test_near_tie_across_a_range_of_offsets_matches_sentencepiece(spm, scale, sign):
    """One word whose two segmentations differ by 2**-scale, cached alone,
    then placed after 0..6144 filler words: every offset from exact reuse
    to certain float32 collapse (where the first offered, "▁ab", wins even
    when it is the smaller) must give sentencepiece's answer."""
    model = make(META + [(S, -1.0, N), ("a", -2.5, N), ("b", -2.5, N), ("c", -60.0, N),
                         ("ab", -4.0, N), (S + "ab", -5.0 + sign * 2.0 ** -scale, N)])
    ref = spm.SentencePieceProcessor(model_proto=model)
    mine = SentencePieceProcessor(model_proto=model)
    mine.encode("ab")
    lines_of(mine).encode_line("ab", True)
    for filler in [0] + [2 ** k for k in range(12)] + [3 * 2 ** k for k in range(10)]:
        line = "c " * filler + "ab ab"
        expected = ref.encode(line)
        assert mine.encode(line) == expected, filler
        assert lines_of(mine).encode_line(line, True) == " ".join(map(str, expected)), filler
        assert lines_of(mine).encode_line(line, False) == " ".join(ref.encode(line, out_type=str)), filler


@pytest.mark.parametrize("sign", [-1, 1])
def test_lines_longer_than_the_robustness_table_covers_take_the_exact_path(spm, monkeypatch, sign):
    """With the longest accepted line cut to 4 pieces, a word robust enough
    for that (gap 2**-10, robustness about 1000) is no longer marked weak;
    placed after thousands of filler pieces, where float32 rounding can
    flip it, its line must still leave the cache for the exact path."""
    import subtok.lines.fastpath.plain_lines
    monkeypatch.setattr(subtok.lines.fastpath.plain_lines, "MAX_PIECES", 4)
    model = make(META + [(S, -1.0, N), ("a", -2.5, N), ("b", -2.5, N), ("c", -60.0, N),
                         ("ab", -4.0, N), (S + "ab", -5.0 + sign * 2.0 ** -10, N)])
    ref = spm.SentencePieceProcessor(model_proto=model)
    mine = SentencePieceProcessor(model_proto=model)
    assert lines_of(mine).encode_line("ab", True) == " ".join(map(str, ref.encode("ab")))
    for filler in (1500, 3000, 6000, 12000):
        line = "c " * filler + "ab"
        assert lines_of(mine).encode_line(line, True) == " ".join(map(str, ref.encode(line))), filler


@pytest.mark.parametrize("sign", [-1, 1])
def test_weak_word_is_reused_only_after_as_few_pieces_as_its_mark_allows(spm, sign):
    """A word with a near tie of 2**-10 (robustness about 1000: reusable
    after some 16 pieces of score up to 60) placed after 0 to 12000 filler
    words, and before them: the mark must count the pieces before it."""
    model = make(META + [(S, -1.0, N), ("a", -2.5, N), ("b", -2.5, N), ("c", -60.0, N),
                         ("ab", -4.0, N), (S + "ab", -5.0 + sign * 2.0 ** -10, N)])
    ref = spm.SentencePieceProcessor(model_proto=model)
    mine = SentencePieceProcessor(model_proto=model)
    for filler in (0, 4, 8, 16, 32, 1500, 3000, 6000, 12000):
        for line in ("c " * filler + "ab", "ab " + "c " * filler, "ab " + "c " * filler + "ab"):
            assert lines_of(mine).encode_line(line, True) == " ".join(map(str, ref.encode(line))), filler


@pytest.mark.parametrize("sign", [-1, 1])
@pytest.mark.parametrize("run", [1, 300, 700, 1650])
def test_weak_words_after_runs_of_reused_words_match_sentencepiece(spm, sign, run):
    """context_head reuses robust words in runs, with the exact score only
    where a weak word needs it: weak words every ``run`` fillers, along a
    line whose score passes the reset threshold twice (fillers add 60
    each), must come out as sentencepiece has them, in the library and
    through the CLI's line path."""
    model = make(META + [(S, -1.0, N), ("a", -2.5, N), ("b", -2.5, N), ("c", -60.0, N),
                         ("ab", -4.0, N), (S + "ab", -5.0 + sign * 2.0 ** -10, N)])
    ref = spm.SentencePieceProcessor(model_proto=model)
    mine = SentencePieceProcessor(model_proto=model)
    line = ("c " * run + "ab ") * (4200 // run + 1)
    expected = ref.encode(line)
    assert mine.encode(line) == expected
    assert lines_of(mine).encode_line(line, True) == " ".join(map(str, expected))


def test_near_tie_just_past_the_reset_threshold_matches_sentencepiece(spm):
    """Found by the Hypothesis test above: where the accumulated score
    passes -100000 (here -100040), sentencepiece 0.2.3 shifts its scores
    back to 0 and breaks the tie at the end as at score 0; the float32 DP
    without that reset gives '▁a bab' instead of '▁ab ab'."""
    d = 2.0 ** -14
    model = make(META + [(S, -1.0, N), ("a", -2.0, N), ("b", -2.0, N), ("c", -60.0, N),
                         ("ab", -4.0, N), (S + "a", -3.0, N), (S + "ab", -5.0, N),
                         ("ba", -4.0, N), ("bab", -6.0 - d, N)])
    ref = spm.SentencePieceProcessor(model_proto=model)
    mine = SentencePieceProcessor(model_proto=model)
    line = "c " * 1640 + "abab"
    assert mine.encode(line) == ref.encode(line)
    assert lines_of(mine).encode_line(line, True) == " ".join(map(str, ref.encode(line)))


@pytest.mark.parametrize("sign", [-1, 1])
def test_reset_inside_a_cached_word_moves_the_score_the_next_word_starts_from(spm, sign):
    """The fillers bring the score near -100000; inside "▁xyz" (one piece)
    the values at "▁x" and "▁xy", off the best path, pass it first, so
    sentencepiece shifts by those and "▁xyz" ends near +26 instead of
    -99984. The near tie of "ab" after it (2**-10: kept at 26, lost to
    float32 at -99984) shows which score it started from."""
    model = make(META + [(S, -1.0, N), ("a", -2.5, N), ("b", -2.5, N), ("c", -60.0, N),
                         ("x", -30.0, N), ("y", -30.0, N), ("z", -30.0, N), (S + "xyz", -5.0, N),
                         ("ab", -4.0, N), (S + "ab", -5.0 + sign * 2.0 ** -10, N)])
    ref = spm.SentencePieceProcessor(model_proto=model)
    mine = SentencePieceProcessor(model_proto=model)
    for filler in range(1634, 1644):
        line = "c " * filler + "xyz ab"
        expected = ref.encode(line)
        assert mine.encode(line) == expected, filler
        assert lines_of(mine).encode_line(line, True) == " ".join(map(str, expected)), filler


@pytest.mark.parametrize("capacity", [1, 3])
def test_caches_that_start_over_constantly_stay_exact(spm, monkeypatch, capacity):
    """With room for a token or three, the caches start over between almost
    every two lines: weak words and unknown edges must never be forgotten
    in the middle of a line that already looked them up."""
    import subtok.models.base
    import subtok.lines.fastpath.plain_lines
    import subtok.lines.fastpath.lines
    monkeypatch.setattr(subtok.lines.fastpath.plain_lines, "MAX_TOKENS", capacity)
    monkeypatch.setattr(subtok.lines.fastpath.plain_lines, "MAX_PARTS", capacity)
    monkeypatch.setattr(subtok.lines.fastpath.lines, "MAX_WORDS", capacity)
    monkeypatch.setattr(subtok.lines.fastpath.lines, "MAX_LINE_WORDS", capacity)
    monkeypatch.setattr(subtok.models.base, "MAX_CACHED", capacity)
    near = make(META + [(S, -1.0, N), ("a", -2.5, N), ("b", -2.5, N), ("c", -60.0, N),
                        ("ab", -4.0, N), (S + "ab", -5.0 - 2.0 ** -16, N)])
    models = [near, make(META + [(S, -1.0, N), ("a", -2.0, N)], "bpe"),
              make(META + [(S, -1.0, N), ("a", -2.0, N)], "char")]
    lines = ["c", "c " * 1500 + "ab b", "c", "c " * 1500 + "ab zz", "c " * 1500 + "ab ab", "ab c ab",
             "ab " * 3 + "c " * 1200 + "ab", "z a zz a", "zz zz", "a\tz z\u3000z",
             "\u65e5 \u65e5\u65e5", "a\tz", "a\tz z\ta"]
    for model in models:
        ref = spm.SentencePieceProcessor(model_proto=model)
        mine = SentencePieceProcessor(model_proto=model)
        for _ in range(2):
            for line in lines:
                assert lines_of(mine).encode_line(line, True) == " ".join(map(str, ref.encode(line))), line


@needs_data
@pytest.mark.parametrize("workers", [1, 4])
def test_a_worker_keeps_its_share_of_the_caches(spm, monkeypatch, workers):
    """In one of N worker processes the CLI caches start over at 1/N of
    their size (N workers then hold what one process would), and the
    output stays sentencepiece's."""
    import subtok.lines.fastpath.plain_lines
    from subtok.lines.batch import LineEncoder
    monkeypatch.setattr(subtok.lines.fastpath.plain_lines, "MAX_TOKENS", 400)
    monkeypatch.setattr(subtok.lines.fastpath.plain_lines, "MAX_PARTS", 400)
    path = str(MODELS_DIR / "maxtext_c4_unigram32k.model")
    ref = spm.SentencePieceProcessor(model_file=path)
    mine = SentencePieceProcessor(path)
    encoder = LineEncoder(mine, "id")
    encoder.in_worker(workers)
    texts = encoder.lines_cache._plain_encoder(True)._texts
    words = encoder.lines_cache.word_entries(True)
    largest = 0
    for block in range(20):
        lines = ["w%dx%d said, the t%d." % (block, k, k % 7) for k in range(30)]
        got = encoder.block("\n".join(lines).encode()).decode().split("\n")[:-1]
        assert got == [" ".join(map(str, ref.encode(line))) for line in lines]
        largest = max(largest, len(texts), len(words._parts) + len(words._spaced))
    # A block adds up to 30 distinct tokens (and their parts) past the bound.
    assert 400 // workers <= largest < 400 // workers + 100


@needs_data
@pytest.mark.parametrize("name", ["maxtext_c4_unigram32k", "atmt_en_fr_bpe16k"])
def test_parts_one_worker_computed_serve_another_without_recomputing(spm, name):
    """Worker processes pass each other the parts they segmented (see
    WordEntries.take_news): a worker that took them in encodes the same
    lines without segmenting any part, and still as sentencepiece does."""
    from subtok.lines.batch import LineEncoder
    path = str(MODELS_DIR / ("%s.model" % name))
    ref = spm.SentencePieceProcessor(model_file=path)
    lines = [line.decode() for line in
             (CORPORA_DIR / "gutenberg_en.txt").read_bytes().split(b"\n")[2000:2300]]
    block = "\n".join(lines).encode()
    expected = [" ".join(map(str, ref.encode(line))) for line in lines]
    first, second = (LineEncoder(SentencePieceProcessor(path), "id") for _ in range(2))
    first.in_worker(2)
    second.in_worker(2)
    assert first.news() is None
    assert first.block(block).decode().split("\n")[:-1] == expected
    news = first.news()
    assert news is not None and len(news[0]) + len(news[1]) > 500
    assert first.news() is None  # taken: only what is new since then comes next
    second.learn(news)

    def segment(*args):
        raise AssertionError("a part was segmented again")

    second.lines_cache.word_entries(True)._part_output = segment
    assert second.block(block).decode().split("\n")[:-1] == expected
    assert second.news() is None


@needs_data
def test_news_that_would_fill_a_workers_cache_is_left_out(monkeypatch):
    import subtok.lines.fastpath.plain_lines
    monkeypatch.setattr(subtok.lines.fastpath.plain_lines, "MAX_PARTS", 100)
    processor = SentencePieceProcessor(str(MODELS_DIR / "maxtext_c4_unigram32k.model"))
    entries = lines_of(processor).word_entries(True)
    entries.learn(({"a%d" % k: str(k) for k in range(60)}, {}))
    entries.learn(({}, {"b%d" % k: str(k) for k in range(60)}))  # 120 > 100: left out
    entries.learn(({}, {"c%d" % k: str(k) for k in range(30)}))
    assert (len(entries._parts), len(entries._spaced)) == (60, 30)


@needs_data
@pytest.mark.parametrize("capacity", [1, 400_000])
@pytest.mark.parametrize("name", ["maxtext_c4_unigram32k", "test_model"])
def test_block_path_decides_plainness_per_token(spm, monkeypatch, capacity, name):
    """The CLI's block path decides once per distinct token whether
    normalization can touch it: a line where one token needs a rule (full
    width, a tab, a typed "▁", an invalid byte, a ligature, a control
    character) must leave the plain path, also when that token or its
    neighbours are already cached from plain lines. Such a line is then
    joined from the tokens of its normalized text, unless a typed "▁"
    that normalization keeps (test_model's does) makes a word of its own."""
    import subtok.lines.fastpath.plain_lines
    from subtok.lines.batch import LineEncoder
    monkeypatch.setattr(subtok.lines.fastpath.plain_lines, "MAX_TOKENS", capacity)
    path = str(MODELS_DIR / (name + ".model"))
    ref = spm.SentencePieceProcessor(model_file=path)
    lines = ["the quick fox", "the \uff51uick fox", "the quick\tfox", "the \u2581quick fox",
             "the quick fox", "\ufb01ne quick fox", "the qu\x07ick fox", "  the   quick  ",
             "the quick fox\r", "the quick fox", "the\u00a0quick fox", "\u2581\u2581the fox",
             "the \u2581", "the\u00a0\u00a0quick\u3000\u3000fox\u00a0", "\u2581 the", "the\u2581\u00a0fox",
             "\uff41\u2581\u2581b", "\uff41 \u2581", "\uff41\u2581", "\u2581\uff41 b"]
    block = "\n".join(lines).encode("utf-8") + b"\n\xff fox"
    expected = [" ".join(map(str, ref.encode(line))) for line in lines]
    expected.append(" ".join(map(str, ref.encode(b"\xff fox"))))
    encoder = LineEncoder(SentencePieceProcessor(path), "id")
    for _ in range(2):
        assert encoder.block(block).decode("utf-8").split("\n")[:-1] == expected


@pytest.mark.parametrize("sign", [-1, 1])
@pytest.mark.parametrize("byte_fallback", [False, True])
def test_weak_word_after_unknown_pieces_counts_what_the_model_added(spm, sign, byte_fallback):
    """Ids bound the accumulated score more tightly than a piece count,
    except where an id hides what the model added: each unknown character
    stood for unk_score (-70 here), whatever its id or its bytes' ids score.
    After a token holding hundreds of them (accumulated score past 8192,
    where float32 steps exceed the weak word's near tie of 2**-10), the
    weak word must not be reused."""
    model = make(META + [(S, -1.0, N), ("a", -2.5, N), ("b", -2.5, N), ("c", -60.0, N),
                         ("ab", -4.0, N), (S + "ab", -5.0 + sign * 2.0 ** -10, N)],
                 byte_fallback=byte_fallback)
    ref = spm.SentencePieceProcessor(model_proto=model)
    mine = SentencePieceProcessor(model_proto=model)
    for unknowns in (1, 2, 50, 100, 150, 200, 300, 400, 800):
        for line in ("c" + "\u00e9" * unknowns + "c ab", "c c" + "\u00e9" * unknowns + "c c ab ab"):
            assert lines_of(mine).encode_line(line, True) == " ".join(map(str, ref.encode(line))), unknowns
            assert lines_of(mine).encode_line(line, False) == " ".join(ref.encode(line, out_type=str))


@pytest.mark.parametrize("sign", [-1, 1])
def test_context_lines_keep_whitespace_pieces(spm, sign):
    """A line recomputed in context reads its other words' pieces back
    from their output: a piece that is whitespace to ``str.split`` (a
    carriage return, a vertical tab) must stay a piece."""
    model = make(META + [(S, -1.0, N), ("a", -2.5, N), ("b", -2.5, N), ("c", -60.0, N),
                         ("\r", -3.0, N), ("\x0b", -3.0, N), ("ab", -4.0, N),
                         (S + "ab", -5.0 + sign * 2.0 ** -16, N)])
    ref = spm.SentencePieceProcessor(model_proto=model)
    mine = SentencePieceProcessor(model_proto=model)
    for filler in (0, 8, 64, 512, 2048):
        line = "c\r " * filler + "ab \x0bab\r"
        assert lines_of(mine).encode_line(line, True) == " ".join(map(str, ref.encode(line))), filler
        assert lines_of(mine).encode_line(line, False) == " ".join(ref.encode(line, out_type=str)), filler


def _joined_corpus_line(count: int, start: int) -> str:
    """``count`` corpus lines, taken in turn from each shared corpus from
    line ``start`` on, joined by spaces: one very long mixed line."""
    corpora = []
    for path in corpus_paths():  # only the lines the join can reach are read
        with open(path, "rb") as handle:
            head = list(itertools.islice(handle, start + count))
        corpora.append([line.rstrip(b"\n").decode("utf-8", "replace") for line in head])
    parts = [corpora[k % len(corpora)][(start + k) % len(corpora[k % len(corpora)])].strip()
             for k in range(count)]
    return " ".join(part for part in parts if part)


@needs_corpora
def test_long_line_through_several_resets_matches_sentencepiece(spm):
    """250 corpus lines joined (22k characters): sentencepiece shifts its
    scores back to 0 where they pass -100000, which changes the float32
    rounding of everything after; at about -171026 in unshifted terms
    "en"+"tion" and "ent"+"ion" tie in float32 without the shift and not
    with it. Our cached encoding equals our whole-line float32 Viterbi
    (which shifts too) and sentencepiece."""
    path = str(MODELS_DIR / "hf_test_sentencepiece_no_bos.model")
    mine = SentencePieceProcessor(path)
    ref = spm.SentencePieceProcessor(model_file=path)
    line = _joined_corpus_line(250, 25)
    normalized = mine.normalizer.normalize(line)
    nodes, _ = encode_optimized(mine.model, normalized)
    whole = mine.postprocessor.process([(normalized[b:b + n], i) for b, n, i, _ in nodes])
    cached = mine.encode(line)
    assert cached == [i for _, i in whole]
    assert cached == ref.encode(line)
