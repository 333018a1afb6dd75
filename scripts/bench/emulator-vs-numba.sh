#!/usr/bin/env bash
# The emulator against numba's CUDA simulator on the same kernels, side by side in one run:
# vector add of 65,536 elements and a shared-memory block reduction of 16,384 elements, then the
# emulator alone on a 16M-element vector add in fast mode and its compile times (cold, cached).
# Installs numba into a virtual environment under target/ (pip, from PyPI).
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=target/bench-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q numba numpy
fi
cargo build --release -q --bin gpubook
reps=${REPS:-5}
echo "numba $("$venv/bin/python" -c 'import numba; print(numba.__version__)') (NUMBA_ENABLE_CUDASIM=1), median of ${NUMBA_REPS:-1} run(s):"
"$venv/bin/python" scripts/bench/numba_cudasim.py "${NUMBA_REPS:-1}" | tee target/numba.txt
echo
GPUBOOK_BACKEND=emu ./target/release/gpubook emu-bench --reps "$reps" --numba target/numba.txt
