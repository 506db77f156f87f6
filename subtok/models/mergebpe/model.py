"""BPE with a merge list, as Hugging Face ``tokenizers`` runs it
(``tokenizers/src/models/bpe/{model,word}.rs``).

This is not SentencePiece's BPE (:mod:`subtok.models.bpe`), which merges by
piece score and stores no merges. Here a word starts as its characters
(each looked up in the vocabulary, with ``continuing_subword_prefix`` on
all but the first and ``end_of_word_suffix`` on the last; a character not
in the vocabulary becomes its byte tokens ``<0xNN>`` with ``byte_fallback``,
else the unknown token, runs of which ``fuse_unk`` joins, else nothing),
then adjacent pairs are merged by rank: always the pair of lowest rank,
leftmost first, through a priority queue exactly like ``Word::merge_all``
(a queued pair that no longer holds is skipped when it comes up, unless
the symbols now there merge into the same token).

Dropout (BPE-dropout): each time a merge comes up it is skipped with
probability ``dropout``; skipped merges return to the queue once a merge is
done. ``tokenizers`` draws from an unseeded thread generator; here the
model draws from ``self.rng`` (a ``random.Random``), seeded by the
``seed`` given to the constructor (None: from the system), so a seed fixes
the sequence of segmentations a process produces. With dropout the cache
is bypassed, as in ``tokenizers``.

Token spans are kept in UTF-8 bytes while merging, as ``tokenizers`` keeps
them, because a byte token stands for part of a character; they are turned
into character spans at the end (a token covers every character one of its
bytes belongs to).
"""

from __future__ import annotations

import heapq
import operator
import random
import re
from collections.abc import Callable, Sequence
from functools import cached_property
from itertools import chain, islice
from operator import itemgetter
from typing import NamedTuple

import regex

from subtok.errors import EncodeError, ModelFileError
from subtok.formats.json_fields import U32, field
from subtok.models.tokens import VocabModel, WordTokens

Pair = tuple[int, int]


class MergeList(NamedTuple):
    """Merges as columns (what a file's 100k merges are read into in C
    loops, without a tuple per merge): the left and right tokens, and each
    merge's two strings joined (``left + right``)."""

    lefts: list[str]
    rights: list[str]
    joined: list[str]

    @classmethod
    def of_pairs(cls, pairs: Sequence[tuple[str, str]]) -> MergeList:
        lefts = list(map(itemgetter(0), pairs))
        rights = list(map(itemgetter(1), pairs))
        return cls(lefts, rights, list(map(operator.add, lefts, rights)))

#: Words of at most this many symbols are merged by rescanning their
#: pair ranks (C-level min and index; cheaper in Python than a queue);
#: longer ones through the queue, which does not cost the square of the
#: length.
_SCAN_LIMIT = 256
#: The rank of a pair that does not merge.
_NO_MERGE = 1 << 62
#: Words longer than this are cut at safe places, when the model has them.
_CUT_ABOVE = 48
#: Characters that start words in the vocabularies of the common formats.
_WORD_MARKS = ("\u2581", "\u0120", " ")


