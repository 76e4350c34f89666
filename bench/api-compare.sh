#!/bin/bash
# bench/api-compare.sh — the group figures through the native API (side A) and through the
# PVM API (side B) of one build, in alternation (bench/ab-compare.sh); the ratio B / A is
# what the PVM layer costs (> 1: the PVM API is slower).
#   bench/api-compare.sh [BUILD_DIR] [REPS] [FIGURES] [NS]
#   e.g. bench/api-compare.sh _build 5 "barrier bcast8 bcast1m reduce1int reduce1mdbl" "2 4 8"
SRC=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
BUILD=${1:-$SRC/_build}
exec "$SRC/bench/ab-compare.sh" "$BUILD:native" "$BUILD:pvm" "${2:-5}" \
    "${3:-barrier bcast8 bcast1m reduce1int reduce1mdbl}" "${4:-2 4 8}"
