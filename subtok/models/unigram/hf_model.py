"""Unigram as Hugging Face ``tokenizers`` runs it
(``tokenizers/src/models/unigram/model.rs``, ``encode_optimized``).

It differs from SentencePiece's unigram (:mod:`subtok.models.unigram.model`)
in ways that change results, so it is a model of its own:

- every vocabulary entry is a candidate, control, unknown and byte pieces
  included (a literal "<s>" in the text can become that id);
- path scores are summed in float64, not float32;
- a character no piece starts with gets the unknown id, scored
  ``min(all scores) - 10``, and runs of unknown characters become one token
  whose string is the text itself;
- ties keep the first candidate found: positions left to right, shorter
  pieces first, the unknown candidate last.

With ``byte_fallback`` a token whose string is not in the vocabulary (the
unknown runs) becomes its UTF-8 bytes ``<0xNN>`` when all are pieces, each
spanning the whole run.
"""

from __future__ import annotations

import math
from operator import itemgetter

from subtok.errors import EncodeError, ModelFileError
from subtok.formats.json_fields import field
from subtok.models.tokens import VocabModel, WordTokens

UNK_PENALTY = 10.0


class HFUnigram(VocabModel):
    """A ``tokenizer.json`` Unigram model."""

    def __init__(self, pieces: list[tuple[str, float]], unk_id: int | None = None,
                 byte_fallback: bool = False, where: str = "") -> None:
        if unk_id is not None and not pieces:
            raise ModelFileError("%s: the vocabulary is empty but unk_id is set." % where)
        if unk_id is not None and unk_id >= len(pieces):
            raise ModelFileError("%s: unk_id %d is not below the vocabulary size %d."
                                 % (where, unk_id, len(pieces)))
        super().__init__({piece: i for i, (piece, _) in enumerate(pieces)})
        self.pieces = pieces
        self.tokens_by_id = {i: piece for i, (piece, _) in enumerate(pieces)}
        self.unk_id = unk_id
        self.byte_fallback = byte_fallback
        self.scores = {piece: pieces[i][1] for piece, i in self.vocab.items()}
        self.unk_score = min((s for _, s in pieces), default=math.inf) - UNK_PENALTY
        #: first character -> length of the longest piece starting with it
        self.reach: dict[str, int] = {}
        for piece in self.vocab:
            if piece and len(piece) > self.reach.get(piece[0], 0):
                self.reach[piece[0]] = len(piece)

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> HFUnigram:
        raw = field(spec, "vocab", list, where)
        # Checked column by column (C loops; 32k entries): every entry a
        # [string, number] pair.
        if (not set(map(type, raw)) <= {list} or not set(map(len, raw)) <= {2}
                or not set(map(type, map(itemgetter(0), raw))) <= {str}
                or not set(map(type, map(itemgetter(1), raw))) <= {int, float}):
            bad = next(i for i, item in enumerate(raw)
                       if not (isinstance(item, list) and len(item) == 2 and type(item[0]) is str
                               and type(item[1]) in (int, float)))
            raise ModelFileError("%s: vocab[%d] must be [piece, score], not %r." % (where, bad, raw[bad]))
        pieces = list(zip(map(itemgetter(0), raw), map(float, map(itemgetter(1), raw))))
        unk_id = field(spec, "unk_id", int, where, None)
        if unk_id is not None and unk_id < 0:
            raise ModelFileError("%s: unk_id must not be negative." % where)
        return cls(pieces, unk_id, field(spec, "byte_fallback", bool, where, False), where)

    def get_vocab_size(self) -> int:
        return len(self.pieces)

    def segment(self, word: str) -> WordTokens:
        ids: list[int] = []
        values: list[str] = []
        spans: list[tuple[int, int]] = []
        for start, end in self._best_path(word):
            text = word[start:end]
            token_id = self.vocab.get(text)
            if token_id is None and self.byte_fallback:
                byte_ids = [self.vocab.get("<0x%02X>" % b) for b in text.encode("utf-8", "surrogatepass")]
                if None not in byte_ids:
                    ids.extend(byte_ids)  # type: ignore[arg-type]
                    values.extend(self.tokens_by_id[i] for i in byte_ids)  # type: ignore[index]
                    spans.extend([(start, end)] * len(byte_ids))
                    continue
            if token_id is None:
                token_id = self._unk()
            ids.append(token_id)
            values.append(text)
            spans.append((start, end))
        return WordTokens(tuple(ids), tuple(values), tuple(spans))

    def _unk(self) -> int:
        if self.unk_id is None:
            raise EncodeError("an unknown character was met but the Unigram model has no unk_id.")
        return self.unk_id

    def _best_path(self, word: str) -> list[tuple[int, int]]:
        """Viterbi over every piece, then the path's tokens with runs of
        unknown ones joined (``encode_optimized``)."""
        size = len(word)
        score = [0.0] * (size + 1)
        start_of: list[int | None] = [None] * (size + 1)
        is_unk = [False] * (size + 1)
        reach, scores = self.reach, self.scores
        for begin in range(size):
            here = score[begin]
            single = False
            for end in range(begin + 1, min(size, begin + reach.get(word[begin], 0)) + 1):
                piece_score = scores.get(word[begin:end])
                if piece_score is not None:
                    candidate = piece_score + here
                    if start_of[end] is None or candidate > score[end]:
                        score[end], start_of[end] = candidate, begin
                        is_unk[end] = self.vocab[word[begin:end]] == self.unk_id
                    single = single or end == begin + 1
            if not single:
                candidate = self.unk_score + here
                if start_of[begin + 1] is None or candidate > score[begin + 1]:
                    self._unk()
                    score[begin + 1], start_of[begin + 1] = candidate, begin
                    is_unk[begin + 1] = True
        return _fused_path(start_of, is_unk, size)


def _fused_path(start_of: list[int | None], is_unk: list[bool], size: int) -> list[tuple[int, int]]:
    """Walk back from the end; consecutive unknown tokens become one."""
    path: list[tuple[int, int]] = []
    end = size
    unk_end = None
    while end > 0:
        begin = start_of[end]
        assert begin is not None
        if is_unk[end]:
            if unk_end is None:
                unk_end = end
        else:
            if unk_end is not None:
                path.append((end, unk_end))
                unk_end = None
            path.append((begin, end))
        end = begin
    if unk_end is not None:
        path.append((0, unk_end))
    path.reverse()
    return path
