"""SentencePiece ``.model`` <-> Hugging Face ``tokenizer.json``.

Export builds a tokenizer.json under which ``tokenizers`` encodes and
decodes as sentencepiece 0.2.3 does with the model, as far as its
components can say it (every step below names the sentencepiece or
``tokenizers`` function it mirrors; docs/export.md lists what cannot be said):

* normalizer: the stored charsmap (``Precompiled``; an NFKC one between
  two NFC steps, every character its own grapheme cluster:
  :func:`_charsmap_steps`), then SentencePiece's whitespace rules
  (``normalizer.cc: Normalizer::Normalize``) as ``Replace`` steps:
  leading/trailing spaces dropped and runs collapsed
  (``remove_extra_whitespaces``), " " escaped as "▁", the dummy "▁"
  prepended, and every trailing "▁" dropped (a typed one too);
* model: ``Unigram`` with the piece scores (user-defined pieces scored
  ``0.1 * bytes - 0.1`` as sentencepiece 0.2.3 scores their lattice nodes);
  ``BPE`` whose merges are every split of each normal piece into two
  normal pieces, ranked by the merged piece's score (``bpe_model.cc``
  merges by score, not by a list), with ``ignore_merges``; ``char`` as a
  BPE without merges; ``word`` as ``WordLevel`` over words split at "▁";
* pre-tokenizer: user-defined pieces isolated (they never merge, as
  sentencepiece freezes them) for BPE and char models;
* decoder: control pieces to nothing, "▁" to " ", byte pieces to bytes,
  one leading space dropped, the unknown piece to its surface
  (``sentencepiece_processor.cc: DecodeSentencePiece``).

What tokenizers cannot express is reported at export by one warning per
kind (:data:`UNEXPRESSIBLE`); ``docs/export.md`` gives the rates measured.

Import goes the other way for a tokenizer.json shaped like these exports
(or like ``transformers``' SentencePiece conversions): a Unigram or BPE
model behind Precompiled / Replace / Prepend normalizers or a Metaspace
pre-tokenizer.
"""

from __future__ import annotations

import base64
import math
import os
import re
import struct
import unicodedata
import warnings
from collections.abc import Callable

from subtok.errors import ModelFileError
from subtok.formats import hf_json
from subtok.formats.sentencepiece import (MODEL_TYPE_IDS, ModelData, NormalizerSpec, build_proto,
                                         load_model)
from subtok.normalizers.charsmap import load_rules
from subtok.symbols import SPACE_SYMBOL
from subtok.vocab import DEFAULT_UNK_SURFACE, PieceType, SpecialPieces

#: Behaviours of sentencepiece that no tokenizer.json can state: the
#: warning text of each (docs/export.md measures them).
UNEXPRESSIBLE = {
    "graphemes": "charsmap rules across characters: tokenizers applies the precompiled "
                 "charsmap a grapheme at a time, so a rule joining characters (a letter and "
                 "its combining marks, half-width kana and their sound marks) may not apply",
    "mark_order": "combining marks out of canonical order: the NFKC charsmap is exported "
                  "between two Unicode NFC steps, which reorder marks and compose across "
                  "them where sentencepiece's table joins only the sequences it lists",
    "control_text": "literal control-piece text: tokenizers can match control, unknown "
                    "and byte piece strings typed in the text, sentencepiece never does",
    "float32_ties": "float32 near-ties: sentencepiece sums unigram path scores in float32, "
                    "tokenizers in float64, so near-equal paths can be chosen differently",
    "user_defined": "unnormalized user-defined pieces: sentencepiece matches them in the "
                    "raw text, tokenizers only after normalization",
    "unknown_runs": "fused unknown runs: a word model's consecutive unknown words are one "
                    "<unk> in sentencepiece, one each in WordLevel",
    "suffix": "treat_whitespace_as_suffix: tokenizers has no normalizer that appends "
              "the \u2581; exported as prefix whitespace",
    "unused": "UNUSED pieces: sentencepiece's BPE splits them back, tokenizers cannot; "
              "exported as normal pieces",
    "denormalizer": "denormalizer_spec: tokenizers has no decoding normalizer; dropped",
}

