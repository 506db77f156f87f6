"""Files of lines through a model: what ``subtok encode`` and ``subtok
decode`` run, and what :mod:`subtok.dask` runs on its workers, with no
command-line code in it.

:mod:`subtok.lines.encoders` builds the line encoder for a model of any
kind and the command's options (``line_encoder``); :mod:`subtok.lines.batch`
holds the per-line encoders and decoders and ``map_blocks``, which runs
blocks of lines in worker processes (:mod:`subtok.lines.workers`);
:mod:`subtok.lines.streams` reads and writes lines and blocks;
:mod:`subtok.lines.fastpath` is the encoder's line cache for
spm_encode-style output; :mod:`subtok.lines.tokenizer_lines` and
:mod:`subtok.lines.tiktoken_lines` are the same for tokenizer.json and
tiktoken models.
"""