class MergeBPE(VocabModel):
    """A ``tokenizer.json`` BPE model."""

    def __init__(self, vocab: dict[str, int], merges: Sequence[tuple[str, str]] | MergeList, *,
                 unk_token: str | None = None, continuing_subword_prefix: str | None = None,
                 end_of_word_suffix: str | None = None, fuse_unk: bool = False,
                 byte_fallback: bool = False, ignore_merges: bool = False,
                 dropout: float | None = None, seed: int | None = None, where: str = "") -> None:
        super().__init__(vocab)
        if dropout is not None and not 0.0 <= dropout <= 1.0:
            raise ModelFileError("%s: dropout should be between 0 and 1, not %r." % (where, dropout))
        self.unk_token = unk_token
        self.prefix = continuing_subword_prefix
        self.suffix = end_of_word_suffix
        self.fuse_unk = fuse_unk
        self.byte_fallback = byte_fallback
        self.ignore_merges = ignore_merges
        self.dropout = dropout or None
        self.rng = random.Random(seed)
        if not isinstance(merges, MergeList):
            merges = MergeList.of_pairs(merges)
        #: The merge table's columns, checked; the table is built from them
        #: when first used (see :attr:`merges`).
        self._merge_columns: tuple[list[int], list[int], list[int]] = \
            self._merge_ids(merges, where)
        self._byte_ids = [vocab.get("<0x%02X>" % b) for b in range(256)]
        #: (pattern, left neighbours) for cuts inside words, made on first need
        self._inner: tuple[regex.Pattern, dict[str, set[str]]] | None = None

    # Where words may be cut is worked out on first need (a cached property
    # stores its value in the instance, so later reads are plain attribute
    # reads): a load does not pay for what encoding may never use.
    @cached_property
    def _cuttable(self) -> bool:
        """Whether words may be cut at all (see :meth:`_cutter`)."""
        if self.prefix or self.suffix or self.ignore_merges or self.dropout is not None:
            return False
        byte_ids = {i for i in self._byte_ids if i is not None}
        return not (byte_ids and any(a in byte_ids or b in byte_ids for a, b in self.merges))

    @cached_property
    def _cutter(self) -> Callable[[str], list[str]] | None:
        """str -> its parts between safe cuts: where a long word can be cut
        into parts merged alone, or None.

        A cut between characters ``x`` and ``y`` is safe when no vocabulary
        token contains ``xy``: no merge can then make a symbol across it
        (a merge's result is a token), so each side merges as if alone, in
        the same rank order. Both characters must be tokens themselves (an
        unknown one could be fused with its neighbour, or become byte
        tokens). Whatever the continuing prefix, end-of-word suffix, whole
        word lookup (ignore_merges) or dropout do at a word's ends would
        change at a cut, so none may be set; nor may merges join byte
        tokens. Cuts are looked for before a word mark ("▁", "Ġ", " "): a
        SentencePiece-style model (llama2) sees whole lines as one word.
        """
        if not self._cuttable:
            return None
        for mark in _WORD_MARKS:
            if mark not in self.vocab:
                continue
            before = self._chars_before(mark)
            m = regex.escape(mark)
            if before <= {mark}:  # cut before each run of marks: the parts are matches
                return regex.compile("%s*[^%s]+|%s+" % (m, m, m)).findall
            excluded = "".join(map(regex.escape, sorted(before)))
            return regex.compile("(?<=[^%s])(?=%s)" % (excluded, m), regex.DOTALL).split
        return None

    @cached_property
    def _singles(self) -> frozenset[str]:
        """The one-character tokens."""
        return frozenset(token for token in self.vocab if len(token) == 1)

    def cut_ends_before(self, mark: str) -> frozenset[str] | None:
        """The characters ``x`` such that a word cut between ``x`` and
        ``mark`` segments as its two sides do alone (the safety of
        :attr:`_cutter`: both are tokens and no token holds ``x`` then
        ``mark``), or None when no cut is safe in this model."""
        if not self._cuttable or mark not in self._singles:
            return None
        return self._singles - self._chars_before(mark) - {mark}

    def _chars_before(self, mark: str) -> set[str]:
        """The characters some token holds right before ``mark``."""
        return {token[i - 1] for token in self.vocab if mark in token[1:]
                for i in range(1, len(token)) if token[i] == mark}

    def _split(self, word: str) -> list[str]:
        """A word cut at its safe places: before a mark that follows a
        character no token joins to it, when that character is a token."""
        parts = self._cutter(word)  # type: ignore[misc]
        vocab = self.vocab
        if len(parts) == 1 or all(map(vocab.__contains__, word)):
            return parts
        out = [parts[0]]
        for part in parts[1:]:  # an unknown character before the cut: glue back
            if out[-1][-1] in vocab:
                out.append(part)
            else:
                out[-1] += part
        return out

    def _inner_parts(self, word: str) -> list[str]:
        """A word cut before each non-alphanumeric character (punctuation,
        word marks) that no token joins to the character before it (the
        same safety as :attr:`_cutter`): "▁said," merges as "▁said" and
        "," do, and the cache already knows "▁said"."""
        if self._inner is None:
            self._inner = self._inner_cut_table()
        pattern, left = self._inner
        vocab = self.vocab  # holding a character: holding it as a one-character token
        cuts = [i for i in (m.start() for m in pattern.finditer(word, 1))
                if word[i - 1] not in left[word[i]] and word[i - 1] in vocab]
        if not cuts:
            return [word]
        return [word[a:b] for a, b in zip([0] + cuts, cuts + [len(word)])]

    def _inner_cut_table(self) -> tuple[regex.Pattern, dict[str, set[str]]]:
        """The non-alphanumeric one-character tokens, and for each the
        characters that precede it inside some token."""
        left: dict[str, set[str]] = {c: set() for c in self._singles if not c.isalnum()}
        for token in self.vocab:
            for before, char in zip(token, token[1:]):
                if char in left:
                    left[char].add(before)
        chars = "".join(map(regex.escape, sorted(left)))
        return regex.compile("[%s]" % chars if chars else "(?!)"), left

    @cached_property
    def merges(self) -> dict[Pair, tuple[int, int]]:
        """(left id, right id) -> (rank, merged id); a pair listed twice
        keeps its last rank. Built on first use: what a load need not pay
        for when the model only decodes or looks tokens up."""
        # The columns stay: clearing them here would race a second thread
        # building the table at once (cached_property has no lock since 3.12).
        lefts, rights, merged = self._merge_columns
        return dict(zip(zip(lefts, rights), zip(range(len(lefts)), merged)))

    def _merge_ids(self, merges: MergeList, where: str) -> tuple[list[int], list[int], list[int]]:
        """The ids of each merge's left, right and merged token. The merged
        token is the left one followed by the right one less the prefix's
        length in bytes (``BpeBuilder::build``). Looked up column by column
        (C loops: 100k merges); a name not in the vocabulary is an error."""
        get = self.vocab.get
        lefts, rights, merged = merges
        cut = len(self.prefix.encode("utf-8")) if self.prefix else 0
        if cut:
            rights_cut = [r.encode("utf-8")[cut:].decode("utf-8", "replace") for r in rights]
            merged = list(map(operator.add, lefts, rights_cut))
        columns = (list(map(get, lefts)), list(map(get, rights)),
                   self._ids_in_order(merged) or list(map(get, merged)))
        for tokens, ids in zip((lefts, rights, merged), columns):
            if None in ids:
                rank = ids.index(None)
                raise ModelFileError("%s: merge %d (%r %r) names %r, which is not in the "
                                     "vocabulary." % (where, rank + 1, lefts[rank], rights[rank],
                                                      tokens[rank]))
        return columns

    def _ids_in_order(self, tokens: list[str]) -> list[int] | None:
        """The ids of ``tokens`` when they are consecutive vocabulary
        entries, found where the first one's id says (a trained BPE's merges
        make its tokens in that order, ids counting up from 0), else None.
        Found by comparing slices in C: no string is hashed, where looking
        the tokens up hashes each."""
        first = self.vocab.get(tokens[0]) if tokens else None
        if first is None:
            return None
        stop = first + len(tokens)
        if list(islice(self.vocab, first, stop)) != tokens:
            return None
        return list(islice(self.vocab.values(), first, stop))

    @classmethod
    def from_json(cls, spec: dict, where: str = "", seed: int | None = None) -> MergeBPE:
        vocab = vocab_field(spec, where)
        merges = merges_field(spec, where)
        optional = {name: field(spec, name, str, where, None)
                    for name in ("unk_token", "continuing_subword_prefix", "end_of_word_suffix")}
        flags = {name: field(spec, name, bool, where, None) or False
                 for name in ("fuse_unk", "byte_fallback", "ignore_merges")}
        dropout = field(spec, "dropout", float, where, None)
        return cls(vocab, merges, **optional, **flags, dropout=dropout, seed=seed, where=where)

    # -- encoding ------------------------------------------------------------
    def encode_word(self, word: str) -> WordTokens:
        if self.dropout is not None:
            return self.segment(word)
        if len(word) <= _CUT_ABOVE or self._cutter is None:
            return super().encode_word(word)
        parts = self._split(word)
        if len(parts) == 1:
            return super().encode_word(word)
        return _joined(word, super().encode_words(parts), parts)

    def _parts(self, words: list[str]) -> list[str]:
        """The words, long ones cut at safe places (see :attr:`_cutter`)."""
        split = self._split
        return [part for word in words
                for part in (split(word) if len(word) > _CUT_ABOVE else (word,))]

    def encode_words(self, words: list[str]) -> list[WordTokens]:
        """Tokens of each word, a long word as the tokens of its parts
        (their concatenation is the word's)."""
        if self.dropout is not None:
            return list(map(self.segment, words))
        if words and max(map(len, words)) > _CUT_ABOVE and self._cutter is not None:
            words = self._parts(words)
        return super().encode_words(words)

    def segment(self, word: str) -> WordTokens:
        if self._cuttable and self.dropout is None and len(word) > 1:
            parts = self._inner_parts(word)
            if len(parts) > 1:
                return _joined(word, super().encode_words(parts), parts)
        if self.ignore_merges:
            whole = self.vocab.get(word)
            if whole is not None:
                return WordTokens((whole,), (word,), ((0, len(word)),))
        ids, lengths, in_bytes = self._symbols(word)
        if self.dropout is None and len(ids) <= _SCAN_LIMIT:
            self._merge(ids, lengths)
        else:
            ids, lengths = self._merge_with_queue(ids, lengths)
        values = tuple(self.tokens_by_id[i] for i in ids)
        return WordTokens(tuple(ids), values, _spans(word, lengths, in_bytes))

    def _unk_id(self) -> int:
        unk_id = self.vocab.get(self.unk_token)  # type: ignore[arg-type]
        if unk_id is None:
            raise EncodeError("the unknown token %r is not in the vocabulary." % self.unk_token)
        return unk_id

    def _symbols(self, word: str) -> tuple[list[int], list[int], bool]:
        """The word's first symbols (``BPE::merge_word`` before merging):
        ids, lengths, and whether the lengths are in bytes (they are in
        characters unless a byte token split a character)."""
        if not self.prefix and not self.suffix:
            ids = list(map(self.vocab.get, word))
            if None not in ids:  # every character is a token
                return ids, [1] * len(ids), False  # type: ignore[return-value]
        ids, lengths = self._symbols_in_bytes(word)
        if lengths == [len(c.encode("utf-8", "surrogatepass")) for c in word]:
            return ids, [1] * len(ids), False  # one symbol per character
        return ids, lengths, True

    def _symbols_in_bytes(self, word: str) -> tuple[list[int], list[int]]:
        """Every case of ``merge_word``: prefix and suffix, byte fallback,
        unknown characters (fused or not, or dropped without an unknown
        token); lengths in UTF-8 bytes, as tokenizers keeps them."""
        vocab, prefix, suffix = self.vocab, self.prefix, self.suffix
        ids: list[int] = []
        lengths: list[int] = []
        unk: list[int] | None = None  # the pending unknown symbol: [id, length]
        last = len(word) - 1
        for i, char in enumerate(word):
            size = len(char.encode("utf-8", "surrogatepass"))
            token = char
            if i and prefix:
                token = prefix + token
            if i == last and suffix:
                token = token + suffix
            token_id = vocab.get(token)
            if token_id is not None:
                if unk is not None:
                    ids.append(unk[0])
                    lengths.append(unk[1])
                    unk = None
                ids.append(token_id)
                lengths.append(size)
                continue
            if self.byte_fallback:
                byte_ids = [self._byte_ids[b] for b in token.encode("utf-8", "surrogatepass")]
                if None not in byte_ids:
                    ids.extend(byte_ids)  # type: ignore[arg-type]
                    lengths.extend([1] * len(byte_ids))
                    continue
            if self.unk_token is not None:
                if unk is not None and self.fuse_unk:
                    unk[1] += size
                    continue
                if unk is not None:
                    ids.append(unk[0])
                    lengths.append(unk[1])
                unk = [self._unk_id(), size]
        if unk is not None:
            ids.append(unk[0])
            lengths.append(unk[1])
        return ids, lengths

    def _merge(self, ids: list[int], lengths: list[int]) -> None:
        """Merge in place, always the pair of lowest rank, the leftmost of
        equal ones. This is what ``Word::merge_all``'s queue does without
        dropout: the queue holds every live pair, and a stale entry never
        passes its check (a merge only lengthens symbols, so the pair now
        at its place makes a longer, different token). One scan per merge
        costs less than a queue for words of a few symbols."""
        get = self.merges.get
        found = list(map(get, zip(ids, ids[1:])))
        ranks = [m[0] if m else _NO_MERGE for m in found]
        while ranks:
            best = min(ranks)
            if best == _NO_MERGE:
                return
            pos = ranks.index(best)  # the leftmost pair of that rank
            ids[pos:pos + 2] = [found[pos][1]]
            lengths[pos:pos + 2] = [lengths[pos] + lengths[pos + 1]]
            del ranks[pos], found[pos]
            for k in (pos - 1, pos):  # the two pairs the new symbol is in
                if 0 <= k < len(ranks):
                    m = found[k] = get((ids[k], ids[k + 1]))
                    ranks[k] = m[0] if m else _NO_MERGE

    def _merge_with_queue(self, ids: list[int], lengths: list[int]) -> tuple[list[int], list[int]]:
        """``Word::merge_all`` step by step, for dropout and for long words
        (where rescanning would cost the square of the length): symbols
        linked both ways, a min-queue of (rank, position, merged id), a
        merged-away symbol marked by length 0, with dropout a random draw
        for each entry taken from the queue."""
        merges = self.merges
        count = len(ids)
        prev = list(range(-1, count - 1))
        nxt = list(range(1, count + 1))
        nxt[-1:] = [-1] if count else []
        queue = []
        for pos in range(count - 1):
            found = merges.get((ids[pos], ids[pos + 1]))
            if found is not None:
                queue.append((found[0], pos, found[1]))
        heapq.heapify(queue)
        dropout, rng, skipped = self.dropout, self.rng, []
        while queue:
            top = heapq.heappop(queue)
            if dropout is not None and rng.random() < dropout:
                skipped.append(top)
                continue
            for item in skipped:
                heapq.heappush(queue, item)
            skipped = []
            _, pos, new_id = top
            right = nxt[pos]
            if lengths[pos] == 0 or right == -1:
                continue
            current = merges.get((ids[pos], ids[right]))
            if current is None or current[1] != new_id:
                continue
            ids[pos] = new_id
            lengths[pos] += lengths[right]
            lengths[right] = 0
            nxt[pos] = nxt[right]
            if nxt[pos] != -1:
                prev[nxt[pos]] = pos
            before = prev[pos]
            if before >= 0:
                found = merges.get((ids[before], new_id))
                if found is not None:
                    heapq.heappush(queue, (found[0], before, found[1]))
            after = nxt[pos]
            if after != -1:
                found = merges.get((new_id, ids[after]))
                if found is not None:
                    heapq.heappush(queue, (found[0], pos, found[1]))
        kept = [i for i in range(count) if lengths[i]]
        return [ids[i] for i in kept], [lengths[i] for i in kept]


