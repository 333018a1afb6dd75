#!/usr/bin/env bash
# CI for the book: make the API reference (rustdoc), build the book with `gpubook book` (which
# fails on a preprocessor error, an mdbook ERROR such as a missing {{#include}} file or anchor, an
# answer included on a page, a failed notebook, or a broken internal link), then read every page in
# headless Chromium (scripts/ci/book_check.py): it fails when a code block or table overflows its
# column at 1280 px, when a figure's text is under 10 px as displayed (at 1280 and at 400 px, a
# phone, where figures scroll sideways in their own box rather than shrink), when a page scrolls
# sideways at either width, or when a marker was left unexpanded; and it takes screenshots of
# every page at 1280 and 400 px, in target/screenshots/, for a person to look at.
#
# The notebooks' outputs come from scripts/ci/notebooks.sh, which CI runs first (target/notebooks/);
# without them the notebook pages show their cells alone, and say so.
#
# Usage: scripts/ci/book.sh   (from anywhere in the checkout; GPUBOOK_BIN=path uses a gpubook
#        binary built already instead of `cargo build`)
set -euo pipefail
cd "$(dirname "$0")/../.."
started=$SECONDS
say() { printf '[book] %s\n' "$*"; }
fail() { printf '[book] FAIL: %s\n' "$*" >&2; exit 1; }

# 1. The API reference, which the book copies in as api/ and links to.
say "API reference: cargo doc"
cargo doc --quiet --no-deps -p gpubook -p gpubook-sim -p gpubook-emu -p gpubook-cudac -p gpubook-labs

# 2. Build. The figure cache is kept between runs (target/book-cache) and keyed by content.
say "building the book"
bin=${GPUBOOK_BIN:-}
if [ -z "$bin" ]; then
    cargo build --quiet --bin gpubook
    bin=./target/debug/gpubook
fi
log=target/book-build.log
mkdir -p target
if ! "$bin" book 2>&1 | tee "$log"; then
    fail "gpubook book failed (see above)"
fi
grep -q 'ERROR' "$log" && fail "the build printed ERROR lines (see $log)"
grep -q '^API reference: in the book' "$log" || fail "the API reference did not make it into the book (see $log)"
[ -f target/book/index.html ] || fail "no target/book/index.html"

# 3. Headless Chromium and its WebDriver (Debian's packages), installed here when missing.
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    say "installing chromium and chromium-driver"
    sudo=$([ "$(id -u)" = 0 ] || echo sudo)
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq >/dev/null
    $sudo apt-get install -y -qq chromium chromium-driver fonts-dejavu-core >/dev/null
fi

# 4. Every page, as a reader sees it.
say "reading every page in Chromium"
python3 scripts/ci/book_check.py --book target/book --shots target/screenshots || fail "the pages above do not read right"

say "ok in $((SECONDS - started)) s"
