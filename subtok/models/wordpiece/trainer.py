"""WordPiece trainer (BERT): ``subtok train --model_type=wordpiece``.

Phases:

1. *words* - every input line goes through BERT's pipeline
   (:mod:`subtok.models.wordpiece.bert_words`: the engine's BertNormalizer
   with ``--lowercase``, ``--strip_accents``, ``--clean_text``,
   ``--handle_chinese_chars``, then its BertPreTokenizer); the distinct
   words are counted in worker processes;
2. *alphabet* - the characters of the words, at most ``--limit_alphabet``
   of them (the most frequent; among equally frequent ones the smaller code
   point), in code point order;
3. *symbols* - a word is its first character followed by its other
   characters in continuation form (``##c``, ``--continuing_subword_prefix``);
4. *merges* - by ``--wordpiece_criterion``:

   * ``frequency``: ``tokenizers``' ``WordPieceTrainer``, which is its BPE
     trainer with the ``##`` prefix (``models/wordpiece/trainer.rs`` wraps
     ``BpeTrainer``): the most frequent pair, ties to the smallest pair of
     ids (:func:`subtok.training.pair_merges.merge_by_frequency`); a
     character outside the alphabet is dropped from its word, as there;
   * ``likelihood`` (default): the pair with the largest likelihood gain
     (:mod:`subtok.models.wordpiece.likelihood`); words that encoding turns
     into the unknown token whatever the vocabulary (a character outside
     the alphabet, or more than ``--max_input_chars_per_word`` characters)
     are left out;

   a merged token is the left token followed by the right one without its
   ``##``, and training stops at ``--vocab_size`` tokens or when no pair is
   seen ``--min_frequency`` times;
5. *files* - ``PREFIX.json`` (tokenizer.json: BertNormalizer,
   BertPreTokenizer, WordPiece model, BERT template post-processor,
   WordPiece decoder), ``PREFIX.txt`` (BERT ``vocab.txt``, id = line) and
   ``PREFIX.vocab`` (token, and the count or gain at which it was added).

Ids: the special tokens (``[PAD] [UNK] [CLS] [SEP] [MASK]`` by default),
the alphabet, the continuation forms ``##c`` in code point order, then the
merged tokens in merge order. ``tokenizers`` numbers the ``##c`` forms in
the order its hash map hands out the words, which changes from run to run
(and with it the winner of ties between equally frequent pairs); subtok's
order is fixed, and :func:`frequency_vocab` accepts ``tokenizers``' order
to reproduce a given run of it exactly.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from subtok.errors import TrainerError
from subtok.formats import hf_json
from subtok.formats.bert_vocab import vocab_txt
from subtok.formats.scored_vocab import scores_vocab
from subtok.models.wordpiece.bert_words import WordCounter
from subtok.models.wordpiece.likelihood import merge_by_likelihood
from subtok.progress import Progress
from subtok.training.units import sorted_by_count
from subtok.training.families import Trained, count_pretokens
from subtok.training.pair_merges import PairTable, first_scores, merge_by_frequency, symbol_char
from subtok.training.spec import TrainerOptions, strip_accents_value

#: ``BertWordPieceTokenizer.train``'s special tokens, in id order.
DEFAULT_SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")

_SURROGATE = re.compile("[\ud800-\udfff]")


def _count_chunk(counter: WordCounter, lines: list[tuple[str, int]]) -> Counter:
    """A task of :func:`count_words` (module level: workers get it by reference)."""
    return counter.count(lines)


def pretoken_counter(options: TrainerOptions) -> tuple:
    """How training counts its words (:func:`subtok.training.families.pretoken_counter`)."""
    return _count_chunk, WordCounter(bert_normalizer(options))


def count_words(options: TrainerOptions, progress: Progress, lines: Iterable | None,
                counter: WordCounter) -> Counter:
    """Phase 1: the words of the corpus, counted (each chunk of lines
    normalizes its own distinct tokens: a little work is repeated across
    chunks, but no process ever holds every distinct token of the corpus)."""
    words = count_pretokens(options, progress, lines, _count_chunk, counter)
    bad = next((w for w in words if _SURROGATE.search(w)), None)
    if bad is not None:
        raise TrainerError("%s: the input is not valid UTF-8 (near %r): WordPiece vocabularies "
                           "are text." % (", ".join(options.input) or "<sentences>", bad))
    return words


def limited_alphabet(words: Counter, limit: int) -> list[str]:
    """Phase 2: the characters kept, in code point order."""
    chars: Counter = Counter()
    for word, count in words.items():
        for char in word:
            chars[char] += count
    ranked = sorted(chars, key=lambda c: (-chars[c], c))
    if limit > 0:
        ranked = ranked[:limit]
    return sorted(ranked)


def wordpiece_join(prefix: str):
    """How two tokens merge: the right one loses its continuation prefix."""
    size = len(prefix)

    def join(left: str, right: str) -> str:
        return left + (right[size:] if right.startswith(prefix) else right)
    return join


def initial_tokens(specials: Iterable[str], alphabet: list[str], words: Iterable[str],
                   prefix: str, continuation_order: list[str] | None = None) -> list[str]:
    """Phase 3's vocabulary: special tokens, alphabet, continuation forms.

    A continuation form ``##c`` exists for every single-character token
    ``c`` found after the first character of a word; ``continuation_order``
    (``tokenizers``' order of them) replaces code point order.
    """
    tokens = list(dict.fromkeys(specials))
    known = set(tokens)
    tokens.extend(c for c in alphabet if c not in known)
    singles = {t for t in tokens if len(t) == 1}
    inner = set("".join(word[1:] for word in words))
    forms = [prefix + c for c in sorted(inner & singles)]
    if continuation_order is not None:
        if sorted(continuation_order) != sorted(forms):
            raise TrainerError("continuation_order must hold exactly the continuation forms %s."
                               % " ".join(forms))
        forms = list(continuation_order)
    known = set(tokens)
    tokens.extend(f for f in forms if f not in known)
    return tokens


def symbol_words(words: list[tuple[str, int]], tokens: list[str], prefix: str,
                 skip_unknown: bool) -> tuple[list[str], list[int]]:
    """Phase 3: words as symbol strings. A character without a token is
    dropped (``tokenizers``' ``tokenize_words``), or with ``skip_unknown``
    the whole word is."""
    index = {t: i for i, t in enumerate(tokens)}
    chars = set("".join(w for w, _ in words))
    first = {ord(c): symbol_char(index[c]) if c in index else None for c in chars}
    inner = {ord(c): symbol_char(index[prefix + c]) if prefix + c in index and c in index
             else None for c in chars}
    out, counts = [], []
    for word, count in words:
        symbols = word[0].translate(first) + word[1:].translate(inner)
        if skip_unknown and len(symbols) != len(word):
            continue
        out.append(symbols)
        counts.append(count)
    return out, counts


def frequency_vocab(words: Counter, options: TrainerOptions, specials: list[str], *,
                    progress: Progress | None = None,
                    continuation_order: list[str] | None = None) -> tuple[list[str], list[float]]:
    """Tokens and scores of ``tokenizers``' WordPieceTrainer (see the module docstring)."""
    alphabet = limited_alphabet(words, options.limit_alphabet)
    tokens = initial_tokens(specials, alphabet, words, options.continuing_subword_prefix,
                            continuation_order)
    ordered = sorted_by_count(words)
    del words  # (freed here when the caller kept no reference)
    return _merged(ordered, tokens, options, progress, merge_by_frequency, skip_unknown=False)


def likelihood_vocab(words: Counter, options: TrainerOptions, specials: list[str], *,
                     progress: Progress | None = None) -> tuple[list[str], list[float]]:
    """Tokens and scores of likelihood training (see the module docstring)."""
    alphabet = limited_alphabet(words, options.limit_alphabet)
    known = set(alphabet)
    limit = options.max_input_chars_per_word
    ordered = [(w, c) for w, c in sorted_by_count(words)
               if len(w) <= limit and known.issuperset(w)]
    del words
    tokens = initial_tokens(specials, alphabet, (w for w, _ in ordered),
                            options.continuing_subword_prefix)
    return _merged(ordered, tokens, options, progress, merge_by_likelihood, skip_unknown=True)


def _merged(ordered: list[tuple[str, int]], tokens: list[str], options: TrainerOptions,
            progress: Progress | None, merge, skip_unknown: bool) -> tuple[list[str], list[float]]:
    """Phases 3 and 4: ``tokens`` extended by ``merge`` (either engine), and
    every token's score."""
    prefix = options.continuing_subword_prefix
    table = PairTable(*symbol_words(ordered, tokens, prefix, skip_unknown=skip_unknown))
    ordered.clear()  # the table holds the words now
    bar = (progress or Progress(False)).bar(total=max(0, options.vocab_size - len(tokens)),
                                            desc="wordpiece merges", unit=" tokens")
    with bar:
        merges = merge(table, tokens, join=wordpiece_join(prefix), vocab_size=options.vocab_size,
                       min_frequency=options.min_frequency, bar=bar)
    return tokens, first_scores(len(tokens), merges)


def train(options: TrainerOptions, progress: Progress, lines: Iterable | None) -> Trained:
    """Train WordPiece; return its tokens and files (see the module docstring)."""
    specials = list(options.special_tokens or DEFAULT_SPECIAL_TOKENS)
    if options.unk_token not in specials:
        raise TrainerError("--special_tokens must include the unknown token %s (--unk_token)."
                           % options.unk_token)
    # The counter subtok count uses too, so count files match this training.
    _, counter = pretoken_counter(options)
    bert = counter.shape["normalizer"]
    build = frequency_vocab if options.wordpiece_criterion == "frequency" else likelihood_vocab
    # (no name holds the words here: the builder frees them once it has its table)
    tokens, scores = build(count_words(options, progress, lines, counter),
                           options, specials, progress=progress)
    if len(tokens) > options.vocab_size:
        progress.warning("the alphabet alone has %d tokens, more than --vocab_size=%d."
                         % (len(tokens), options.vocab_size))
    return Trained(model_type="wordpiece", tokens=tokens, scores=scores,
                   files=_files(options, bert, tokens, scores))


def bert_normalizer(options: TrainerOptions) -> dict:
    """The tokenizer.json ``BertNormalizer`` of the options: written to
    PREFIX.json and built by the training words' counter, so both agree."""
    return {"type": "BertNormalizer", "clean_text": options.clean_text,
            "handle_chinese_chars": options.handle_chinese_chars,
            "strip_accents": strip_accents_value(options), "lowercase": options.lowercase}


def _files(options: TrainerOptions, bert: dict, tokens: list[str],
           scores: list[float]) -> dict[str, bytes]:
    """The three output files: tokenizer.json, vocab.txt and the scored .vocab."""
    index = {t: i for i, t in enumerate(tokens)}
    specials = options.special_tokens or DEFAULT_SPECIAL_TOKENS
    post = None
    if "[CLS]" in index and "[SEP]" in index:
        post = hf_json.bert_template(("[CLS]", index["[CLS]"]), ("[SEP]", index["[SEP]"]))
    model = {"type": "WordPiece", "unk_token": options.unk_token,
             "continuing_subword_prefix": options.continuing_subword_prefix,
             "max_input_chars_per_word": options.max_input_chars_per_word, "vocab": index}
    document = hf_json.tokenizer(
        model, added_tokens=[hf_json.added_token(index[t], t) for t in specials],
        normalizer=bert, pre_tokenizer={"type": "BertPreTokenizer"}, post_processor=post,
        decoder={"type": "WordPiece", "prefix": options.continuing_subword_prefix,
                 "cleanup": True})
    return {".json": hf_json.json_bytes(document), ".txt": vocab_txt(tokens),
            ".vocab": scores_vocab(tokens, scores)}


__all__ = ["train", "pretoken_counter", "frequency_vocab", "likelihood_vocab", "count_words",
           "limited_alphabet", "initial_tokens", "DEFAULT_SPECIAL_TOKENS"]
