"""The command-line tools: ``subtok train | encode | decode | export-vocab``.

A thin layer: :mod:`subtok.cli.app` holds the command group and the table
of commands, one module per command parses its flags and streams lines
through the library: :mod:`subtok.lines` for encoding and decoding files
of lines (the line encoders, worker processes, the line cache),
:mod:`subtok.training` for training and counting, :mod:`subtok.dask` for
``--scheduler``. No library module imports this package.
"""
