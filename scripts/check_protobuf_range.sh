#!/usr/bin/env bash
# Check subtok/_proto/sentencepiece_model_pb2.py against a range of protobuf runtimes.
#
#   bash scripts/check_protobuf_range.sh                 # the default matrix below
#   bash scripts/check_protobuf_range.sh 4.21.12 7.36.2  # chosen versions only
#
# 1. In the system Python (which must have sentencepiece installed), read every
#    model in shared/data/models with sentencepiece's own sentencepiece_model_pb2
#    and record what it sees; also compare our schema with sentencepiece's, field
#    by field, and import both modules in one process.
# 2. For each protobuf version, in a throwaway venv under /tmp (reused on reruns),
#    with both the default (upb / C++) and the pure-Python implementation:
#    import subtok._proto.sentencepiece_model_pb2 with PYTHONPATH=<repo>, require a
#    byte-identical FromString/SerializeToString round trip for every model, no
#    unknown fields, the same piece count / model_type / normalizer name / pieces
#    as step 1, proto2 defaults and presence, and byte-identical writing of a
#    message built from scratch; and the same models (plus one whose piece is not
#    UTF-8) through sentencepiece_model_raw_pb2, the schema models are read with.
# Prints one PASS/FAIL line per runtime and "N passed, N failed" at the end;
# exits non-zero if anything failed. Venvs: $SUBTOK_PBCHECK_DIR (/tmp/subtok-pbcheck).
set -uo pipefail

DEFAULT_VERSIONS=(3.20.3 4.21.12 4.25.9 5.29.6 6.33.6 7.36.2)
if [ "$#" -gt 0 ]; then VERSIONS=("$@"); else VERSIONS=("${DEFAULT_VERSIONS[@]}"); fi

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODELS_DIR="${SUBTOK_MODELS_DIR:-$ROOT/../shared/data/models}"
PYTHON="${PYTHON:-python3}"
WORK="${SUBTOK_PBCHECK_DIR:-/tmp/subtok-pbcheck}"
mkdir -p "$WORK"
MODELS_DIR="$(cd "$MODELS_DIR" && pwd)" || { echo "no models dir: $MODELS_DIR" >&2; exit 2; }

# ---------------------------------------------------------------- shared
cat > "$WORK/pbcheck_common.py" <<'PY'
"""What both sides compute, each with its own pb2 module ``mod``."""
import hashlib, struct

def summary(m, mod, data):
    digest = hashlib.sha256()
    for p in m.pieces:
        digest.update(p.piece.encode() + b"\0" + struct.pack("<f", p.score)
                      + bytes([p.type, p.HasField("type")]))
    return {
        "sha256": hashlib.sha256(data).hexdigest(),
        "pieces": len(m.pieces),
        "model_type": mod.TrainerSpec.ModelType.Name(m.trainer_spec.model_type),
        "normalizer": m.normalizer_spec.name,
        "pieces_digest": digest.hexdigest(),
        "has_denormalizer": m.HasField("denormalizer_spec"),
    }

def build(mod):
    """A small model built from scratch, the way spm_train writes one."""
    m = mod.ModelProto()
    for text, score, typ in [("<unk>", 0.0, 2), ("<s>", 0.0, 3), ("\u2581a", -1.5, None),
                             ("b", -0.0, None), ("<0x41>", 0.0, 6)]:
        p = m.pieces.add()
        p.piece, p.score = text, score
        if typ is not None:
            p.type = typ
    m.trainer_spec.model_type = 2
    m.trainer_spec.vocab_size = 5
    m.trainer_spec.byte_fallback = True
    m.trainer_spec.unk_surface = ""
    m.normalizer_spec.name = "identity"
    m.normalizer_spec.precompiled_charsmap = b""
    m.normalizer_spec.add_dummy_prefix = False
    return m.SerializeToString()
PY

# ---------------------------------------------------------------- reference
cat > "$WORK/reference.py" <<'PY'
"""System Python: sentencepiece's pb2 is the oracle."""
import glob, json, os, sys
from sentencepiece import sentencepiece_model_pb2 as ref
from subtok._proto import sentencepiece_model_pb2 as ours   # both in one process
from pbcheck_common import build, summary


errors = []
models = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.model"))):
    with open(path, "rb") as fh:
        data = fh.read()
    r = ref.ModelProto.FromString(data)
    o = ours.ModelProto.FromString(data)
    name = os.path.basename(path)
    models[name] = summary(r, ref, data)
    if summary(o, ours, data) != models[name]:
        errors.append(f"{name}: ours and sentencepiece's pb2 disagree")
    if r.SerializeToString() != data:
        errors.append(f"{name}: sentencepiece's own pb2 does not round-trip")