#: What the unknown piece becomes inside the decoder until the leading
#: space is dropped: "▁", which no decoded piece holds by then.
_UNK_MARK = SPACE_SYMBOL
#: Strip's count for "every leading space" (it stops at the first other
#: character).
_ALL = 1 << 30


#: Decomposed text that sentencepiece's NFKC tables (nfkc, nmt_nfkc and
#: their case-folding twins; lower case, which those do not fold) compose
#: as NFC does: a charsmap that does gets the NFC recipe of
#: :func:`_charsmap_steps`.
_NFC_PROBES = ("e\u0301", "a\u030a", "\u1100\u1161\u11a8", "\u30ab\u3099",
               "\u03c9\u0313\u0342\u0345")
#: C1 control characters, which no NFKC table maps: the first three a
#: charsmap has no rule for mark the text inside the normalizer (U+0085 is
#: whitespace to some regexes, so it is not one).
_MARKERS = "\x80\x81\x82\x83\x84\x86\x87\x88\x89\x8a"
#: Where a mark goes so that every character is a grapheme cluster of its
#: own (UAX #29) when tokenizers' Precompiled cuts the text: before every
#: character that can join the one before it (every non-ASCII one and
#: LF, more than needed, but kana, CJK ideographs and Hangul syllables,
#: which join only a leading jamo, are left out where they are not after
#: one, for speed), and after a Prepend character, which joins the next.
_SPLIT = ("(?<=[\\s\\S])"
          "(?=[^\\x00-\\x09\\x0b-\\x7f\u3041-\u3096\u30a1-\u30fa\u4e00-\u9fff\uac00-\ud7a3])"
          "|(?<=[\u1100-\u115f\ua960-\ua97c])(?=[\uac00-\ud7a3])"
          "|(?<=[\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\u0d4e\U000110bd\U000110cd"
          "\U000111c2\U000111c3\U0001193f\U00011941\U00011a3a\U00011a84-\U00011a89"
          "\U00011d46\U00011f02])")


class ExportWarning(UserWarning):
    """A behaviour of the model that the exported tokenizer.json cannot keep."""


def _f32(value: float) -> float:
    """``value`` rounded to float32 (sentencepiece keeps scores as float)."""
    return struct.unpack("<f", struct.pack("<f", value))[0]


def _alternation(strings) -> str:
    """A regex matching any of ``strings``, the longest first (so the
    longest match wins where one starts another, as sentencepiece's
    prefix matcher does)."""
    return "|".join(re.escape(s) for s in sorted(strings, key=lambda s: (-len(s), s)))


# -- export ---------------------------------------------------------------------

def sentencepiece_to_json(model: ModelData | str | os.PathLike, *,
                          warn: Callable[[str], None] | None = None) -> dict:
    """The tokenizer.json dict for a SentencePiece model (or its path).

    ``warn`` gets one line for each kind of behaviour the JSON cannot
    keep (default: ``warnings.warn`` with :class:`ExportWarning`)."""
    if not isinstance(model, ModelData):
        model = load_model(model)
    report = warn or (lambda message: warnings.warn(message, ExportWarning, stacklevel=3))
    for kind in _unexpressible(model):
        report(UNEXPRESSIBLE[kind])
    build = {"unigram": _unigram, "bpe": _bpe, "char": _char, "word": _word}[model.model_type]
    body, pre_tokenizer = build(model)
    return hf_json.tokenizer(body, normalizer=_normalizer(model.normalizer),
                             pre_tokenizer=pre_tokenizer, decoder=_decoder(model))


