"""The command-line tools: ``subtok train | encode | decode | export-vocab``.

A thin layer: :mod:`subtok.cli.app` holds the command group and the table
of commands, one module per command parses its flags and streams lines
through the library; :mod:`subtok.cli.batch` and :mod:`subtok.cli.workers`
run blocks of lines in worker processes, and :mod:`subtok.cli.fastpath`
is the encoder's line cache for spm_encode-style output.
"""