# Schema: every field sentencepiece knows must match ours exactly.
def fields(desc, prefix=""):
    out = {}
    for f in desc.fields:
        out[prefix + desc.name + "." + f.name] = (
            f.number, f.type, f.is_repeated, f.has_presence, f.has_default_value,
            repr(f.default_value),
            f.GetOptions().deprecated,
            f.enum_type and sorted((v.name, v.number) for v in f.enum_type.values))
    for n in desc.nested_types:
        out.update(fields(n, prefix + desc.name + "."))
    return out
for msg in ref.DESCRIPTOR.message_types_by_name:
    rf = fields(ref.DESCRIPTOR.message_types_by_name[msg])
    of = fields(ours.DESCRIPTOR.message_types_by_name[msg])
    for k, v in rf.items():
        if of.get(k) != v:
            errors.append(f"schema: {k}: sentencepiece {v} != ours {of.get(k)}")
    for k in sorted(set(of) - set(rf)):
        print(f"reference: note: only in ours: {k} = field {of[k][0]}")
if build(ref) != build(ours):
    errors.append("built-from-scratch message serializes differently")

with open(sys.argv[2], "w") as fh:
    json.dump({"models": models, "built": build(ref).hex()}, fh, indent=1)
for e in errors:
    print("reference: ERROR:", e)
print(f"reference: {len(models)} models read with sentencepiece's pb2 "
      f"(protobuf {__import__('google.protobuf').protobuf.__version__})")
sys.exit(1 if errors or not models else 0)
PY

# ---------------------------------------------------------------- per runtime
cat > "$WORK/check.py" <<'PY'
"""Runs inside a venv that has only protobuf; compares with reference.json."""
import glob, json, os, pickle, struct, sys, warnings
warnings.simplefilter("error")          # a deprecation warning counts as a failure
import google.protobuf
from google.protobuf.internal import api_implementation
from subtok._proto import sentencepiece_model_pb2 as pb
from subtok._proto import sentencepiece_model_raw_pb2 as raw
from pbcheck_common import build, summary

models_dir, ref_path = sys.argv[1:]
with open(ref_path) as fh:
    ref = json.load(fh)
errors = []

seen = 0
for path in sorted(glob.glob(os.path.join(models_dir, "*.model"))):
    name = os.path.basename(path)
    with open(path, "rb") as fh:
        data = fh.read()
    m = pb.ModelProto.FromString(data)
    if m.SerializeToString() != data:
        errors.append(f"{name}: round trip not byte-identical")
    m.DiscardUnknownFields()
    if m.SerializeToString() != data:
        errors.append(f"{name}: has fields our schema does not know")
    got, want = summary(m, pb, data), ref["models"].get(name)
    if got != want:
        errors.append(f"{name}: {got} != sentencepiece's {want}")
    if pickle.loads(pickle.dumps(m)) != m:
        errors.append(f"{name}: pickle round trip differs")
    seen += 1
    # The reading schema (string fields as bytes): the same file, byte for
    # byte, and every piece as its bytes, on this runtime too.
    r = raw.ModelProto.FromString(data)
    if r.SerializeToString() != data:
        errors.append(f"{name}: raw schema round trip not byte-identical")
    if [p.piece for p in r.pieces] != [p.piece.encode() for p in m.pieces]:
        errors.append(f"{name}: raw schema reads other piece bytes")
# A piece that is not UTF-8 and a garbage field 4: sentencepiece 0.2.3 loads both.
odd = raw.ModelProto()
odd.pieces.add(piece=b"<unk>", type=2)
odd.pieces.add(piece=b"a\xe2", score=-1.0)
odd_data = odd.SerializeToString() + b"\x22\x02\xff\xff"
back = raw.ModelProto.FromString(odd_data)
if back.pieces[1].piece != b"a\xe2" or back.SerializeToString() != odd_data:
    errors.append("raw schema: a piece that is not UTF-8 or field 4 does not read back")
if seen != len(ref["models"]):
    errors.append(f"read {seen} models, reference has {len(ref['models'])}")

