"""Characters with a meaning of their own in SentencePiece models and training."""

#: "▁" (U+2581), SentencePiece's escaped space: where a word begins (or
#: ends, with ``treat_whitespace_as_suffix``).
SPACE_SYMBOL = "\u2581"

#: "▅" (U+2585): how the trainers write a character outside the alphabet
#: (sentencepiece's ``kUNKChar``); such characters never enter a piece.
UNK_CHAR = "\u2585"

#: What the trainers put where no piece may cross (user-defined symbols,
#: the pretokenization delimiter): a tab, which no trained piece may hold
#: (see :mod:`subtok.training.validity`).
BOUNDARY = "\t"

#: What follows the corpus's last word in unigram's seed entries (see
#: :func:`subtok.models.unigram.trainer.collect_units`): the end of the
#: text, whose "lead byte" differs from every real one.
END_OF_TEXT = "\U0010ffff"

__all__ = ["SPACE_SYMBOL", "UNK_CHAR", "BOUNDARY", "END_OF_TEXT"]