def _unexpressible(model: ModelData) -> list[str]:
    """The kinds of UNEXPRESSIBLE behaviour this model has."""
    types = set(model.types)
    kinds = []
    if model.normalizer.precompiled_charsmap:
        recipe = len(_charsmap_steps(model.normalizer.precompiled_charsmap)) > 1
        kinds.append("mark_order" if recipe else "graphemes")
    single_control = any(len(p) == 1 for p, t in zip(model.pieces, model.types)
                         if t in (PieceType.CONTROL, PieceType.BYTE))
    if model.model_type == "unigram" or single_control:
        kinds.append("control_text")
    if model.model_type == "unigram":
        kinds.append("float32_ties")
    user = _pieces_of(model, PieceType.USER_DEFINED)
    # Without a charsmap only spaces change: escaped, collapsed, stripped.
    if user and model.model_type != "word" and (
            model.normalizer.precompiled_charsmap or any(" " in piece for piece in user)):
        kinds.append("user_defined")
    if model.model_type == "word":
        kinds.append("unknown_runs")
    if model.treat_whitespace_as_suffix:
        kinds.append("suffix")
    if PieceType.UNUSED in types:
        kinds.append("unused")
    if model.denormalizer is not None:
        kinds.append("denormalizer")
    return kinds


def _normalizer(spec: NormalizerSpec) -> dict | None:
    """The charsmap, then the whitespace rules of ``Normalizer::Normalize``."""
    space = SPACE_SYMBOL if spec.escape_whitespaces else " "
    steps = []
    if spec.precompiled_charsmap:
        steps += _charsmap_steps(spec.precompiled_charsmap)
    if spec.remove_extra_whitespaces:
        steps.append(hf_json.replace(r"\A +| +\z", "", regex=True))
        steps.append(hf_json.replace(" {2,}", " ", regex=True))
    if spec.escape_whitespaces:
        steps.append(hf_json.replace(" ", SPACE_SYMBOL))
    if spec.add_dummy_prefix:
        steps.append({"type": "Prepend", "prepend": space})
    if spec.remove_extra_whitespaces and spec.escape_whitespaces:
        steps.append(hf_json.replace(SPACE_SYMBOL + r"+\z", "", regex=True))
    return hf_json.sequence("normalizer", steps)


def _charsmap_steps(blob: bytes) -> list[dict]:
    """The charsmap as normalizer steps.

    tokenizers' ``Precompiled`` (``normalizers/precompiled.rs``) looks a
    grapheme cluster up whole when it is under 6 bytes, taking the rule of
    its *shortest* matching prefix for all of it, and else character by
    character; sentencepiece (``Normalizer::NormalizePrefix``) takes the
    longest rule at each position. Character by character the two agree:
    so every character is made a cluster of its own, by a control
    character put before it (``_SPLIT``) and taken out after. What is then
    lost are the rules of several characters; in sentencepiece's NFKC
    tables those map the decomposition of a character to its NFC form
    (``builder.cc: BuildNFKCMap``), which NFC before the charsmap gives
    for canonical decompositions (``e`` + U+0301) and NFC after it for
    compatibility ones (half-width ``ﾊ`` + ``ﾟ`` become ``ハ`` + U+309A,
    which NFC joins). Marks typed in the text are escaped first (the mark
    followed by a second control character) and restored last.

    A charsmap that does not compose as NFC does (``_NFC_PROBES``), or
    has rules for the markers, is the ``Precompiled`` step alone."""
    precompiled = {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(blob).decode()}
    rules = load_rules(blob)
    free = [c for c in _MARKERS if rules.longest_match(c, 0) is None]
    if len(free) < 3 or any(rules.longest_match(text, 0) != (unicodedata.normalize("NFC", text),
                                                             len(text)) for text in _NFC_PROBES):
        return [precompiled]
    mark, typed, split = free[0], free[0] + free[1], free[0] + free[2]
    return [{"type": "NFC"}, hf_json.replace(mark, typed),
            hf_json.replace(_SPLIT, split, regex=True), precompiled, hf_json.replace(split, ""),
            hf_json.replace(typed, mark), {"type": "NFC"}]


def _pieces_of(model: ModelData, *kinds: int) -> list[str]:
    return [p for p, t in zip(model.pieces, model.types) if t in kinds]


