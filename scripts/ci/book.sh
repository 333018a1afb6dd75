#!/usr/bin/env bash
# CI for the book: build it with `gpubook book` (which fails on a preprocessor error, an mdbook
# ERROR such as a missing {{#include}} file or anchor, or a broken internal link), fail on any ERROR
# line in its output too, then open pages in headless Chromium and check that an exercise box and
# a figure are in the rendered DOM. Screenshots go to target/screenshots/ for a person to look at.
#
# Usage: scripts/ci/book.sh   (from anywhere in the checkout; GPUBOOK_BIN=path uses a gpubook
#        binary built already instead of `cargo build`)
set -euo pipefail
cd "$(dirname "$0")/../.."
started=$SECONDS
mkdir -p target/screenshots

say() { printf '[book] %s\n' "$*"; }
fail() { printf '[book] FAIL: %s\n' "$*" >&2; exit 1; }

# 1. Build. The figure cache is kept between runs (target/book-cache) and keyed by content.
say "building the book"
bin=${GPUBOOK_BIN:-}
if [ -z "$bin" ]; then
    cargo build --quiet --bin gpubook
    bin=./target/debug/gpubook
fi
log=target/book-build.log
if ! "$bin" book 2>&1 | tee "$log"; then
    fail "gpubook book failed (see above)"
fi
grep -q 'ERROR' "$log" && fail "the build printed ERROR lines (see $log)"
dest=target/book
[ -f "$dest/index.html" ] || fail "no $dest/index.html"

# 2. Headless Chromium (Debian's package; installed here when missing).
if ! command -v chromium >/dev/null; then
    say "installing chromium"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq chromium fonts-dejavu-core >/dev/null
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
chrome() {
    timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --no-first-run --user-data-dir="$profile" "$@" 2>/dev/null
}

# 3. Each page: the DOM after its scripts ran must hold what the page is for (pairs of a fixed
#    string and its name); then a screenshot for people.
check_page() { # page, then needle, what, needle, what, ...
    local page=$1 name dom
    shift
    name=$(echo "${page%.html}" | tr '/' '-')
    dom=target/screenshots/$name.dom.html
    chrome --dump-dom "file://$PWD/$dest/$page" >"$dom" || fail "chromium could not open $page"
    while [ $# -gt 0 ]; do
        grep -qF "$1" "$dom" || fail "$page: no $2 in the rendered page ($dom)"
        say "$page: $2 rendered"
        shift 2
    done
    chrome --window-size=1280,2400 --hide-scrollbars --screenshot="target/screenshots/$name.png" "file://$PWD/$dest/$page" >/dev/null \
        || fail "chromium could not screenshot $page"
    [ "$(stat -c %s "target/screenshots/$name.png")" -gt 20000 ] || fail "$page: the screenshot is (nearly) blank"
    say "$page: screenshot in target/screenshots/$name.png"
}
check_page introduction.html 'class="gpubook-exercise"' "exercise box" '<figure class="gpubook-figure"' "figure (inline SVG)"
check_page appendix-figures.html '<svg' "inline SVG figures" 'class="gpubook-run"' "build-time output"
# A chapter with an exercise box, once the chapters have any.
chapter=$(grep -l 'class="gpubook-exercise"' "$dest"/ch0*/*.html 2>/dev/null | head -n 1 || true)
if [ -n "$chapter" ]; then
    check_page "${chapter#"$dest"/}" 'class="gpubook-exercise"' "exercise box"
fi

say "ok in $((SECONDS - started)) s"
