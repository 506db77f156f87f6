"""The words the WordPiece trainer counts: BERT's pipeline over raw lines.

The trained ``tokenizer.json`` names ``BertNormalizer`` and
``BertPreTokenizer``, so training must see exactly the words those stages
make. It uses the very components the tokenizer.json engine runs
(:class:`subtok.normalizers.bert.BertNormalizer`,
:class:`subtok.pretokenizers.splitters.BertPreTokenizer`), built from the
same JSON the trainer writes; only the order of work differs.

Speed: every step of BERT's pipeline acts on one character at a time and
none joins characters across whitespace, so a line's words are the words
of its whitespace-separated raw tokens. :class:`WordCounter` therefore
counts raw tokens first (one C-level ``str.split`` over a chunk of lines)
and runs the pipeline once per *distinct* token.
"""

from __future__ import annotations

import re
from collections import Counter

from subtok.formats.bert_vocab import WHITE_SPACE
from subtok.normalizers.hf import from_json as normalizer_from_json
from subtok.pretokenizers.hf import from_json as pre_tokenizer_from_json

#: Whitespace characters that ``clean_text`` deletes as control characters
#: (Cc) instead of turning them into spaces: with it, they join the raw
#: tokens on both sides.
CONTROL_SPACES = "\x0b\x0c\x85"
#: Characters ``str.split()`` cuts at that are not White_Space.
PYTHON_ONLY_SPACES = "\x1c\x1d\x1e\x1f"


class WordCounter:
    """Counts the words BERT's pipeline makes of lines of raw text.

    ``bert`` is the tokenizer.json ``BertNormalizer`` object the trainer
    writes; the pre-tokenizer is ``BertPreTokenizer``.
    """

    def __init__(self, bert: dict) -> None:
        pre_tokenizer = {"type": "BertPreTokenizer"}
        #: What decides the words: the header of their ``subtok count`` files.
        self.shape = {"units": "bert-words", "normalizer": dict(bert),
                      "pre_tokenizer": pre_tokenizer}
        self.normalizer = normalizer_from_json(bert, "normalizer")
        self.pre_tokenizer = pre_tokenizer_from_json(pre_tokenizer, "pre_tokenizer")
        self.lowercase = bool(bert["lowercase"])
        clean = bool(bert["clean_text"])
        separators = "".join(c for c in WHITE_SPACE if not (clean and c in CONTROL_SPACES))
        self._tokens = re.compile("[^%s]+" % re.escape(separators)).findall
        # Where none of these occurs, str.split() cuts exactly at the
        # separators above, in C.
        odd = PYTHON_ONLY_SPACES + (CONTROL_SPACES if clean else "")
        self._odd = re.compile("[%s]" % re.escape(odd)).search

    def raw_tokens(self, lines: list[tuple[str, int]]) -> Counter:
        """Whitespace-separated tokens of ``(line, count)`` pairs, counted."""
        tokens: Counter = Counter()
        plain = [text for text, freq in lines if freq == 1]
        joined = "\n".join(plain)
        if not self._odd(joined):
            tokens.update(joined.split())
        else:
            for text in plain:
                tokens.update(self._tokens(text))
        for text, freq in lines:
            if freq != 1:
                for token in self._tokens(text):
                    tokens[token] += freq
        return tokens

    def words(self, tokens: Counter) -> Counter:
        """The words of distinct raw tokens, with the tokens' counts summed."""
        normalize = self.normalizer.normalize
        split = self.pre_tokenizer.split
        lower = self.lowercase
        out: Counter = Counter()
        for token, count in tokens.items():
            if token.isascii() and token.isalnum():
                # Most tokens: one word, which normalization only lowercases.
                out[token.lower() if lower else token] += count
                continue
            for word in split(normalize(token)):
                out[word] += count
        return out

    def count(self, lines: list[tuple[str, int]]) -> Counter:
        """Words of ``(line, count)`` pairs, counted."""
        return self.words(self.raw_tokens(lines))


__all__ = ["WordCounter"]