def _unk_piece(model: ModelData) -> str:
    return model.pieces[model.vocabulary().unk_index]


def _id_vocab(model: ModelData) -> dict[str, int]:
    """Piece -> id in id order (a string held twice keeps its first id)."""
    vocab: dict[str, int] = {}
    for index, piece in enumerate(model.pieces):
        vocab.setdefault(piece, index)
    return vocab


def _user_defined_split(model: ModelData) -> dict | None:
    """A pre-tokenizer isolating user-defined pieces (None if there are none)."""
    user = _pieces_of(model, PieceType.USER_DEFINED)
    if not user:
        return None
    return {"type": "Split", "pattern": {"Regex": _alternation(user)}, "behavior": "Isolated",
            "invert": False}


def _unigram(model: ModelData) -> tuple[dict, dict | None]:
    """Every piece with its lattice score. Pieces sentencepiece never puts
    in the lattice (control, unknown, byte, unused) get the lowest normal
    score: tokenizers scores unknown characters min(all scores) - 10,
    sentencepiece min(normal scores) - 10, and this keeps the two equal."""
    normal = [s for s, t in zip(model.scores, model.types) if t == PieceType.NORMAL]
    lowest = min(normal)
    vocab = []
    for piece, score, kind in zip(model.pieces, model.scores, model.types):
        if kind == PieceType.USER_DEFINED:
            score = _f32(0.1 * len(piece.encode("utf-8")) - 0.1)
        elif kind != PieceType.NORMAL:
            score = lowest
        vocab.append([piece, score])
    body = {"type": "Unigram", "unk_id": model.vocabulary().unk_index, "vocab": vocab,
            "byte_fallback": model.byte_fallback}
    return body, None


def bpe_merges(model: ModelData) -> list[tuple[str, str]]:
    """Every split of each normal piece into two normal pieces, the merged
    piece with the higher score first (then the lower id, then the shorter
    left part): sentencepiece merges whichever adjacent pair makes the
    best-scored piece, and with ``ignore_merges`` a word that is a piece is
    taken whole, so these merges reach the same pieces."""
    normal_types = (PieceType.NORMAL, PieceType.UNUSED)
    normal = {p for p, t in zip(model.pieces, model.types) if t in normal_types}
    ranked = []
    for index, (piece, score, kind) in enumerate(zip(model.pieces, model.scores, model.types)):
        if kind not in normal_types:
            continue
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            if left in normal and right in normal:
                ranked.append((-score, index, cut, left, right))
    ranked.sort()
    return [(left, right) for _, _, _, left, right in ranked]


def _bpe(model: ModelData) -> tuple[dict, dict | None]:
    body = hf_json.bpe_model(_id_vocab(model), bpe_merges(model), unk_token=_unk_piece(model),
                             continuing_subword_prefix=None, end_of_word_suffix=None,
                             fuse_unk=not model.byte_fallback, byte_fallback=model.byte_fallback,
                             ignore_merges=True)
    return body, _user_defined_split(model)


def _char(model: ModelData) -> tuple[dict, dict | None]:
    """Characters looked up one by one: a BPE with no merges (unknown runs
    fuse, as sentencepiece merges consecutive unknown pieces)."""
    body = hf_json.bpe_model(_id_vocab(model), [], unk_token=_unk_piece(model),
                             continuing_subword_prefix=None, end_of_word_suffix=None,
                             fuse_unk=not model.byte_fallback, byte_fallback=model.byte_fallback,
                             ignore_merges=True)
    return body, _user_defined_split(model)


def _word(model: ModelData) -> tuple[dict, dict | None]:
    """Whole words, a new one at each "▁" (``SplitIntoWords``)."""
    body = {"type": "WordLevel", "vocab": _id_vocab(model), "unk_token": _unk_piece(model)}
    split = {"type": "Split", "pattern": {"String": SPACE_SYMBOL}, "behavior": "MergedWithNext",
             "invert": False}
    return body, split