def _joined(word: str, found: list[WordTokens], parts: list[str]) -> WordTokens:
    """The tokens of consecutive parts of a word as the word's tokens."""
    spans = []
    begin = 0
    for part, tokens in zip(parts, found):
        spans += [(b + begin, e + begin) for b, e in tokens.spans]
        begin += len(part)
    return WordTokens(tuple(chain.from_iterable(t.ids for t in found)),
                      tuple(chain.from_iterable(t.values for t in found)), tuple(spans))


def _spans(word: str, lengths: list[int], in_bytes: bool) -> tuple[tuple[int, int], ...]:
    """Lengths of consecutive tokens -> their character spans in the word;
    a token of byte lengths covers each character one of its bytes is in."""
    if not in_bytes or word.isascii():
        spans = []
        position = 0
        for size in lengths:
            spans.append((position, position + size))
            position += size
        return tuple(spans)
    char_at = [i for i, c in enumerate(word) for _ in range(len(c.encode("utf-8", "surrogatepass")))]
    total = len(char_at)
    spans = []
    position = 0
    for size in lengths:
        first = char_at[position] if position < total else len(word) + position - total
        end = position + size
        last = char_at[end - 1] + 1 if end - 1 < total else len(word) + end - total
        spans.append((first, last))
        position = end
    return tuple(spans)


