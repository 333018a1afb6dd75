"""The same two kernels as `gpubook emu-bench`, on numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1),
which GPU-Puzzles runs on. Prints one line per kernel: name, elements, median seconds."""
import os
import statistics
import sys
import time

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402


@cuda.jit
def vector_add(a, b, c, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        c[i] = a[i] + b[i]


BLOCK = 256


@cuda.jit
def block_sum(inp, out, n):
    partial = cuda.shared.array(BLOCK, dtype=np.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    partial[t] = inp[i] if i < n else 0.0
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if t < s:
            partial[t] += partial[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = partial[0]


def timed(f, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    n = 65536
    a = np.arange(n, dtype=np.float32)
    b = np.ones(n, dtype=np.float32)
    c = np.zeros(n, dtype=np.float32)
    blocks = (n + BLOCK - 1) // BLOCK
    t = timed(lambda: vector_add[blocks, BLOCK](a, b, c, n), reps)
    assert np.array_equal(c, a + b)
    print(f"vector_add {n} {t:.4f}")

    n = 16384
    x = np.arange(n, dtype=np.float32) % 7
    blocks = (n + BLOCK - 1) // BLOCK
    out = np.zeros(blocks, dtype=np.float32)
    t = timed(lambda: block_sum[blocks, BLOCK](x, out, n), reps)
    assert abs(out.sum() - x.sum()) < 1e-3 * x.sum()
    print(f"block_sum {n} {t:.4f}")


if __name__ == "__main__":
    main()