def _decoder(model: ModelData) -> dict | None:
    """``DecodeSentencePiece``: control pieces vanish; "▁" is a space; byte
    pieces are bytes; leading spaces are dropped where the model strips
    them; the unknown piece shows its surface, which the strip must not
    touch, so it is marked "▁" until then.

    sentencepiece drops one leading "▁" per piece until some text is out
    when ``remove_extra_whitespaces`` (so all of them, unless a piece
    starts with two: no such model strips spaces), else exactly one."""
    spec = model.normalizer
    surface = model.special.unk_surface
    strip = spec.escape_whitespaces and (spec.add_dummy_prefix or spec.remove_extra_whitespaces)
    unk = r"\A%s\z" % re.escape(_unk_piece(model))
    steps = []
    control = _pieces_of(model, PieceType.CONTROL)
    if control:
        steps.append(hf_json.replace(r"\A(?:%s)\z" % _alternation(control), "", regex=True))
    if spec.escape_whitespaces:
        steps.append(hf_json.replace(SPACE_SYMBOL, " "))
    steps.append(hf_json.replace(unk, _UNK_MARK if strip else surface, regex=True))
    if model.byte_fallback:
        steps.append({"type": "ByteFallback"})
    steps.append({"type": "Fuse"})
    if strip:
        steps.append({"type": "Strip", "content": " ",
                      "start": _ALL if spec.remove_extra_whitespaces else 1, "stop": 0})
        steps.append(hf_json.replace(_UNK_MARK, surface))
    return hf_json.sequence("decoder", steps)


# -- import ---------------------------------------------------------------------

def json_to_sentencepiece(data: dict, source: str = "tokenizer.json") -> ModelData:
    """A SentencePiece model from a SentencePiece-shaped tokenizer.json.

    Piece types come from what the JSON says: the unknown token; added
    special tokens and the pieces the decoder drops are CONTROL; added
    non-special tokens and pieces the pre-tokenizer isolates are
    USER_DEFINED, and so are unigram pieces scored exactly as this module
    exports user-defined ones (``0.1 * bytes - 0.1``: no log-probability
    of a trained piece is >= 0); ``<0xNN>`` pieces of a byte-fallback
    model are BYTE.
    BPE scores are minus the rank of the first merge making the piece
    (sentencepiece merges by score), pieces no merge makes rank after."""
    model = data.get("model") or {}
    kind = hf_json.model_type(model)
    if kind not in ("Unigram", "BPE"):
        raise ModelFileError("%s: only a Unigram or BPE model converts to a SentencePiece model, "
                             "not %s." % (source, kind))
    spec, user_defined = _normalizer_spec(data, source)
    if kind == "Unigram":
        pieces = [entry[0] for entry in model["vocab"]]
        scores = [float(entry[1]) for entry in model["vocab"]]
        unk_id = model.get("unk_id")
        byte_fallback = bool(model.get("byte_fallback"))
    else:
        pieces, scores = _bpe_pieces(model, source)
        unk_id = pieces.index(model["unk_token"]) if model.get("unk_token") in pieces else None
        byte_fallback = bool(model.get("byte_fallback"))
    if unk_id is None:
        raise ModelFileError("%s: the model has no unknown token; SentencePiece needs one." % source)
    control = set(_decoder_control(data)) | {t["content"] for t in data.get("added_tokens") or []
                                            if t.get("special")}
    user_defined |= {t["content"] for t in data.get("added_tokens") or [] if not t.get("special")}
    types = []
    for index, piece in enumerate(pieces):
        if index == unk_id:
            types.append(PieceType.UNKNOWN)
        elif byte_fallback and re.fullmatch("<0x[0-9A-F]{2}>", piece):
            types.append(PieceType.BYTE)
        elif piece in control:
            types.append(PieceType.CONTROL)
        elif piece in user_defined or (kind == "Unigram" and _user_defined_score(piece, scores[index])):
            types.append(PieceType.USER_DEFINED)
        else:
            types.append(PieceType.NORMAL)
    scores = [0.0 if t in (PieceType.CONTROL, PieceType.UNKNOWN, PieceType.BYTE) or
              (t == PieceType.USER_DEFINED and kind == "Unigram") else s
              for s, t in zip(scores, types)]
    special = SpecialPieces(unk_piece=pieces[unk_id])
    special.unk_surface = _decoder_unk_surface(data, pieces[unk_id])
    result = ModelData(pieces=pieces, scores=scores, types=types,
                       model_type="unigram" if kind == "Unigram" else "bpe",
                       normalizer=spec, byte_fallback=byte_fallback, special=special)
    try:
        result.vocabulary()
    except ModelFileError as exc:
        raise ModelFileError("%s: %s" % (source, exc)) from None
    return result


