"""WordPiece training (``--model_type=wordpiece``) against Hugging Face tokenizers.

The oracle is ``tokenizers`` 0.23.3: its BertNormalizer / BertPreTokenizer
for the words training sees, ``BertWordPieceTokenizer.train`` for the
frequency criterion, and ``Tokenizer.from_file`` / ``BertWordPieceTokenizer``
loading the files subtok writes. The likelihood criterion has no oracle: it
is checked against a plain reference implementation (below) that recomputes
every gain from scratch after every merge.

These tests need ``../shared/data`` and fail (not skip) without it.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import subtok
from conftest import run_subtok
from family_data import all_corpora, assert_train_error, corpus, head
from subtok.models.wordpiece.bert_words import WordCounter
from subtok.models.wordpiece.likelihood import merge_by_likelihood
from subtok.models.wordpiece.trainer import (DEFAULT_SPECIAL_TOKENS, count_words, frequency_vocab,
                                             initial_tokens, wordpiece_join)
from subtok.progress import Progress
from subtok.training.pair_merges import PairTable, symbol_char
from subtok.training.spec import TrainerOptions

from tokenizers import BertWordPieceTokenizer, Tokenizer, normalizers, pre_tokenizers


def oracle_vocab(files: list[Path], vocab_size: int, lowercase: bool) -> list[str]:
    """``BertWordPieceTokenizer.train`` (defaults otherwise): tokens by id."""
    tok = BertWordPieceTokenizer(lowercase=lowercase)
    tok.train([str(f) for f in files], vocab_size=vocab_size, show_progress=False)
    return [t for t, _ in sorted(tok.get_vocab().items(), key=lambda kv: kv[1])]


def bert_counter(**bert) -> WordCounter:
    """The trainer's word counter for BertNormalizer options (tokenizers' defaults)."""
    spec = dict(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True)
    spec.update(bert)
    return WordCounter(dict(spec, type="BertNormalizer"))


def options(**changes) -> TrainerOptions:
    return TrainerOptions.from_kwargs(model_type="wordpiece", **changes)


# --------------------------------------------------------------------------
# the words training sees

BERT_SETTINGS = [
    dict(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True),
    dict(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=False),
    dict(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False),
    dict(clean_text=True, handle_chinese_chars=False, strip_accents=False, lowercase=True),
]


@pytest.mark.parametrize("setting", range(len(BERT_SETTINGS)))
def test_words_equal_tokenizers_pipeline_on_every_corpus(setting):
    bert = BERT_SETTINGS[setting]
    ref_norm = normalizers.BertNormalizer(**bert)
    ref_split = pre_tokenizers.BertPreTokenizer()
    counter = bert_counter(**bert)
    for path in all_corpora():
        lines = path.read_bytes().decode("utf-8").split("\n")
        lines = [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
        expected = Counter(w for line in lines
                           for w, _ in ref_split.pre_tokenize_str(ref_norm.normalize_str(line)))
        assert counter.count([(line, 1) for line in lines]) == expected, path.name


def test_odd_whitespace_and_controls_split_like_tokenizers():
    lines = ["a\x0bb c\x0cd e\x85f", "g\x1ch \u3000i\u2028j", "k\u00a0l\tm\rn", "\x00x\ufffdy",
             "Σίσυφος ΣΑΣ", "naïve café 東京タワー 한국어", "x" * 30 + "!?" + "y", "   "]
    for bert in BERT_SETTINGS:
        ref_norm = normalizers.BertNormalizer(**bert)
        split = pre_tokenizers.BertPreTokenizer()
        expected = Counter(w for line in lines
                           for w, _ in split.pre_tokenize_str(ref_norm.normalize_str(line)))
        got = bert_counter(**bert).count([(line, 1) for line in lines])
        assert got == expected, bert


# --------------------------------------------------------------------------
# --wordpiece_criterion=frequency: tokenizers' WordPieceTrainer


def continuation_order(vocab: list[str], prefix: str = "##") -> list[str]:
    return [t for t in vocab if t.startswith(prefix) and len(t) == len(prefix) + 1]


FREQUENCY_CASES = {
    "de_fr_ru_4000_lower": (["de.txt", "fr.txt", "ru.txt"], 0, 4000, True),
    "de_fr_ru_4000_cased": (["de.txt", "fr.txt", "ru.txt"], 0, 4000, False),
    "gutenberg_1mb_3000_lower": (["gutenberg_en.txt"], 1_000_000, 3000, True),
    "gutenberg_1mb_3000_cased": (["gutenberg_en.txt"], 1_000_000, 3000, False),
}


@pytest.mark.parametrize("case", sorted(FREQUENCY_CASES))
def test_frequency_criterion_reproduces_tokenizers(case, tmp_path):
    """tokenizers numbers the ``##c`` forms in its hash map's order, which
    changes from run to run, and ties between equally frequent pairs follow
    those ids: two runs of it may differ. What is stable: the special tokens
    and the alphabet (same ids), the set of ``##c`` forms, and - given a
    run's ``##c`` order - every token and id, which subtok reproduces for
    each run. subtok's own order (code point) gives the same stable part."""
    names, size, vocab_size, lowercase = FREQUENCY_CASES[case]
    files = [head(n, size, tmp_path) if size else corpus(n) for n in names]
    runs = [oracle_vocab(files, vocab_size, lowercase) for _ in range(2)]
    print("tokenizers' two runs are %s" % ("identical" if runs[0] == runs[1] else
                                           "different (%d of %d ids differ)"
                                           % (sum(a != b for a, b in zip(*runs)), vocab_size)))
    opts = options(input=[str(f) for f in files], vocab_size=vocab_size, lowercase=lowercase,
                   wordpiece_criterion="frequency")
    words = count_words(opts, Progress(False), None, bert_counter(lowercase=lowercase))
    for run in runs:
        tokens, _ = frequency_vocab(words, opts, list(DEFAULT_SPECIAL_TOKENS),
                                    continuation_order=continuation_order(run))
        assert tokens == run

    trained = subtok.train([str(f) for f in files], tmp_path / "wp", model_type="wordpiece",
                           vocab_size=vocab_size, lowercase=lowercase,
                           wordpiece_criterion="frequency")
    ours = (tmp_path / "wp.txt").read_text(encoding="utf-8").split("\n")[:-1]
    assert ours == trained.tokens and len(ours) == vocab_size
    fixed = runs[0].index(continuation_order(runs[0])[0])
    assert ours[:fixed] == runs[0][:fixed] == runs[1][:fixed]  # special tokens and alphabet
    assert continuation_order(ours) == sorted(continuation_order(runs[0]))