def vocab_field(spec: dict, where: str) -> dict[str, int]:
    """A ``{token: id}`` vocabulary (checked in C loops: 100k entries)."""
    vocab = field(spec, "vocab", dict, where)
    ids = list(vocab.values())
    if ids == list(range(len(ids))) and set(map(type, ids)) <= {int}:
        return vocab  # ids 0, 1, ... in file order, as tokenizers writes them: all good
    if vocab and (not set(map(type, vocab.values())) <= {int} or min(vocab.values()) < 0):
        token = next(t for t, i in vocab.items() if type(i) is not int or i < 0)
        raise ModelFileError("%s: vocabulary id of %r must be a non-negative integer, not %r."
                             % (where, token, vocab[token]))
    if vocab and max(vocab.values()) > U32:
        token = max(vocab, key=vocab.__getitem__)
        raise ModelFileError("%s: vocabulary id of %r must be at most %d, not %d."
                             % (where, token, U32, vocab[token]))
    if len(set(vocab.values())) != len(vocab):
        # tokenizers loads it, but which token an id decodes to is then the
        # order of a randomly seeded hash map: refused rather than guessed.
        first: dict[int, str] = {}
        for token, token_id in vocab.items():
            if token_id in first:
                raise ModelFileError("%s: tokens %r and %r share id %d." % (where, first[token_id],
                                                                           token, token_id))
            first[token_id] = token
    return vocab


