"""Normalization: the charsmap codec and the SentencePiece normalizer."""

from .charsmap import decode_charsmap
from .normalizer import SPACE_SYMBOL, Normalizer

__all__ = ["Normalizer", "SPACE_SYMBOL", "decode_charsmap"]
