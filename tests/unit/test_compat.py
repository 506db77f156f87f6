"""The compatibility layer's own promises (no oracle needed).

* every name of the API table exists on the processor, in both spellings
  where sentencepiece has both, and aliases call their targets;
* numpy is optional: ``out_type="numpy"`` without it says what to install,
  and ``import subtok`` never imports it;
* a processor without a model says "Model is not initialized." as a
  RuntimeError.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from subtok import SentencePieceProcessor, compat


def test_camel_case_spellings():
    assert compat.camel_case("encode_as_pieces") == "EncodeAsPieces"
    assert compat.camel_case("nbest_encode_as_ids") == "NBestEncodeAsIds"
    assert compat.camel_case("load_from_serialized_proto") == "LoadFromSerializedProto"
    assert compat.camel_case("id_to_piece") == "IdToPiece"


def test_every_table_name_is_on_the_processor():
    for name, (_target, _params, _fixed, camel) in compat.API.items():
        assert callable(getattr(SentencePieceProcessor, name)), name
        if camel:
            assert callable(getattr(SentencePieceProcessor, compat.camel_case(name))), name


def test_forwarders_pass_their_fixed_arguments():
    calls = []

    class Probe(SentencePieceProcessor):
        def encode(self, input, **kwargs):
            calls.append((input, kwargs))

    Probe().sample_encode_as_ids("x", 5, 0.3, add_bos=True)
    assert calls == [("x", {"nbest_size": 5, "alpha": 0.3, "add_bos": True,
                            "return_type": int, "enable_sampling": True})]
    with pytest.raises(TypeError):
        Probe().encode_as_pieces("x", 1)


def test_numpy_is_optional():
    code = ("import sys; sys.modules['numpy'] = None\n"
            "import subtok\n"
            "from subtok.compat import load_numpy\n"
            "try:\n    load_numpy()\nexcept ImportError as exc:\n    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert "pip install numpy" in done.stdout


def test_import_subtok_loads_neither_numpy_nor_training():
    code = ("import sys, subtok\n"
            "print([m for m in sys.modules if m == 'numpy' or m.startswith('subtok.training')])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_no_model_is_a_runtime_error():
    sp = SentencePieceProcessor()
    for call in (lambda: sp.encode("x"), lambda: sp.EncodeAsPieces("x"),
                 lambda: sp.normalize("x"), lambda: sp.nbest_encode("x")):
        with pytest.raises(RuntimeError, match="Model is not initialized"):
            call()
