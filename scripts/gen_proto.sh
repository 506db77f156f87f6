#!/usr/bin/env bash
# Regenerate subtok/_proto/sentencepiece_model_pb2.py from proto/sentencepiece_model.proto,
# and subtok/_proto/sentencepiece_model_raw_pb2.py from the same schema with every
# `string` field declared `bytes` (same wire format) and field 4 left unknown, as in
# sentencepiece 0.2.3. Models are read with the raw one:
# a piece that is not valid UTF-8 (sentencepiece loads such models) then comes back as
# bytes on every protobuf runtime, where the pure-Python runtime would refuse to parse
# the file and upb would hand back str or bytes depending on the content.
#
#   bash scripts/gen_proto.sh
#
# Uses a pinned, older protoc (the one bundled in grpcio-tools 1.62.3, libprotoc 25.1),
# installed into a throwaway venv under /tmp. That protoc emits builder-style code with
# no runtime_version check, which imports on protobuf 3.20 .. 7.x (protoc >= 27 adds a
# check that refuses runtimes older than itself; protoc <= 3.19 emits code that
# protobuf >= 4.21 refuses). Verify the range with scripts/check_protobuf_range.sh.
#
# protoc's output is post-processed in two ways: (1) the file is registered in a
# private DescriptorPool instead of the process-wide default pool, so that importing
# subtok never clashes with another "sentencepiece_model.proto" (sentencepiece's own
# pb2, transformers', ...) loaded in the same process; (2) the message classes get
# __module__ = the real import path (__name__), so they pickle.
set -euo pipefail

GRPCIO_TOOLS_VERSION=1.62.3
PROTOC_VERSION="libprotoc 25.1"
PYTHON="${PYTHON:-python3}"
VENV="${SUBTOK_GEN_VENV:-/tmp/subtok-gen-proto-grpcio-tools-$GRPCIO_TOOLS_VERSION}"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC_DIR="$ROOT/proto"
SRC="$SRC_DIR/sentencepiece_model.proto"
OUT_DIR="$ROOT/subtok/_proto"
OUT="$OUT_DIR/sentencepiece_model_pb2.py"
RAW_OUT="$OUT_DIR/sentencepiece_model_raw_pb2.py"

if ! "$VENV/bin/python" -m grpc_tools.protoc --version 2>/dev/null | grep -qx "$PROTOC_VERSION"; then
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --only-binary=:all: \
    "grpcio-tools==$GRPCIO_TOOLS_VERSION"
fi
got="$("$VENV/bin/python" -m grpc_tools.protoc --version)"
[ "$got" = "$PROTOC_VERSION" ] || { echo "gen_proto: expected $PROTOC_VERSION, got $got" >&2; exit 1; }

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/raw_src" "$TMP/out" "$TMP/raw_out"
"$VENV/bin/python" -m grpc_tools.protoc -I"$SRC_DIR" --python_out="$TMP/out" "$SRC"
# The raw schema: string fields are declared bytes, and self_test_data is dropped, as
# sentencepiece 0.2.3 reserves field 4 (whatever a file holds there is an unknown field,
# kept byte for byte, never a reason to refuse the file).
sed -E -e 's/^([[:space:]]*(optional|repeated|required)[[:space:]]+)string([[:space:]])/\1bytes\3/' \
  -e '/^[[:space:]]*optional[[:space:]]+SelfTestData[[:space:]]+self_test_data[[:space:]]*=[[:space:]]*4;/d' \
  "$SRC" > "$TMP/raw_src/sentencepiece_model.proto"
if grep -Eq '^[[:space:]]*(optional|repeated|required)[[:space:]]+string[[:space:]]|self_test_data' \
    "$TMP/raw_src/sentencepiece_model.proto"; then
  echo "gen_proto: the raw schema still has a string field or self_test_data" >&2; exit 1
fi
"$VENV/bin/python" -m grpc_tools.protoc -I"$TMP/raw_src" --python_out="$TMP/raw_out" \
  "$TMP/raw_src/sentencepiece_model.proto"

postprocess() {  # postprocess <protoc output> <destination> <source description>
"$VENV/bin/python" - "$1" "$2" "$3" "$GRPCIO_TOOLS_VERSION" "$PROTOC_VERSION" <<'PY'
import sys
src, dst, source, tools_version, protoc_version = sys.argv[1:]
code = open(src, encoding="ascii").read()
old = "DESCRIPTOR = _descriptor_pool.Default().AddSerializedFile("
new = ("# subtok: private pool, so no clash with other copies of this schema.\n"
       "_POOL = _descriptor_pool.DescriptorPool()\n"
       "DESCRIPTOR = _POOL.AddSerializedFile(")
if code.count(old) != 1:
    sys.exit("gen_proto: protoc output changed shape; cannot switch to a private pool")
code = code.replace(old, new)
# Name the classes' module after the real import path (for pickle and repr).
old = "(DESCRIPTOR, 'sentencepiece_model_pb2', _globals)"
if code.count(old) != 1:
    sys.exit("gen_proto: protoc output changed shape; cannot set the module name")
code = code.replace(old, "(DESCRIPTOR, __name__, _globals)")
header = (
    "# GENERATED FILE - DO NOT EDIT.\n"
    f"# Source: {source}\n"
    "# Regenerate with: bash scripts/gen_proto.sh\n"
    f"#   (protoc from grpcio-tools=={tools_version}, {protoc_version}; then moved into\n"
    "#   a private DescriptorPool and __name__ as the module name)\n"
    "# Works with protobuf 3.20 .. 7.x; check with: bash scripts/check_protobuf_range.sh\n"
)
with open(dst, "w", encoding="ascii", newline="\n") as f:
    f.write(header + code)
PY
}
postprocess "$TMP/out/sentencepiece_model_pb2.py" "$OUT" "proto/sentencepiece_model.proto"
postprocess "$TMP/raw_out/sentencepiece_model_pb2.py" "$RAW_OUT" \
  "proto/sentencepiece_model.proto, every string field read as bytes"

[ -f "$OUT_DIR/__init__.py" ] || printf '"""Generated protobuf bindings for the SentencePiece model file (see scripts/gen_proto.sh)."""\n' > "$OUT_DIR/__init__.py"
echo "gen_proto: wrote ${OUT#$ROOT/} and ${RAW_OUT#$ROOT/}"