def test_frequency_vocab_matches_tokenizers_with_special_tokens_and_limits(tmp_path):
    files = [corpus("en.txt"), corpus("zh.txt")]
    specials = ["[UNK]", "<s>", "</s>"]
    opts = options(input=[str(f) for f in files], vocab_size=1500, min_frequency=3,
                   special_tokens=specials, wordpiece_criterion="frequency")
    words = count_words(opts, Progress(False), None, bert_counter())
    # limit_alphabet keeps the most frequent characters; tokenizers breaks a
    # tie at the cut at random, so cut where there is none.
    chars: Counter = Counter()
    for word, count in words.items():
        for char in word:
            chars[char] += count
    ranked = sorted(chars.values(), reverse=True)
    limit = next(k for k in range(200, len(ranked)) if ranked[k - 1] != ranked[k])
    tok = BertWordPieceTokenizer(lowercase=True)
    tok.train([str(f) for f in files], vocab_size=1500, min_frequency=3, limit_alphabet=limit,
              special_tokens=specials, show_progress=False)
    expected = [t for t, _ in sorted(tok.get_vocab().items(), key=lambda kv: kv[1])]
    tokens, _ = frequency_vocab(words, opts.replace(limit_alphabet=limit), specials,
                                continuation_order=continuation_order(expected))
    assert tokens == expected


# --------------------------------------------------------------------------
# --wordpiece_criterion=likelihood against a plain reference


def reference_likelihood(words: dict[str, int], tokens: list[str], vocab_size: int,
                         min_frequency: int, prefix: str = "##") -> list[tuple[str, float]]:
    """Recompute every count and gain from scratch after every merge."""
    join = wordpiece_join(prefix)
    index = {t: i for i, t in enumerate(tokens)}
    segs = {w: [w[0]] + [prefix + c for c in w[1:]] for w in words}
    out = []
    while len(index) < vocab_size:
        unigram: Counter = Counter()
        pairs: Counter = Counter()
        for w, n in words.items():
            seg = segs[w]
            for s in seg:
                unigram[s] += n
            for a, b in zip(seg, seg[1:]):
                pairs[(a, b)] += n
        total = sum(unigram.values())
        best = None
        for (a, b), c in pairs.items():
            if c < max(1, min_frequency):
                continue
            gain = c * (math.log(c) + math.log(total) - math.log(unigram[a]) - math.log(unigram[b]))
            key = (gain, [-ord(x) for x in symbol_char(index[a]) + symbol_char(index[b])])
            if best is None or key > best[0]:
                best = (key, a, b)
        if best is None:
            break
        (gain, _), a, b = best
        text = join(a, b)
        if text not in index:
            index[text] = len(tokens)
            tokens.append(text)
        out.append((text, gain))
        for w, seg in segs.items():
            new, i = [], 0
            while i < len(seg):
                if i + 1 < len(seg) and seg[i] == a and seg[i + 1] == b:
                    new.append(text)
                    i += 2
                else:
                    new.append(seg[i])
                    i += 1
            segs[w] = new
    return out


