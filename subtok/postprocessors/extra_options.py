"""spm_encode's and spm_decode's ``--extra_options`` (``bos``, ``eos``,
``reverse``, ``unk``) for models that are not SentencePiece ones: a
``tokenizer.json`` (:class:`~subtok.tokenizer.Tokenizer`) or a tiktoken
rank file.

The options apply in the order given to each line's token list: when
encoding, after the model (and the post-processor, if
``--add_special_tokens``), as ``ApplyExtraOptions`` applies them in
spm_encode; when decoding, to the ids or pieces read, before they are
decoded, as ``SentencePieceProcessor::Decode`` applies them in spm_decode
(where the BOS / EOS piece, a control piece, then decodes to nothing; here
the token decodes as the library decodes it: nothing for a special token of
a tokenizer.json unless ``--no-skip_special_tokens``, its text for
tiktoken):

* ``reverse``: the ids (and tokens) in reverse order;
* ``bos`` / ``eos``: the model's BOS / EOS token put first / last. These
  files have no ``bos_id``; the BOS token is the first special token the
  post-processor puts before a single sequence (``[CLS]`` of BERT's
  template, ``<s>`` of Llama 2's or RoBERTa's) and the EOS token the last
  one it puts after it (``[SEP]``, ``</s>``). Where the post-processor adds
  none, the first token of :data:`BOS_NAMES` / :data:`EOS_NAMES` that the
  model has (as ``transformers`` names them: GPT-2's and tiktoken's
  ``<|endoftext|>`` is both). A model with neither is an error naming
  the file;
* ``unk`` (``unk_piece``): accepted, and changes nothing: the token string
  of an unknown is already the unknown token (``[UNK]``), where
  SentencePiece shows the unknown text unless ``unk`` is given (and
  spm_decode decodes an unknown piece as the unknown surface, not as its
  text, only with ``unk``: here a piece that is not a token is refused and
  an id is its token anyway); a byte-level model (tiktoken) has no unknowns.
"""

from __future__ import annotations

from collections.abc import Callable

from subtok.errors import EncodeError, SubtokError
from subtok.postprocessors.sentencepiece import split_extra_options
#: Special tokens that start a text, most specific first.
BOS_NAMES = ("<s>", "<|begin_of_text|>", "<|startoftext|>", "<bos>", "<|endoftext|>")
#: Special tokens that end one.
EOS_NAMES = ("</s>", "<|end_of_text|>", "<|endoftext|>", "<eos>")

Token = tuple[str, int]  # (token string, id)


def template_ends(tokenizer) -> tuple[Token | None, Token | None]:
    """(first special token before, last special token after) a single
    sequence in what the post-processor of ``tokenizer`` (a
    :class:`~subtok.tokenizer.Tokenizer`) makes of it, or None for each."""
    final = tokenizer.post_processed_stand_ins([-1], True)
    if -1 not in final.ids:
        return None, None
    at = final.ids.index(-1)
    pairs = list(zip(final.tokens, final.ids))
    return (pairs[0] if at > 0 else None), (pairs[-1] if at < len(pairs) - 1 else None)


def named_token(names: tuple[str, ...], token_to_id: Callable[[str], int | None]) -> Token | None:
    """The first of ``names`` the model has, with its id."""
    for name in names:
        found = token_to_id(name)
        if found is not None:
            return name, found
    return None


class ExtraOptions:
    """The options, with the BOS and EOS tokens they need; options the
    model cannot apply are an ``error``."""

    def __init__(self, text: str, bos: Token | None, eos: Token | None, source: str,
                 error: type[SubtokError] = EncodeError) -> None:
        self.options = split_extra_options(text, error)
        for option, token in (("bos", bos), ("eos", eos)):
            if option in self.options and token is None:
                raise error("%s: --extra_options %s: the model has no %s token (none "
                                  "added by a post-processor, none of %s)."
                                  % (source, option, option.upper(),
                                     ", ".join(BOS_NAMES if option == "bos" else EOS_NAMES)))
        self.bos, self.eos = bos, eos

    def __bool__(self) -> bool:
        return bool(self.options)

    def apply(self, ids: list, tokens: list) -> tuple[list, list]:
        """The options applied in order to a line's ids and tokens."""
        for option in self.options:
            if option == "reverse":
                ids, tokens = ids[::-1], tokens[::-1]
            elif option == "bos":
                ids, tokens = [self.bos[1]] + ids, [self.bos[0]] + tokens  # type: ignore[index]
            elif option == "eos":
                ids, tokens = ids + [self.eos[1]], tokens + [self.eos[0]]  # type: ignore[index]
        return ids, tokens


def for_tokenizer(text: str, tokenizer, source: str,
                  error: type[SubtokError] = EncodeError) -> ExtraOptions:
    """The options for a :class:`~subtok.tokenizer.Tokenizer`."""
    if not text:
        return ExtraOptions(text, None, None, source, error)
    bos, eos = template_ends(tokenizer)
    if bos is None:
        bos = named_token(BOS_NAMES, tokenizer.token_to_id)
    if eos is None:
        eos = named_token(EOS_NAMES, tokenizer.token_to_id)
    return ExtraOptions(text, bos, eos, source, error)


def for_tiktoken(text: str, special_tokens: dict[str, int], source: str,
                 error: type[SubtokError] = EncodeError) -> ExtraOptions:
    """The options for a tiktoken encoding: its special tokens name the
    BOS and EOS tokens."""
    return ExtraOptions(text, named_token(BOS_NAMES, special_tokens.get),
                        named_token(EOS_NAMES, special_tokens.get), source, error)
