"""A tokenizer assembled from stage components, as a Hugging Face
``tokenizer.json`` describes one; named after ``tokenizers.Tokenizer``
where the two overlap.

::

    from subtok.tokenizer import Tokenizer
    tok = Tokenizer.from_file("tokenizer.json")
    enc = tok.encode("Hello world")
    enc.ids, enc.tokens, enc.offsets
    tok.decode(enc.ids)

How a text is encoded (``TokenizerImpl::encode_single_sequence`` and
``post_process`` in ``tokenizers/src/tokenizer/mod.rs``):

1. added tokens with ``normalized: false`` are cut out of the raw text;
2. each other piece is normalized, and added tokens with
   ``normalized: true`` are cut out of it (:mod:`subtok.added_vocabulary`);
3. the pre-tokenizer cuts each remaining piece into words;
4. the model segments each word (cached per word);
5. the post-processor adds special tokens (and trims offsets).

Every piece is an :class:`~subtok.normalizers.aligned.AlignedString`, so
each token's span in the original text is known. :meth:`Tokenizer.encode_fast`
runs the same steps without alignments (pre-tokenizers then cut plain
strings), for callers that want ids and tokens only, like the command-line
encoder.

Other formats plug in as further loaders that build the same components
and call ``Tokenizer(TokenizerParts(...))``: a GPT-2 ``vocab.json`` +
``merges.txt`` pair is a ByteLevel pre-tokenizer
(:class:`subtok.pretokenizers.bytelevel.ByteLevel`), a merge-list BPE model
(:class:`subtok.models.mergebpe.model.MergeBPE`) and a ByteLevel decoder;
a tiktoken rank file is a Split pre-tokenizer with the encoding's pattern,
a ByteLevel pre-tokenizer without its regex, a MergeBPE with every split
of each token as merges and ``ignore_merges``, and added special tokens; a
BERT ``vocab.txt`` is BertNormalizer + BertPreTokenizer + WordPiece +
TemplateProcessing + the WordPiece decoder.

Stored ``truncation`` and ``padding`` (:mod:`subtok.postprocessors.limits`)
are applied as ``tokenizers`` applies them; set :attr:`Tokenizer.truncation`
or :attr:`Tokenizer.padding` to None to switch them off (the command-line
encoder does: see docs/tokenizer-json.md).

A Tokenizer read from JSON pickles as that JSON text.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain
from operator import itemgetter
from pathlib import Path

from subtok.added_vocabulary import AddedVocabulary
from subtok.collector import collector_paused
from subtok.encoding import Encoding
from subtok.errors import ModelFileError
from subtok.formats.tokenizer_json import TokenizerParts, parse_json, read_parts
from subtok.normalizers.aligned import AlignedString

_IDS = itemgetter(0)  # WordTokens.ids
_VALUES = itemgetter(1)  # WordTokens.values


class Tokenizer:
    """Normalizer, pre-tokenizer, model, post-processor and decoder, plus
    the added tokens."""

    def __init__(self, parts: TokenizerParts, json_text: str | None = None,
                 source: str = "<tokenizer>") -> None:
        self.model = parts.model
        self.normalizer = parts.normalizer
        self.pre_tokenizer = parts.pre_tokenizer
        self.post_processor = parts.post_processor
        self.decoder = parts.decoder
        self.truncation = parts.truncation
        self.padding = parts.padding
        self.added = AddedVocabulary(list(parts.added_tokens), self.model, self.normalizer)
        self.source = source
        self._json = json_text
        # A pre-tokenizer that must know where pieces start in the original
        # text (Metaspace with prepend_scheme "first") needs alignments even
        # when only ids are asked for.
        self._fast_is_exact = not getattr(self.pre_tokenizer, "needs_alignment", False)

    # -- loading -------------------------------------------------------------
    @classmethod
    def from_str(cls, json_text: str, source: str = "<string>") -> Tokenizer:
        """A tokenizer from the text of a ``tokenizer.json``."""
        return cls._from_text(json_text, source, False)

    @classmethod
    def _from_text(cls, json_text: str, source: str, decoded: bool) -> Tokenizer:
        # Loading builds a few hundred thousand tuples and lists and no cycles.
        with collector_paused():
            return cls(read_parts(parse_json(json_text, source, decoded), source), json_text, source)

    @classmethod
    def from_file(cls, path: str | Path) -> Tokenizer:
        """A tokenizer from a ``tokenizer.json`` file."""
        try:
            raw = Path(path).read_bytes()
        except OSError as exc:
            raise ModelFileError("%s: cannot read the model file: %s." % (path, exc.strerror or exc)) from None
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ModelFileError("%s: not UTF-8 text (byte %d)." % (path, exc.start)) from None
        return cls._from_text(text, str(path), True)

    def __reduce__(self):
        if self._json is None:
            return object.__reduce__(self)
        # The text was checked when it was loaded (no lone surrogate).
        return (Tokenizer._from_text, (self._json, self.source, True))

    # -- encoding ------------------------------------------------------------
    def encode(self, sequence: str, pair: str | None = None,
               add_special_tokens: bool = True) -> Encoding:
        """Ids, tokens and original-text offsets of ``sequence`` (and of
        ``pair``, typed 1), with the post-processor's special tokens."""
        first = self._encode_aligned(sequence, 0)
        second = self._encode_aligned(pair, 1) if pair is not None else None
        return self._post_process(first, second, add_special_tokens)

    def encode_fast(self, sequence: str, pair: str | None = None,
                    add_special_tokens: bool = True) -> Encoding:
        """Like :meth:`encode`, without offsets and word ids (faster)."""
        if not self._fast_is_exact:
            encoding = self.encode(sequence, pair, add_special_tokens)
            encoding.offsets = encoding.word_ids = None
            return encoding
        first = self._encode_plain(sequence, 0)
        second = self._encode_plain(pair, 1) if pair is not None else None
        return self._post_process(first, second, add_special_tokens)

    def encode_batch(self, inputs: Iterable, add_special_tokens: bool = True) -> list[Encoding]:
        """:meth:`encode` of each text (or ``(text, pair)`` tuple), padded
        together when padding is set."""
        return self._padded([self.encode(*_pair(item), add_special_tokens=add_special_tokens)
                             for item in inputs])

    def encode_batch_fast(self, inputs: Iterable, add_special_tokens: bool = True) -> list[Encoding]:
        """:meth:`encode_fast` of each text (or ``(text, pair)`` tuple)."""
        return self._padded([self.encode_fast(*_pair(item), add_special_tokens=add_special_tokens)
                             for item in inputs])

    # -- lines cut at spaces (the command-line encoder's piece cache) ------------
    def space_cuts(self) -> tuple[bool, frozenset[str] | None] | None:
        """How a text that holds no whitespace but single " " characters,
        none at its ends, encodes as the concatenation of its pieces cut
        before each space, the post-processor aside; None if it does not.

        Returns ``(prepended, ends)``. Not prepended: each piece but the
        first is encoded with its space in front. That holds for pipelines
        that cut every word at a space anyway and change text only
        character by character, context aside from what a space ends: no
        normalizer or BertNormalizer (its lowercasing looks at neighbours
        only for a final sigma, and a space ends the word it looks at),
        then GPT-2's ByteLevel regex (no match holds a non-space character
        and the space after it; a match after a space starts at it and
        looks no further than a later space) or BERT's pre-tokenizer
        (whitespace removed).

        Prepended: each piece is encoded without its space, as a text of
        its own. That holds for Llama's SentencePiece-like pipeline (no
        pre-tokenizer; a normalizer that puts a mark in front and turns
        spaces into it, so the whole text is one word "▁a▁b", and each
        piece alone becomes "▁b") when the BPE model can cut a word before
        the mark: only where the character before it is one of ``ends``
        (:meth:`MergeBPE.cut_ends_before`), and only in pieces without an
        added token (the mark is put in front of each text between added
        tokens). ``ends`` None: any piece may precede a cut.

        Either way the added tokens must not hold whitespace or reach over
        it (lstrip, rstrip), and tokens matched after normalization are
        allowed only without a normalizer, so every match lies inside one
        piece and is found there as in the whole text; single_word sees a
        space or an end beside a piece either way. BPE-dropout draws per
        text, so it is out."""
        from subtok.models.mergebpe.model import MergeBPE
        from subtok.normalizers.bert import BertNormalizer
        from subtok.normalizers.hf import Sequence
        from subtok.normalizers.text_rules import Prepend, Replace
        from subtok.pretokenizers.bytelevel import ByteLevel
        from subtok.pretokenizers.splitters import BertPreTokenizer
        pre, norm = self.pre_tokenizer, self.normalizer
        if not self._fast_is_exact or getattr(self.model, "dropout", None) is not None:
            return None
        for token in self.added.tokens.values():
            if token.lstrip or token.rstrip or not token.content.isprintable() or " " in token.content:
                return None
            if token.normalized and norm is not None:
                return None
        if isinstance(pre, ByteLevel):
            return (False, None) if pre.use_regex and norm is None else None
        if isinstance(pre, BertPreTokenizer):
            return (False, None) if norm is None or isinstance(norm, BertNormalizer) else None
        if pre is not None or not isinstance(norm, Sequence) or not isinstance(self.model, MergeBPE):
            return None
        steps = norm.normalizers
        if (len(steps) != 2 or not isinstance(steps[0], Prepend) or not isinstance(steps[1], Replace)
                or len(steps[0].prepend) != 1 or steps[1].literal != " "
                or steps[1].content != steps[0].prepend):
            return None
        ends = self.model.cut_ends_before(steps[0].prepend)
        return None if ends is None else (True, ends)

    def encode_pieces(self, pieces: list[str]) -> list[tuple[list[int], list[str], bool]]:
        """The ids and tokens of each text, without the post-processor: what
        :meth:`encode_fast` finds before post-processing, for many short
        texts with one call of the model; and whether the text held an
        added token."""
        split = self.pre_tokenizer.split if self.pre_tokenizer is not None else None
        extract, normalizer = self.added.extract, self.normalizer
        plans = []  # per text: (added token id or None, piece text) in order
        words: list[str] = []
        plain = self.added.normalized_if_plain
        for text in pieces:
            value = plain(text, normalizer)
            if value is not None:  # the common case, without extract's pieces
                found = (split(value) if split is not None else [value]) if value else []
                plans.append([(None, len(found))] if found else [])
                words.extend(found)
                continue
            plan: list = []
            for piece, token_id in extract(text, normalizer, track=False):
                if token_id is not None:
                    plan.append((token_id, piece.text))
                    continue
                found = split(piece.text) if split is not None else [piece.text]
                plan.append((None, len(found)))
                words.extend(found)
            plans.append(plan)
        encoded = iter(self.model.encode_words(words) if words else [])
        out = []
        for plan in plans:
            ids: list[int] = []
            tokens: list[str] = []
            for token_id, value in plan:
                if token_id is not None:
                    ids.append(token_id)
                    tokens.append(value)
                    continue
                for _ in range(value):
                    found = next(encoded)
                    ids.extend(found.ids)
                    tokens.extend(found.values)
            out.append((ids, tokens, any(token_id is not None for token_id, _ in plan)))
        return out

    def special_wrapping(self, add_special_tokens: bool) -> tuple[list[int], list[str], list[int], list[str]] | None:
        """When post-processing one text only puts the same tokens before
        and after its own (no truncation or padding, and a post-processor
        that does no more, as found by running it on stand-in tokens):
        (ids before, tokens before, ids after, tokens after); else None."""
        if self.truncation is not None or self.padding is not None:
            return None
        one = self.post_processed_stand_ins([-1], add_special_tokens)
        two = self.post_processed_stand_ins([-1, -2], add_special_tokens)
        if one.ids.count(-1) != 1 or -2 in one.ids:
            return None
        at = one.ids.index(-1)
        before, after = (one.ids[:at], one.tokens[:at]), (one.ids[at + 1:], one.tokens[at + 1:])
        if (two.ids != before[0] + [-1, -2] + after[0]
                or two.tokens != before[1] + two.tokens[at:at + 2] + after[1]
                or two.tokens[at:at + 2] != ["\x00stand-in -1", "\x00stand-in -2"]):
            return None
        return before[0], before[1], after[0], after[1]

    def post_processed_stand_ins(self, ids: list[int], add_special_tokens: bool) -> Encoding:
        """What the post-processor alone (no truncation, no padding) makes
        of one text of stand-in tokens: ``ids`` (negative: no token has
        them), tokens ``"\x00stand-in <id>"``. How :meth:`special_wrapping`
        and spm_encode's ``--extra_options`` (its BOS and EOS tokens) learn
        what the post-processor puts around a text."""
        tokens = ["\x00stand-in %d" % i for i in ids]
        encoding = Encoding(list(ids), tokens, None, None, [0] * len(ids))
        if self.post_processor is None:
            return encoding
        return Encoding.merge(self.post_processor.process([encoding], add_special_tokens))

    def _padded(self, encodings: list[Encoding]) -> list[Encoding]:
        if self.padding is not None:
            self.padding.apply(encodings)
        return encodings

    def _words(self, piece: AlignedString) -> list[AlignedString]:
        if self.pre_tokenizer is None:
            return [piece]
        return self.pre_tokenizer.split_aligned(piece)

    def _encode_aligned(self, text: str, type_id: int) -> Encoding:
        """One text, every token placed on it (``do_tokenize`` +
        ``into_encoding`` with char offsets)."""
        ids: list[int] = []
        tokens: list[str] = []
        offsets: list[tuple[int, int]] = []
        words: list[int | None] = []
        word_index = 0
        for piece, token_id in self.added.extract(text, self.normalizer, track=True):
            if token_id is not None:
                ids.append(token_id)
                tokens.append(piece.text)
                offsets.append(piece.span(0, len(piece.text)))
                words.append(word_index)
                word_index += 1
                continue
            for word in self._words(piece):
                found = self.model.encode_word(word.text)
                ids += found.ids
                tokens += found.values
                offsets += [word.span(b, e) for b, e in found.spans]
                words += [word_index] * len(found.ids)
                word_index += 1
        _byte_offsets_at_end(text, offsets)
        return Encoding(ids, tokens, offsets, words, [type_id] * len(ids))

    def _encode_plain(self, text: str, type_id: int) -> Encoding:
        """One text, ids and tokens only."""
        ids: list[int] = []
        tokens: list[str] = []
        split = self.pre_tokenizer.split if self.pre_tokenizer is not None else None
        encode_words = self.model.encode_words
        for piece, token_id in self.added.extract(text, self.normalizer, track=False):
            if token_id is not None:
                ids.append(token_id)
                tokens.append(piece.text)
                continue
            found = encode_words(split(piece.text) if split is not None else [piece.text])
            ids.extend(chain.from_iterable(map(_IDS, found)))
            tokens.extend(chain.from_iterable(map(_VALUES, found)))
        return Encoding(ids, tokens, None, None, [type_id] * len(ids))

    def _post_process(self, first: Encoding, second: Encoding | None,
                      add_special_tokens: bool) -> Encoding:
        """Truncation, the post-processor's encodings joined, padding
        (``post_process``)."""
        processor = self.post_processor
        if self.truncation is not None:
            added = processor.added_tokens(second is not None) if processor and add_special_tokens else 0
            self.truncation.apply(first, second, added)
        encodings = [first] if second is None else [first, second]
        if processor is None:
            final = first if second is None else Encoding.merge(encodings)
        else:
            for i, encoding in enumerate(encodings):
                encoding.type_ids = [i] * len(encoding)
            final = Encoding.merge(processor.process(encodings, add_special_tokens))
        return self._padded([final])[0]

    # -- decoding ------------------------------------------------------------
    def decode(self, ids: Iterable[int], skip_special_tokens: bool = True) -> str:
        """Text of ``ids``; unknown ids are skipped, and special added
        tokens too unless ``skip_special_tokens`` is false."""
        strings = []
        special = self.added.special
        for token_id in ids:
            token = self.id_to_token(token_id)
            if token is None or (skip_special_tokens and token in special):
                continue
            strings.append(token)
        if self.decoder is None:
            return " ".join(strings)
        return "".join(self.decoder.decode_chain(strings))

    def decode_batch(self, sequences: Iterable[Iterable[int]], skip_special_tokens: bool = True) -> list[str]:
        return [self.decode(ids, skip_special_tokens) for ids in sequences]

    # -- vocabulary ----------------------------------------------------------
    def token_to_id(self, token: str) -> int | None:
        found = self.added.ids.get(token)
        return found if found is not None else self.model.token_to_id(token)

    def id_to_token(self, token_id: int) -> str | None:
        found = self.added.token_string(token_id)
        return found if found is not None else self.model.id_to_token(token_id)

    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        vocab = self.model.get_vocab()
        if with_added_tokens:
            vocab.update(self.added.ids)
        return vocab

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        size = self.model.get_vocab_size()
        if with_added_tokens:
            size += sum(1 for t in self.added.ids if self.model.token_to_id(t) is None)
        return size


def _pair(item) -> tuple:
    return tuple(item) if isinstance(item, (tuple, list)) else (item,)


def _byte_offsets_at_end(text: str, offsets: list[tuple[int, int]]) -> None:
    """The Python binding turns byte offsets into character offsets with a
    map that has no entry for the end of the text; a span that starts there
    keeps its byte offsets (``BytesToCharOffsetConverter::convert``)."""
    end = len(text)
    for i, (start, stop) in enumerate(offsets):
        if start >= end:
            size = len(text.encode("utf-8", "surrogatepass"))
            offsets[i] = (size, size + len(text[end:stop].encode("utf-8", "surrogatepass")))
