// Blocks that talk through global memory while they run (persistent kernels): tests/persistent.rs
// runs them in both modes. On a GPU they work when every block of the grid is resident at once.

#define SLOTS 4
#define SLOT 32 // floats per slot: one per thread of a 32-thread block

// Block 0 produces `chunks` chunks of 32 floats into a ring of SLOTS slots, block 1 consumes
// them (out = 2 * in). `head` counts chunks produced, `tail` chunks consumed: the producer waits
// while the ring is full, the consumer while it is empty.
extern "C" __global__ void ring(const float* in, float* out, float* slots, unsigned* head, unsigned* tail,
                                int chunks) {
    int t = threadIdx.x;
    for (int c = 0; c < chunks; c++) {
        if (blockIdx.x == 0) {
            if (t == 0)
                while (c - *(volatile unsigned*)tail >= SLOTS) {
                }
            __syncthreads();
            slots[(c % SLOTS) * SLOT + t] = in[c * SLOT + t];
            __syncthreads();
            if (t == 0) {
                __threadfence(); // the slot's data before the count that announces it
                *(volatile unsigned*)head = c + 1;
            }
        } else {
            if (t == 0)
                while (*(volatile unsigned*)head <= (unsigned)c) {
                }
            __syncthreads();
            out[c * SLOT + t] = 2.0f * slots[(c % SLOTS) * SLOT + t];
            __syncthreads();
            if (t == 0) {
                __threadfence(); // done reading the slot before it is handed back
                *(volatile unsigned*)tail = c + 1;
            }
        }
    }
}

// The same without the producer's __threadfence(): the consumer may see the count before the
// data. A race.
extern "C" __global__ void ring_no_fence(const float* in, float* out, float* slots, unsigned* head, unsigned* tail,
                                         int chunks) {
    int t = threadIdx.x;
    for (int c = 0; c < chunks; c++) {
        if (blockIdx.x == 0) {
            if (t == 0)
                while (c - *(volatile unsigned*)tail >= SLOTS) {
                }
            __syncthreads();
            slots[(c % SLOTS) * SLOT + t] = in[c * SLOT + t];
            __syncthreads();
            if (t == 0) *(volatile unsigned*)head = c + 1;
        } else {
            if (t == 0)
                while (*(volatile unsigned*)head <= (unsigned)c) {
                }
            __syncthreads();
            out[c * SLOT + t] = 2.0f * slots[(c % SLOTS) * SLOT + t];  // RACE
            __syncthreads();
            if (t == 0) {
                __threadfence();
                *(volatile unsigned*)tail = c + 1;
            }
        }
    }
}

// A grid-wide barrier from an atomic counter: every block writes its part of `data`, waits until
// all blocks have arrived, then reads the next block's part.
extern "C" __global__ void grid_barrier(float* data, float* out, unsigned* arrived) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    data[i] = (float)i;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(arrived, 1u);
        while (atomicAdd(arrived, 0u) < gridDim.x) {
        }
    }
    __syncthreads();
    int n = gridDim.x * blockDim.x;
    out[i] = data[(i + blockDim.x) % n];
}

// Every block but the last waits for a flag that only the last block sets.
extern "C" __global__ void wait_for_last(unsigned* flag) {
    if (threadIdx.x != 0) return;
    if (blockIdx.x == gridDim.x - 1) {
        __threadfence();
        atomicExch(flag, 1u);
    } else {
        while (*(volatile unsigned*)flag == 0) {
        }
    }
}

// Waits for a flag that nothing sets.
extern "C" __global__ void wait_forever(unsigned* flag) {
    if (threadIdx.x == 0)
        while (*(volatile unsigned*)flag == 0) {  // WAITS
        }
}
