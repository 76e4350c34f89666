#!/bin/sh
# autogen.sh — generates ./configure from configure.ac and brings automake's TAP driver
# into build-aux/ (it is not committed: it comes with the automake that builds).
set -e
cd "$(dirname "$0")"
mkdir -p build-aux m4
autoreconf --install --force
cp -f "$(automake --print-libdir)/tap-driver.sh" build-aux/tap-driver.sh
