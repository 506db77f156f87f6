"""--extra_options that a model cannot apply fail as the command's kind of
error: an EncodeError when encoding, a DecodeError when decoding (both
reported in one line by the command line)."""

import pytest

from subtok.errors import DecodeError, EncodeError
from subtok.postprocessors.extra_options import for_tiktoken


@pytest.mark.parametrize("error", [EncodeError, DecodeError])
def test_the_error_is_the_callers(error):
    with pytest.raises(error, match='option "nonsense" is not available'):
        for_tiktoken("nonsense", {"<|endoftext|>": 1}, "m.tiktoken", error)
    with pytest.raises(error, match="m.tiktoken: --extra_options bos: the model has no BOS"):
        for_tiktoken("bos", {}, "m.tiktoken", error)


def test_encoding_is_the_default():
    with pytest.raises(EncodeError) as raised:
        for_tiktoken("eos", {}, "m.tiktoken")
    assert not isinstance(raised.value, DecodeError)
    assert for_tiktoken("bos:eos", {"<|endoftext|>": 7}, "m.tiktoken").apply([3], ["x"]) == \
        ([7, 3, 7], ["<|endoftext|>", "x", "<|endoftext|>"])