def _user_defined_score(piece: str, score: float) -> bool:
    """True for the score :func:`_unigram` gives a user-defined piece."""
    return score >= 0 and score == _f32(0.1 * len(piece.encode("utf-8")) - 0.1)


def _bpe_pieces(model: dict, source: str) -> tuple[list[str], list[float]]:
    """Pieces in id order and scores from merge ranks."""
    vocab = model["vocab"]
    pieces: list[str | None] = [None] * (max(vocab.values()) + 1 if vocab else 0)
    for piece, index in vocab.items():
        pieces[index] = piece
    if any(p is None for p in pieces):
        raise ModelFileError("%s: the vocabulary has ids with no token; a SentencePiece model "
                             "has none." % source)
    first_rank: dict[str, int] = {}
    for rank, merge in enumerate(model.get("merges") or []):
        left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
        first_rank.setdefault(left + right, rank)
    unmerged = len(first_rank)
    scores = []
    for index, piece in enumerate(pieces):
        rank = first_rank.get(piece)
        scores.append(-float(rank if rank is not None else unmerged + index))
    return pieces, scores  # type: ignore[return-value]


def _steps(component: dict | None, key: str) -> list[dict]:
    """The items of a Sequence (or the one component)."""
    if not component:
        return []
    if component.get("type") == "Sequence":
        return [step for item in component[key] for step in _steps(item, key)]
    return [component]


def _normalizer_spec(data: dict, source: str) -> tuple[NormalizerSpec, set[str]]:
    """The NormalizerSpec that the normalizer and pre-tokenizer amount to,
    and the user-defined pieces a Split isolates."""
    spec = NormalizerSpec(name="identity", add_dummy_prefix=False, remove_extra_whitespaces=False,
                          escape_whitespaces=False)
    user_defined: set[str] = set()
    for step in _without_recipe(_steps(data.get("normalizer"), "normalizers")):
        kind = step.get("type")
        if kind == "Precompiled":
            spec.precompiled_charsmap = base64.b64decode(step.get("precompiled_charsmap") or "")
            spec.name = "user_defined" if spec.precompiled_charsmap else "identity"
        elif kind == "Prepend" and step.get("prepend") in (SPACE_SYMBOL, " "):
            spec.add_dummy_prefix = True
        elif kind == "Replace" and step["pattern"].get("String") == " " and \
                step["content"] == SPACE_SYMBOL:
            spec.escape_whitespaces = True
        elif kind == "Replace" and step["pattern"].get("Regex") in (r"\A +| +\z", " {2,}"):
            spec.remove_extra_whitespaces = True
        elif kind == "Replace" and step["pattern"].get("Regex") == SPACE_SYMBOL + r"+\z":
            pass  # part of remove_extra_whitespaces
        else:
            raise ModelFileError("%s: a %s normalizer has no SentencePiece equivalent."
                                 % (source, kind))
    for step in _steps(data.get("pre_tokenizer"), "pretokenizers"):
        kind = step.get("type")
        if kind == "Metaspace":
            spec.escape_whitespaces = True
            scheme = step.get("prepend_scheme") or ("always" if step.get("add_prefix_space", True)
                                                    else "never")
            spec.add_dummy_prefix = scheme != "never"
        elif kind == "WhitespaceSplit":
            spec.remove_extra_whitespaces = True
        elif kind == "Split" and step.get("behavior") == "Isolated" and "Regex" in step["pattern"]:
            user_defined.update(_unalternate(step["pattern"]["Regex"]))
        else:
            raise ModelFileError("%s: a %s pre-tokenizer has no SentencePiece equivalent."
                                 % (source, kind))
    if not spec.escape_whitespaces:
        raise ModelFileError("%s: spaces are not escaped as \u2581 (no Metaspace or Replace); "
                             "not a SentencePiece-shaped tokenizer." % source)
    return spec, user_defined


