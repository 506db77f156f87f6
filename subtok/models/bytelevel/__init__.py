"""Byte-level BPE (GPT-2, tiktoken): a split pattern, then byte-pair
merging by rank. :class:`Encoding` is the public face, named and shaped
after ``tiktoken.Encoding``."""

from subtok.models.bytelevel.encoding import Encoding

__all__ = ["Encoding"]