def fast_likelihood(words: dict[str, int], tokens: list[str], vocab_size: int,
                    min_frequency: int, prefix: str = "##") -> list[tuple[str, float]]:
    index = {t: i for i, t in enumerate(tokens)}
    symbols = [symbol_char(index[w[0]]) + "".join(symbol_char(index[prefix + c]) for c in w[1:])
               for w in words]
    table = PairTable(symbols, list(words.values()))
    added = merge_by_likelihood(table, tokens, join=wordpiece_join(prefix), vocab_size=vocab_size,
                                min_frequency=min_frequency)
    return [(tokens[m.new], m.score) for m in added]


def _start(words: dict[str, int]) -> list[str]:
    alphabet = sorted(set("".join(words)))
    return initial_tokens(["[UNK]"], alphabet, words, "##")


def test_likelihood_hand_computed():
    """"q ##z" is the rarest pair (3) but the best by likelihood, as q and
    ##z only occur together; the frequency criterion would take a pair
    seen 5 times. Symbols: t 15, ##a 10, ##b 5, ##c 5, x 5, q 3, ##z 3;
    N = 46."""
    words = {"ta": 5, "tb": 5, "tc": 5, "xa": 5, "qz": 3}
    base = _start(words)
    merges = fast_likelihood(words, list(base), len(base) + 3, 1)
    first, gain = merges[0]
    assert first == "qz"
    assert gain == 3 * (math.log(3) + math.log(46) - math.log(3) - math.log(3))
    # then x ##a: 5·log(5·43/(5·10)) with N = 46 - 3 = 43
    assert merges[1] == ("xa", 5 * (math.log(5) + math.log(43) - math.log(5) - math.log(10)))
    assert merges == reference_likelihood(words, list(base), len(base) + 3, 1)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(alphabet="abcde", min_size=1, max_size=7),
                       st.integers(min_value=1, max_value=30), min_size=1, max_size=25),
       st.integers(min_value=1, max_value=3), st.integers(min_value=1, max_value=40))
def test_likelihood_fast_path_equals_reference(words, min_frequency, extra):
    base = _start(words)
    size = len(base) + extra
    assert fast_likelihood(words, list(base), size, min_frequency) == \
        reference_likelihood(words, list(base), size, min_frequency)


def test_likelihood_equals_reference_on_real_words():
    opts = options(input=[str(corpus("fr.txt"))])
    words = count_words(opts, Progress(False), None, bert_counter())
    words = dict(sorted(words.items(), key=lambda kv: (-kv[1], kv[0]))[:1500])
    base = _start(words)
    size = len(base) + 250
    assert fast_likelihood(words, list(base), size, 2) == \
        reference_likelihood(words, list(base), size, 2)


# --------------------------------------------------------------------------
# the files, loaded by tokenizers


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("criterion", ["likelihood", "frequency"])
def test_files_load_in_tokenizers_and_agree(criterion, tmp_path):
    trained = subtok.train([str(corpus("de.txt")), str(corpus("ja.txt"))], tmp_path / "wp",
                           model_type="wordpiece", vocab_size=3000, wordpiece_criterion=criterion,
                           lowercase=False)
    from_json = Tokenizer.from_file(str(tmp_path / "wp.json"))
    from_txt = BertWordPieceTokenizer(str(tmp_path / "wp.txt"), lowercase=False)
    assert from_json.get_vocab() == {t: i for i, t in enumerate(trained.tokens)}
    for path in all_corpora():
        lines = _lines(path)
        a = from_json.encode_batch(lines)
        b = from_txt.encode_batch(lines)
        assert [e.ids for e in a] == [e.ids for e in b], path.name
    encoded = from_json.encode("Das ist ein Test.")
    assert encoded.tokens[0] == "[CLS]" and encoded.tokens[-1] == "[SEP]"
    document = json.loads((tmp_path / "wp.json").read_text(encoding="utf-8"))
    assert document["normalizer"] == {"type": "BertNormalizer", "clean_text": True,
                                      "handle_chinese_chars": True, "strip_accents": None,
                                      "lowercase": False}
    assert [t["content"] for t in document["added_tokens"]] == list(DEFAULT_SPECIAL_TOKENS)
    vocab = (tmp_path / "wp.vocab").read_text(encoding="utf-8").splitlines()
    assert [line.split("\t")[0] for line in vocab] == trained.tokens


