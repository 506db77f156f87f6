"""WordPiece as ``tokenizers`` runs it (``tokenizers/src/models/wordpiece/
mod.rs``): greedy longest-match-first from the left, the continuing prefix
("##") on every piece but the first; if some position matches nothing, or
the word is longer than ``max_input_chars_per_word`` characters, the whole
word is the unknown token."""

from __future__ import annotations

from subtok.errors import EncodeError
from subtok.formats.json_fields import count_field, field
from subtok.models.mergebpe.model import vocab_field
from subtok.models.tokens import VocabModel, WordTokens


class WordPiece(VocabModel):
    """A ``tokenizer.json`` WordPiece model."""

    def __init__(self, vocab: dict[str, int], unk_token: str = "[UNK]",
                 continuing_subword_prefix: str = "##", max_input_chars_per_word: int = 100) -> None:
        super().__init__(vocab)
        self.unk_token = unk_token
        self.prefix = continuing_subword_prefix
        self.max_chars = max_input_chars_per_word
        self.longest = max(map(len, vocab), default=0)

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> WordPiece:
        return cls(vocab_field(spec, where), field(spec, "unk_token", str, where),
                   field(spec, "continuing_subword_prefix", str, where),
                   count_field(spec, "max_input_chars_per_word", where))

    def _unknown(self, word: str) -> WordTokens:
        unk_id = self.vocab.get(self.unk_token)
        if unk_id is None:
            raise EncodeError("WordPiece: the unknown token %r is not in the vocabulary."
                              % self.unk_token)
        return WordTokens((unk_id,), (self.unk_token,), ((0, len(word)),))

    def segment(self, word: str) -> WordTokens:
        if len(word) > self.max_chars:
            return self._unknown(word)
        vocab, prefix = self.vocab, self.prefix
        ids, values, spans = [], [], []
        start = 0
        while start < len(word):
            # No piece is longer than the longest vocabulary entry, so the
            # search can start there instead of at the end of the word.
            end = min(len(word), start + self.longest)
            while end > start:
                piece = word[start:end] if start == 0 else prefix + word[start:end]
                piece_id = vocab.get(piece)
                if piece_id is not None:
                    break
                end -= 1
            else:
                return self._unknown(word)
            ids.append(piece_id)
            values.append(piece)
            spans.append((start, end))
            start = end
        return WordTokens(tuple(ids), tuple(values), tuple(spans))