# proto2 defaults and presence
t, n, p = pb.TrainerSpec(), pb.NormalizerSpec(), pb.ModelProto.SentencePiece()
checks = {
    "model_type": t.model_type == pb.TrainerSpec.UNIGRAM == 1,
    "vocab_size": t.vocab_size == 8000,
    "character_coverage": struct.pack("<f", t.character_coverage) == struct.pack("<f", 0.9995),
    "shuffle_input_sentence": t.shuffle_input_sentence is True,
    "pad_id": t.pad_id == -1,
    "unk_surface": t.unk_surface == " \u2047 ",
    "pieces names": (t.unk_piece, t.bos_piece, t.eos_piece, t.pad_piece) == ("<unk>", "<s>", "</s>", "<pad>"),
    "auto_character_coverage": t.auto_character_coverage is False and
                               pb.TrainerSpec.DESCRIPTOR.fields_by_name["auto_character_coverage"].number == 55,
    "deprecated option": pb.TrainerSpec.DESCRIPTOR.fields_by_name["accept_language"].GetOptions().deprecated,
    "lite runtime": pb.DESCRIPTOR.GetOptions().optimize_for == 3,
    "normalizer defaults": (n.add_dummy_prefix, n.remove_extra_whitespaces, n.escape_whitespaces) == (True,) * 3,
    "piece type default": p.type == pb.ModelProto.SentencePiece.NORMAL == 1 and not p.HasField("type"),
    "BYTE=6 UNUSED=5": (pb.ModelProto.SentencePiece.BYTE, pb.ModelProto.SentencePiece.UNUSED) == (6, 5),
    "presence": not t.HasField("vocab_size") and not pb.ModelProto().HasField("trainer_spec"),
    "self_test_data": pb.ModelProto.DESCRIPTOR.fields_by_name["self_test_data"].number == 4
                      and pb.SelfTestData.Sample(input="a", expected="b").SerializeToString() == b"\n\x01a\x12\x01b",
    "empty serializes empty": pb.TrainerSpec().SerializeToString() == b"",
    "module name": pb.ModelProto.__module__ == "subtok._proto.sentencepiece_model_pb2",
}
errors += [f"check failed: {k}" for k, ok in checks.items() if not ok]

if build(pb).hex() != ref["built"]:
    errors.append("built-from-scratch message serializes differently from sentencepiece's pb2")

label = f"protobuf=={google.protobuf.__version__} impl={api_implementation.Type()}"
for e in errors:
    print(f"  {label}: {e}")
print(f"{'FAIL' if errors else 'PASS'} {label}: {seen} models, {len(checks) + 1} other checks")
sys.exit(1 if errors else 0)
PY

passed=0; failed=0; results=()
echo "== reference: system $("$PYTHON" --version 2>&1)"
if PYTHONPATH="$ROOT" "$PYTHON" "$WORK/reference.py" "$MODELS_DIR" "$WORK/reference.json"; then
  passed=$((passed + 1))
else
  echo "reference step failed (see above; it needs sentencepiece in $PYTHON)"; failed=$((failed + 1))
  [ -f "$WORK/reference.json" ] || { echo "0 passed, 1 failed"; exit 1; }
fi

for v in "${VERSIONS[@]}"; do
  venv="$WORK/protobuf-$v"
  if [ "$("$venv/bin/python" -c 'import google.protobuf as g; print(g.__version__)' 2>/dev/null)" != "$v" ]; then
    rm -rf "$venv"
    if ! { "$PYTHON" -m venv "$venv" &&
           "$venv/bin/python" -m pip install -q --disable-pip-version-check "protobuf==$v"; } \
         > "$WORK/install-$v.log" 2>&1; then
      echo "FAIL protobuf==$v: could not install (see $WORK/install-$v.log)"
      failed=$((failed + 1)); results+=("$v:install-failed"); continue
    fi
  fi
  impls="default python"
  # No compiled implementation in this wheel (e.g. 3.20.x on Python 3.11): run once.
  [ "$(env -u PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION "$venv/bin/python" -c \
      'from google.protobuf.internal import api_implementation as a; print(a.Type())' 2>/dev/null)" = python ] \
    && impls="python"
  for impl in $impls; do
    if [ "$impl" = python ]; then export PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python
    else unset PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION; fi
    if (cd "$WORK" && PYTHONPATH="$ROOT" "$venv/bin/python" "$WORK/check.py" "$MODELS_DIR" "$WORK/reference.json" 2>&1 | tail -n 30; exit "${PIPESTATUS[0]}"); then
      passed=$((passed + 1)); results+=("$v/$impl:pass")
    else
      echo "FAIL protobuf==$v impl=$impl"
      failed=$((failed + 1)); results+=("$v/$impl:FAIL")
    fi
  done
  unset PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION
done

echo "summary: ${results[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
