#!/bin/bash
# Trains a fixed set of models with one checkout's subtok, for byte-for-byte
# comparison of two checkouts (behaviour-preserving changes to training):
#
#   bench/train_identity.sh BEFORE_CHECKOUT /tmp/before
#   bench/train_identity.sh AFTER_CHECKOUT /tmp/after
#   diff -r /tmp/before /tmp/after && echo identical
#
# A checkout is a directory holding subtok/. Models are written with
# relative prefixes from inside OUTDIR, so the paths recorded in them are
# the same for both. 29 models (bpe, unigram, char, word on botchan and on
# the first 20,000 lines of gutenberg_en; split_digits, byte_fallback,
# whitespace as suffix, whitespace-only pieces, no whitespace split,
# nfkc_cf with user symbols, a pretokenization delimiter, sampling,
# num_threads 1 and 2, count files). Not a test: it takes minutes.
set -e
CODE=$(cd "$1" && pwd); OUT=$2
DATA=$(cd "$(dirname "$0")/../../shared/data/corpora" && pwd)
mkdir -p "$OUT"; cd "$OUT"
B=$DATA/botchan.txt
G=gutenberg_20000.txt
head -20000 "$DATA/gutenberg_en.txt" > $G
run() { PYTHONPATH="$CODE" python -m subtok "$@"; }
t() { name=$1; shift; run train --minloglevel 2 --no-progress --model_prefix "$name" "$@" || echo "FAILED $name"; }
t b_bpe1000      --input $B --model_type bpe --vocab_size 1000
t b_bpe4000_t1   --input $B --model_type bpe --vocab_size 4000 --num_threads 1
t b_bpe4000_t2   --input $B --model_type bpe --vocab_size 4000 --num_threads 2
t b_bpe_digits   --input $B --model_type bpe --vocab_size 2000 --split_digits
t b_bpe_bytefb   --input $B --model_type bpe --vocab_size 2000 --byte_fallback --character_coverage 0.98
t b_bpe_suffix   --input $B --model_type bpe --vocab_size 2000 --treat_whitespace_as_suffix
t b_bpe_nows     --input $B --model_type bpe --vocab_size 2000 --split_by_whitespace=false --max_sentencepiece_length 6
t b_bpe_wsonly   --input $B --model_type bpe --vocab_size 2000 --allow_whitespace_only_pieces --remove_extra_whitespaces=false
t b_bpe_nfkccf   --input $B --model_type bpe --vocab_size 2000 --normalization_rule_name nfkc_cf --split_by_number=false --user_defined_symbols 'the,ing'
t b_bpe_sample   --input $B --model_type bpe --vocab_size 2000 --input_sentence_size 2000 --num_threads 2
t b_bpe_delim    --input $B --model_type bpe --vocab_size 2000 --pretokenization_delimiter e
t b_uni1000      --input $B --model_type unigram --vocab_size 1000
t b_uni4000_t1   --input $B --model_type unigram --vocab_size 4000 --num_threads 1
t b_uni4000_t2   --input $B --model_type unigram --vocab_size 4000 --num_threads 2
t b_uni_digits   --input $B --model_type unigram --vocab_size 2000 --split_digits --byte_fallback
t b_uni_suffix   --input $B --model_type unigram --vocab_size 2000 --treat_whitespace_as_suffix --num_threads 1
t b_char         --input $B --model_type char --vocab_size 2000
t b_char_t1      --input $B --model_type char --vocab_size 400 --num_threads 1 --byte_fallback
t b_word         --input $B --model_type word --vocab_size 3000
t b_word_suffix  --input $B --model_type word --vocab_size 3000 --treat_whitespace_as_suffix --split_digits --num_threads 1
t g_bpe16000_t2  --input $G --model_type bpe --vocab_size 16000 --num_threads 2
t g_bpe8000_t1   --input $G --model_type bpe --vocab_size 8000 --num_threads 1 --split_digits --byte_fallback
t g_bpe_suffix   --input $G --model_type bpe --vocab_size 8000 --treat_whitespace_as_suffix --num_threads 2
t g_uni16000_t2  --input $G --model_type unigram --vocab_size 16000 --num_threads 2
t g_uni8000_t1   --input $G --model_type unigram --vocab_size 8000 --num_threads 1 --split_digits --treat_whitespace_as_suffix
t g_char         --input $G --model_type char --vocab_size 200 --num_threads 2
t g_word         --input $G --model_type word --vocab_size 16000 --num_threads 1 --split_digits
run count --input $B --output b_bpe.tsv --model_type bpe >/dev/null
t b_bpe_fromtsv  --input b_bpe.tsv --input_format tsv --model_type bpe --vocab_size 2000
run count --input $B --output b_uni.tsv --model_type unigram >/dev/null
t b_uni_fromtsv  --input b_uni.tsv --input_format tsv --model_type unigram --vocab_size 2000