#: A line without a space, in merges joined by newlines (and framed by two).
_SPACELESS_LINE = re.compile("\n[^ \n]*\n")


def _string_merges(merges: list) -> MergeList | None:
    """Merges that are all "a b" strings, split in C loops, or None
    (another form, or a string that is not two parts around one space)."""
    try:
        text = "\n".join(merges)
    except TypeError:  # not all strings
        return None
    # No merge holds a newline, each holds a space, and there are as many
    # spaces as merges: one line per merge, one space per line.
    if (text.count("\n") != len(merges) - 1 or text.count(" ") != len(merges)
            or _SPACELESS_LINE.search("\n%s\n" % text)):
        return None
    parts = text.replace(" ", "\n").split("\n")  # left, right, left, ...
    return MergeList(parts[0::2], parts[1::2], text.replace(" ", "").split("\n"))


def merges_field(spec: dict, where: str) -> MergeList:
    """Merges as ``["a b", ...]`` (tokenizers 0.19) or ``[["a", "b"], ...]``
    (0.20 on); a string must split on one space into exactly two parts.
    Checked and split in C loops where possible (100k merges)."""
    merges = field(spec, "merges", list, where)
    if merges and type(merges[0]) is str:
        found = _string_merges(merges)
        if found is not None:
            return found
    kinds = set(map(type, merges))
    if kinds <= {list} and set(map(len, merges)) <= {2}:
        if (set(map(type, map(itemgetter(0), merges))) <= {str}
                and set(map(type, map(itemgetter(1), merges))) <= {str}):
            return MergeList.of_pairs(merges)
    if str in kinds and list in kinds:  # serde's MergeType takes one form for the whole list
        raise ModelFileError("%s: merges must be all \"a b\" strings or all [\"a\", \"b\"] pairs, "
                             "not both." % where)
    out = []
    for rank, merge in enumerate(merges):
        parts = merge.split(" ") if isinstance(merge, str) else merge
        if not isinstance(parts, list) or len(parts) != 2 or not all(isinstance(p, str) for p in parts):
            raise ModelFileError("%s: merge %d must be \"a b\" or [\"a\", \"b\"], not %r."
                                 % (where, rank + 1, merge))
        out.append((parts[0], parts[1]))
    return MergeList.of_pairs(out)
