"""Normalization: the charsmap codec and the SentencePiece normalizer."""

from subtok.normalizers.charsmap import decode_charsmap
from subtok.normalizers.sentencepiece import SPACE_SYMBOL, Normalizer

__all__ = ["Normalizer", "SPACE_SYMBOL", "decode_charsmap"]