def _without_recipe(steps: list[dict]) -> list[dict]:
    """``steps`` with the steps :func:`_charsmap_steps` puts around a
    charsmap read as its ``Precompiled`` step alone."""
    for index, step in enumerate(steps):
        if step.get("type") == "Precompiled" and step.get("precompiled_charsmap"):
            recipe = _charsmap_steps(base64.b64decode(step["precompiled_charsmap"]))
            start = index - recipe.index(step) if step in recipe else -1
            if start >= 0 and steps[start:start + len(recipe)] == recipe:
                return steps[:start] + [step] + steps[start + len(recipe):]
    return steps


def _unalternate(pattern: str) -> list[str]:
    """The strings of an alternation written by :func:`_alternation`."""
    return [re.sub(r"\\(.)", r"\1", part) for part in re.split(r"(?<!\\)\|", pattern)]


def _decoder_control(data: dict) -> list[str]:
    """The pieces an exported decoder drops (its anchored Replace to "")."""
    for step in _steps(data.get("decoder"), "decoders"):
        pattern = (step.get("pattern") or {}).get("Regex", "")
        if step.get("type") == "Replace" and step.get("content") == "" and \
                pattern.startswith(r"\A(?:") and pattern.endswith(r")\z"):
            return _unalternate(pattern[len(r"\A(?:"):-len(r")\z")])
    return []


def _decoder_unk_surface(data: dict, unk: str) -> str:
    """What the decoder turns the unknown piece into (default " ⁇ ")."""
    marked = False
    for step in _steps(data.get("decoder"), "decoders"):
        if step.get("type") != "Replace":
            continue
        pattern = step["pattern"].get("Regex") or step["pattern"].get("String")
        if pattern == r"\A%s\z" % re.escape(unk):
            if step["content"] != _UNK_MARK:
                return step["content"]
            marked = True
        elif marked and pattern == _UNK_MARK:
            return step["content"]
    return DEFAULT_UNK_SURFACE


def model_data_to_proto(model: ModelData):
    """The ModelProto of an imported model, as spm_train would write it."""
    trainer = {"model_type": MODEL_TYPE_IDS[model.model_type], "vocab_size": len(model.pieces),
               "byte_fallback": model.byte_fallback, "unk_piece": model.special.unk_piece}
    for name in ("unk", "bos", "eos", "pad"):
        piece = getattr(model.special, name + "_piece")
        index = model.pieces.index(piece) if piece in model.pieces else -1
        expected = PieceType.UNKNOWN if name == "unk" else PieceType.CONTROL
        trainer[name + "_id"] = index if index >= 0 and model.types[index] == expected else -1
    if model.special.unk_surface != DEFAULT_UNK_SURFACE:
        trainer["unk_surface"] = model.special.unk_surface
    spec = model.normalizer
    normalizer = {"name": spec.name, "precompiled_charsmap": spec.precompiled_charsmap,
                  "add_dummy_prefix": spec.add_dummy_prefix,
                  "remove_extra_whitespaces": spec.remove_extra_whitespaces,
                  "escape_whitespaces": spec.escape_whitespaces}
    if not all(map(math.isfinite, model.scores)):
        raise ModelFileError("a score is not a finite number.")
    return build_proto(model, trainer, normalizer)


__all__ = ["sentencepiece_to_json", "json_to_sentencepiece", "model_data_to_proto", "bpe_merges",
           "UNEXPRESSIBLE", "ExportWarning"]
