"""Stage 4 of the pipeline: what happens to a model's pieces before they are
output (byte fallback, unknown runs, bos/eos/reverse). See
:mod:`subtok.postprocessors.base`."""