def test_likelihood_is_deterministic_across_runs_and_threads(tmp_path, monkeypatch):
    data = head("gutenberg_en.txt", 2_500_000, tmp_path)  # above the parallel threshold
    outputs = []
    for run, threads in enumerate((1, 2, 2)):
        subtok.train(str(data), tmp_path / ("m%d" % run), model_type="wordpiece",
                     vocab_size=1500, num_threads=threads)
        outputs.append([(tmp_path / ("m%d%s" % (run, s))).read_bytes()
                        for s in (".json", ".txt", ".vocab")])
    assert outputs[0] == outputs[1] == outputs[2]


def test_sampling_and_tsv_input(tmp_path):
    path = corpus("en.txt")
    a = subtok.train(str(path), tmp_path / "a", model_type="wordpiece", vocab_size=800,
                     input_sentence_size=1000, random_seed=5)
    b = subtok.train(str(path), tmp_path / "b", model_type="wordpiece", vocab_size=800,
                     input_sentence_size=1000, random_seed=5)
    c = subtok.train(str(path), tmp_path / "c", model_type="wordpiece", vocab_size=800)
    assert a.tokens == b.tokens != c.tokens
    counts = Counter(_lines(path))
    tsv = tmp_path / "lines.tsv"
    tsv.write_text("".join("%s\t%d\n" % kv for kv in counts.items()), encoding="utf-8")
    d = subtok.train(str(tsv), tmp_path / "d", model_type="wordpiece", vocab_size=800,
                     input_format="tsv")
    assert d.tokens == c.tokens


# --------------------------------------------------------------------------
# the command line


def test_cli_trains_and_writes_three_files(tmp_path):
    result = run_subtok("train", "--input", str(corpus("fr.txt")), "--model_prefix",
                        str(tmp_path / "m"), "--model_type=wordpiece", "--vocab_size=900",
                        "--wordpiece_criterion=frequency", "--lowercase=false",
                        "--special_tokens=[UNK],[CLS],[SEP]", "--num_threads=2")
    assert result.stderr == b""
    assert sorted(os.listdir(tmp_path)) == ["m.json", "m.txt", "m.vocab"]
    vocab = (tmp_path / "m.txt").read_text(encoding="utf-8").split("\n")
    assert vocab[:3] == ["[UNK]", "[CLS]", "[SEP]"] and len(vocab) == 901
    assert Tokenizer.from_file(str(tmp_path / "m.json")).encode("Bonjour").tokens[0] == "[CLS]"


def test_cli_warns_about_sentencepiece_options(tmp_path):
    result = run_subtok("train", "--input", str(corpus("fr.txt")), "--model_prefix",
                        str(tmp_path / "m"), "--model_type=wordpiece", "--vocab_size=900",
                        "--character_coverage=0.99", "--split_digits")
    assert result.stderr.decode().splitlines() == [
        "subtok: warning: --character_coverage has no effect on wordpiece training.",
        "subtok: warning: --split_digits has no effect on wordpiece training."]


ERRORS = {
    "criterion": (["--wordpiece_criterion=best"], "--wordpiece_criterion=best: must be "
                                                   "likelihood or frequency."),
    "no_unk": (["--special_tokens=[CLS],[SEP]"], "--special_tokens must include the unknown "
                                                 "token [UNK] (--unk_token)."),
    "twice": (["--special_tokens=[UNK],[UNK]"], "--special_tokens: [UNK] is given twice."),
    "accents": (["--strip_accents=maybe"], "--strip_accents=maybe: must be auto"),
    "prefix": (["--continuing_subword_prefix= "], "--continuing_subword_prefix=' ': must be"),
    "limit": (["--limit_alphabet=-1"], "--limit_alphabet=-1: not a 64-bit unsigned integer"),
    "missing": (["--input=/nonexistent/x.txt"], "/nonexistent/x.txt: cannot open input file"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_cli_errors_are_one_line_and_write_nothing(case, tmp_path):
    assert_train_error("wordpiece", *ERRORS[case], tmp_path)


def test_invalid_utf8_is_an_error_naming_the_input(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"good line\nbad \xff byte\n")
    with pytest.raises(subtok.TrainerError, match="bad.txt: the input is not valid UTF-8"):
        subtok.train(str(bad), tmp_path / "m", model_type="wordpiece", vocab_size=100)
    assert not list(tmp_path.glob("m.*"))
