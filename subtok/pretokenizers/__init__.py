"""Stage 2 of the pipeline: cutting normalized text into pre-tokens (words)
that the model segments independently. See :mod:`subtok.pretokenizers.base`."""
