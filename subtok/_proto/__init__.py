"""Generated protobuf bindings for the SentencePiece model file (see scripts/gen_proto.sh)."""
