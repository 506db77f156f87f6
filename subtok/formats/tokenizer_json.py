"""Reading a Hugging Face ``tokenizer.json`` into stage components.

The file is one JSON object: ``version`` ("1.0"), ``truncation``,
``padding``, ``added_tokens``, ``normalizer``, ``pre_tokenizer``, ``model``,
``post_processor`` and ``decoder`` (files of tokenizers 0.19 to 0.23). Each
component is built by the registry of its stage (``subtok.<stage>.hf``);
:class:`TokenizerParts` holds them, and :class:`subtok.tokenizer.Tokenizer`
runs them. Every problem is one :class:`~subtok.errors.ModelFileError`
that names the file and the place in it.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from subtok.errors import ModelFileError


class TokenizerParts(NamedTuple):
    """The components of a tokenizer; any but ``model`` may be None."""

    model: Any
    normalizer: Any = None
    pre_tokenizer: Any = None
    post_processor: Any = None
    decoder: Any = None
    added_tokens: list = []
    truncation: Any = None
    padding: Any = None


#: Powers of ten as Rust's literals give them (correctly rounded).
_POW10 = [float("1e%d" % k) for k in range(309)]


def serde_f64(text: str) -> float:
    """A JSON number as serde_json reads it without its ``float_roundtrip``
    feature, as tokenizers builds it (``Deserializer::f64_from_parts``):
    the digits as an integer rounded to f64, then one multiplication or
    division by a power of ten. That can be one ulp away from the correctly
    rounded value (t5's "-12.130167007446289" becomes ...287), and Unigram
    ties between equal-looking paths are decided by those ulps."""
    mantissa, _, exp = text.lower().partition("e")
    negative = mantissa.startswith("-")
    whole, _, frac = mantissa.lstrip("-").partition(".")
    significand = int(whole + frac)
    exponent = (int(exp) if exp else 0) - len(frac)
    if significand >= 1 << 64 or not -308 <= exponent <= 308:
        return float(text)  # serde's slower paths for long or extreme numbers
    value = float(significand)
    value = value * _POW10[exponent] if exponent >= 0 else value / _POW10[-exponent]
    return -value if negative else value


def parse_json(text: str, source: str, decoded: bool = False) -> dict:
    """The top-level object of a ``tokenizer.json``; ``decoded``: the text
    was decoded from UTF-8, so it holds no surrogate itself."""
    try:
        data = json.loads(text, parse_constant=_no_constant, parse_float=serde_f64)
    except json.JSONDecodeError as exc:
        raise ModelFileError("%s:%d:%d: not valid JSON: %s." % (source, exc.lineno, exc.colno, exc.msg)) from None
    except ValueError as exc:  # what _no_constant says
        raise ModelFileError("%s: not valid JSON: %s." % (source, exc)) from None
    except RecursionError:
        raise ModelFileError("%s: JSON nested too deeply." % source) from None
    lone = _lone_surrogate(text, not decoded)
    if lone:
        raise ModelFileError("%s: not valid JSON: %s is a lone surrogate." % (source, lone))
    if not isinstance(data, dict) or "model" not in data:
        raise ModelFileError("%s: not a tokenizer.json (no JSON object with a \"model\")." % source)
    return data


#: Every escape of a JSON text that parsed, taken from the left (each
#: backslash there starts one): a high surrogate's escape followed by a low
#: one's (Python's json joins them into one character), or a surrogate's
#: escape alone (group 1: json keeps it as a lone surrogate), or any other.
_ESCAPES = re.compile(r"\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
                      r"|(u[dD][89a-fA-F][0-9a-fA-F]{2})|.)", re.DOTALL)


def _lone_surrogate(text: str, raw: bool) -> str:
    """What in the text of parsed JSON is a lone surrogate (which
    serde_json refuses), or "": found in the text, not by walking every
    string parsed from it. ``raw``: the text itself may hold surrogates
    (a str from a caller; text decoded from UTF-8 cannot)."""
    if raw:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return "a character"
    if "\\ud" not in text and "\\uD" not in text:
        return ""
    return "a \\u escape" if any(_ESCAPES.findall(text)) else ""


def _no_constant(name: str):
    """NaN and Infinity, which Python's json reads and serde_json (so
    tokenizers) refuses."""
    raise ValueError("%s is not a JSON value" % name)


def read_parts(data: dict, source: str) -> TokenizerParts:
    """Build every component of a parsed ``tokenizer.json``."""
    # Imported here: only a tokenizer.json needs them, and the registries
    # import every component of their stage.
    from subtok.added_vocabulary import AddedToken
    from subtok.decoders import hf as decoders
    from subtok.models import hf as models
    from subtok.normalizers import hf as normalizers
    from subtok.postprocessors import hf as postprocessors
    from subtok.postprocessors.limits import Padding, Truncation
    from subtok.pretokenizers import hf as pretokenizers

    version = data.get("version", "1.0")
    if version != "1.0":
        raise ModelFileError("%s: unknown tokenizer.json version %r (only \"1.0\" exists)."
                             % (source, version))

    def part(key: str, registry) -> Any:
        spec = data.get(key)
        return None if spec is None else registry.from_json(spec, "%s: %s" % (source, key))

    added = data.get("added_tokens") or []
    if not isinstance(added, list):
        raise ModelFileError("%s: added_tokens must be a list." % source)
    return TokenizerParts(
        model=part("model", models),
        normalizer=part("normalizer", normalizers),
        pre_tokenizer=part("pre_tokenizer", pretokenizers),
        post_processor=part("post_processor", postprocessors),
        decoder=part("decoder", decoders),
        added_tokens=[AddedToken.from_json(t, "%s: added_tokens[%d]" % (source, i))
                      for i, t in enumerate(added)],
        truncation=_settings(data, "truncation", Truncation, source),
        padding=_settings(data, "padding", Padding, source),
    )


def _settings(data: dict, key: str, kind, source: str):
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ModelFileError("%s: %s must be an object or null." % (source, key))
    return kind.from_json(value, "%s: %s" % (source, key))
