"""WordLevel (``tokenizers/src/models/wordlevel/mod.rs``): each pre-token is
one vocabulary entry, or the unknown token."""

from __future__ import annotations

from subtok.errors import EncodeError
from subtok.formats.json_fields import field
from subtok.models.mergebpe.model import vocab_field
from subtok.models.tokens import VocabModel, WordTokens


class WordLevel(VocabModel):
    """A ``tokenizer.json`` WordLevel model."""

    def __init__(self, vocab: dict[str, int], unk_token: str = "<unk>") -> None:
        super().__init__(vocab)
        self.unk_token = unk_token

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> WordLevel:
        return cls(vocab_field(spec, where), field(spec, "unk_token", str, where))

    def segment(self, word: str) -> WordTokens:
        token_id = self.vocab.get(word)
        value = word
        if token_id is None:
            token_id = self.vocab.get(self.unk_token)
            value = self.unk_token
            if token_id is None:
                raise EncodeError("WordLevel: the unknown token %r is not in the vocabulary."
                                  % self.unk_token)
        return WordTokens((token_id,), (value,), ((0, len(word)),))
