#!/usr/bin/env bash
# Drives `gpubook watch` in a real terminal (tmux) the way a learner would: start it on an
# exercise whose kernel is still the stub, ask for a hint, save a solved kernel, see the re-grade
# pass, open the list, quit, and check the terminal left raw mode. Prints each screen.
#
#   scripts/watch-demo.sh            needs tmux and a device (a GPU or the emulator)
#
# It edits exercises/ for ch03-vector-add and .gpubook/progress.json in place, and puts both back
# on exit, whatever happens.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ID=ch03-vector-add
HOST=exercises/src/ch03.rs
KERNEL=exercises/kernels/ch03/vector_add.cu
SESSION=gpubook-watch-demo-$$
SAVE=$(mktemp -d)

command -v tmux >/dev/null || { echo "watch-demo: needs tmux (apt-get install tmux)"; exit 1; }
cargo build -q --bin gpubook
cargo test -q -p exercises --test ch03 --no-run 2>/dev/null
GPUBOOK=$ROOT/target/debug/gpubook

cp "$HOST" "$KERNEL" "$SAVE/"
[ -f .gpubook/progress.json ] && cp .gpubook/progress.json "$SAVE/progress.json"
restore() {
    tmux kill-session -t "$SESSION" 2>/dev/null || true
    cp "$SAVE/ch03.rs" "$HOST"
    cp "$SAVE/vector_add.cu" "$KERNEL"
    if [ -f "$SAVE/progress.json" ]; then cp "$SAVE/progress.json" .gpubook/progress.json; else rm -f .gpubook/progress.json; fi
    rm -rf "$SAVE"
}
trap restore EXIT

# The demo's exercise must be the current one: every exercise before it counts as passed.
mkdir -p .gpubook
{
    echo '{"exercises":{'
    sep=""
    for id in $(sed -n 's/^id = "\(.*\)"/\1/p' exercises.toml); do
        [ "$id" = "$ID" ] && break
        printf '%s"%s":{"status":"passed","attempts":1,"hints_shown":0}' "$sep" "$id"; sep=","
    done
    echo '}}'
} > .gpubook/progress.json

# Host code solved, kernel still the stub: the grader will say c[] was never written.
"$GPUBOOK" reset "$ID" --yes >/dev/null
cp solutions/src/ch03.rs "$HOST"

screen() { tmux capture-pane -p -t "$SESSION"; }
# Waits (up to $2 s) for the screen to show $1.
wait_for() {
    local deadline=$((SECONDS + $2))
    until screen | grep -qF -- "$1"; do
        if [ $SECONDS -ge $deadline ]; then echo "watch-demo: never saw '$1'; the screen:"; screen; exit 1; fi
        sleep 0.2
    done
}
show() { echo "=== $1 ==="; screen | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'; echo; }

tmux new-session -d -s "$SESSION" -x 110 -y 48 "bash --norc --noprofile"
tmux send-keys -t "$SESSION" "cd '$ROOT' && PS1='demo$ ' && clear && '$GPUBOOK' watch" Enter
wait_for "is not solved yet" 120
show "1. started: the stub kernel is graded"

tmux send-keys -t "$SESSION" h
wait_for "hint 1/" 10
show "2. pressed h"

start=$(date +%s.%N)
cp solutions/kernels/ch03/vector_add.cu "$KERNEL"
wait_for "passed!" 60
show "3. saved a solved kernel: the screen showed the pass $(echo "$(date +%s.%N) - $start" | bc | xargs printf '%.1f') s later"

tmux send-keys -t "$SESSION" l
wait_for "Chapter 3 ·" 10
show "4. pressed l"

tmux send-keys -t "$SESSION" q
wait_for "demo$" 10
# Back in the shell: a canonical, echoing terminal again, or this line would not come out whole.
tmux send-keys -t "$SESSION" "stty -a | grep -o -- '-\\?icanon' | sed 's/^/mode: /'" Enter
wait_for "mode: " 10
show "5. pressed q: back at the shell"
screen | grep -q "mode: icanon" || { echo "watch-demo: the terminal was left in raw mode"; exit 1; }
echo "watch-demo: ok"
