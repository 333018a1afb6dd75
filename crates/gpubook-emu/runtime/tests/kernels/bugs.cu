// Kernels with the bugs the emulator must explain.
#include <cassert> // the device assert all the same (runtime/assert.h)

// No bounds check: the last block writes past the end of c.
extern "C" __global__ void vector_add_unguarded(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    c[i] = a[i] + b[i];
}

// Reads past a __shared__ array.
extern "C" __global__ void shared_overflow(float* out) {
    auto& tile = *::gpubook::shared_var<float[32]>(0, "tile");
    tile[threadIdx.x] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = tile[threadIdx.x + 1];
}

// The reduction without the __syncthreads() inside the loop.
extern "C" __global__ void reduce_missing_sync(const float* in, float* partial) {
    auto& sdata = *::gpubook::shared_var<float[256]>(0, "sdata");
    unsigned t = threadIdx.x;
    sdata[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) sdata[t] += sdata[t + s];
    }
    if (t == 0) partial[blockIdx.x] = sdata[0];
}

// Once every word of a tile is written (check mode's inline checks take shared accesses then):
// thread 1 reads the word thread 0 has just written, with no barrier between.
extern "C" __global__ void shared_read_after_write(float* out) {
    auto& s = *::gpubook::shared_var<float[32]>(0, "s");
    unsigned t = threadIdx.x;
    s[t] = float(t);
    __syncthreads();
    if (t == 0) s[1] = 5.0f;
    out[t] = s[t];
}

// The same, the other way: thread 1 writes the word thread 0 has just read.
extern "C" __global__ void shared_write_after_read(float* out) {
    auto& s = *::gpubook::shared_var<float[32]>(0, "s");
    unsigned t = threadIdx.x;
    s[t] = float(t);
    __syncthreads();
    float v = s[t ^ 1];
    if (t & 1) s[t] = v + 1.0f;
    out[t] = v;
}

// Every thread of two blocks reads in[0] (a word many threads share: check mode's inline checks
// keep its reads), then one thread of the second block writes it.
extern "C" __global__ void shared_input_then_write(float* in, float* out) {
    float v = in[0];
    if (blockIdx.x == 1 && threadIdx.x == 5) in[0] = 1.0f;
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// Threads 0 and 1 of block 0 read in[0], then thread 1 of block 1 (the same thread index, another
// block: another thread) and, after a barrier, thread 0 of block 1 writes it: it races with
// block 0's thread 1, whose read the word keeps as its second.
extern "C" __global__ void reads_in_two_blocks_then_write(float* in, float* out) {
    float v = 0.0f;
    if (threadIdx.x == 1 || (blockIdx.x == 0 && threadIdx.x == 0)) v = in[0];
    __syncthreads();
    if (blockIdx.x == 1 && threadIdx.x == 0) in[0] = 2.0f;
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// Every block increments the same counter without an atomic.
extern "C" __global__ void count_blocks(int* counter) {
    if (threadIdx.x == 0) *counter = *counter + 1;
}

// Early return before a __syncthreads(): threads past n leave, the rest wait forever on a GPU.
extern "C" __global__ void early_return(const float* in, float* out, int n) {
    auto& s = *::gpubook::shared_var<float[128]>(0, "s");
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    s[threadIdx.x] = in[i];
    __syncthreads();
    out[i] = s[threadIdx.x ^ 1];
}

// __syncthreads() in both branches of an if: two different barriers.
extern "C" __global__ void split_barrier(float* out) {
    if (threadIdx.x < 16) {
        out[threadIdx.x] = 1;
        __syncthreads();
    } else {
        out[threadIdx.x] = 2;
        __syncthreads();
    }
}

// A full-mask shuffle that half the warp never reaches.
extern "C" __global__ void shuffle_half(float* out) {
    if (threadIdx.x >= 16) return;
    out[threadIdx.x] = __shfl_down_sync(0xffffffff, (float)threadIdx.x, 1);
}

// The last thread spins on a flag nobody sets; the others wait at a barrier.
extern "C" __global__ void spin(volatile int* flag) {
    if (threadIdx.x + 1 < blockDim.x) __syncthreads();
    while (*flag == 0) {
    }
}

// One thread spins, with no barrier: in fast mode it spins inside the block's loop.
extern "C" __global__ void spin_one(volatile int* flag) {
    if (threadIdx.x == 5)
        while (*flag == 0) {
        }
}

extern "C" __global__ void null_write(float* p) {
    float* q = nullptr;
    q[threadIdx.x] = p[0];
}

// Lane `lane` writes through a null pointer after reading its element: with the compiler pass,
// lane 0's read goes to the worker (it opens the warp's request), the next lanes' stay inline.
extern "C" __global__ void null_write_lane(float* p, int lane) {
    float v = p[threadIdx.x];
    if (int(threadIdx.x) == lane) {
        float* q = nullptr;
        q[lane] = v;
    }
    p[threadIdx.x] = v + 1.0f;
}

__device__ float big_local(int n) {
    volatile float local[100000]; // 400 KB: more than a fiber stack
    for (int i = 0; i < n; i++) local[i] = (float)i;
    return local[n / 2];
}
extern "C" __global__ void stack_array(float* out, int n) { out[0] = big_local(n); }

__device__ __noinline__ int recurse(volatile int* p, int depth) {
    volatile int pad[16];
    pad[0] = depth;
    return depth == 0 ? *p : recurse(p, depth - 1) + pad[0];
}
extern "C" __global__ void deep_recursion(int* out) { out[0] = recurse(out, 1 << 30); }

extern "C" __global__ void assert_positive(const int* v) { assert(v[threadIdx.x] > 0); }

extern "C" __global__ void divide(int* v, int d) { v[threadIdx.x] = v[threadIdx.x] / d; }

// Threads past n load nothing into the tile; their neighbours read those slots anyway.
extern "C" __global__ void shared_tile_edge(const float* in, float* out, int n) {
    auto& tile = *::gpubook::shared_var<float[64]>(0, "tile");
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) tile[threadIdx.x] = in[i];
    __syncthreads();
    if (i < n) out[i] = tile[threadIdx.x] + (threadIdx.x + 1 < blockDim.x ? tile[threadIdx.x + 1] : 0.0f);
}

// Block 0 writes the slot, every block reads it: a new block's shared memory holds nothing.
extern "C" __global__ void shared_from_another_block(float* out) {
    auto& s = *::gpubook::shared_var<float[1]>(0, "s");
    if (blockIdx.x == 0 && threadIdx.x == 0) s[0] = 1.0f;
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

// A shared histogram nobody zeroed.
extern "C" __global__ void shared_histogram_unzeroed(const int* in, int* out) {
    auto& h = *::gpubook::shared_var<int[8]>(0, "h");
    atomicAdd(&h[in[threadIdx.x] & 7], 1);
    __syncthreads();
    if (threadIdx.x < 8) out[threadIdx.x] = h[threadIdx.x];
}

// Each thread writes one byte of its pair and reads the other.
extern "C" __global__ void shared_other_byte(char* out) {
    auto& c = *::gpubook::shared_var<char[64]>(0, "c");
    c[2 * threadIdx.x] = 1;
    __syncthreads();
    out[threadIdx.x] = c[2 * threadIdx.x + 1];
}

// Not a bug: a struct written field by field, then copied whole (its padding included).
struct PaddedPair {
    float value;
    char tag;
};
extern "C" __global__ void shared_struct_copy(float* out) {
    auto& s = *::gpubook::shared_var<PaddedPair[32]>(0, "pairs");
    s[threadIdx.x].value = float(threadIdx.x);
    s[threadIdx.x].tag = 1;
    __syncthreads();
    PaddedPair p = s[31 - threadIdx.x];
    out[threadIdx.x] = p.value + p.tag;
}

// Block b waits for block b + 1: every block stays resident until the last one runs.
extern "C" __global__ void wait_for_next_block(int* flags) {
    unsigned b = blockIdx.x;
    if (b + 1 < gridDim.x && threadIdx.x == 0) {
        while (atomicAdd(&flags[b + 1], 0) == 0) {
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) atomicExch(&flags[b], 1);
}

// The left neighbour with unsigned arithmetic: column 0 reads in[0u - 1], 16 GiB away.
extern "C" __global__ void unsigned_wrap(const float* in, float* out) {
    unsigned col = threadIdx.x;
    out[col] = in[col] - in[col - 1];
}

// A short index wraps negative past 32767: far before the buffer, outside device memory.
extern "C" __global__ void short_index(float* a) {
    short i = short(blockIdx.x * blockDim.x + threadIdx.x);
    a[i] *= 2.0f;
}

// Warp 0 hands 32 values to warp 1 through a flag, with no barrier between them. Variant 0 is
// right (write, fence, set the flag; wait for it, read); 1 sets the flag without a fence; 2
// writes the data after setting the flag; 3 reads the data before waiting.
__device__ void hand_over(float* data, volatile int* flag, float* out, int variant) {
    unsigned lane = threadIdx.x % 32;
    if (threadIdx.x < 32) {
        if (variant != 2) data[lane] = float(lane);
        if (variant != 1) __threadfence_block();
        __syncwarp();
        if (lane == 0) *flag = 1;
        if (variant == 2) data[lane] = float(lane);
    } else {
        float early = variant == 3 ? data[lane] : 0.0f;
        while (*flag == 0) {
        }
        out[lane] = variant == 3 ? early : data[lane];
    }
}
extern "C" __global__ void warp_handoff_shared(float* out, int variant) {
    auto& data = *::gpubook::shared_var<float[32]>(0, "data");
    auto& ready = *::gpubook::shared_var<int[1]>(1, "ready");
    if (threadIdx.x == 0) ready[0] = 0;
    __syncthreads();
    hand_over(data, ready, out, variant);
}
extern "C" __global__ void warp_handoff_global(float* data, int* flag, float* out, int variant) {
    hand_over(data, flag, out, variant);
}

// A hand-over between two warps of block 0 that goes through block 1: warp 0 writes, fences and
// sets `first`; block 1 waits for it, fences and sets `second`; warp 1 of block 0 waits for that
// and reads. Variant 1: block 1 sets `second` without a fence; 2: warp 0 sets `first` without one.
// (Block 1 writes no data: only block 0's threads touch `data`.)
__device__ void relay(float* data, int* first, int* second, float* out, int variant) {
    unsigned lane = threadIdx.x % 32;
    volatile int* f1 = first;
    volatile int* f2 = second;
    if (blockIdx.x == 0 && threadIdx.x < 32) {
        data[lane] = float(lane);
        if (variant != 2) __threadfence();
        __syncwarp();
        if (lane == 0) *f1 = 1;
    } else if (blockIdx.x == 1 && threadIdx.x == 0) {
        while (*f1 == 0) {
        }
        if (variant != 1) __threadfence();
        *f2 = 1;
    } else if (blockIdx.x == 0 && threadIdx.x < 64) {
        while (*f2 == 0) {
        }
        out[lane] = data[lane];
    }
}
extern "C" __global__ void relay_handoff(float* data, int* first, int* second, float* out, int variant) {
    relay(data, first, second, out, variant);
}
// The data in block 0's shared memory, the flags in global memory.
extern "C" __global__ void relay_handoff_shared(float*, int* first, int* second, float* out, int variant) {
    auto& data = *::gpubook::shared_var<float[32]>(0, "data");
    relay(data, first, second, out, variant);
}

// Warp 0 raises `flags[1]` (a "started" flag), writes the data, fences and raises `flags[0]`;
// warp 1 waits for the wrong one, flags[1], and reads.
extern "C" __global__ void wrong_flag_handoff(float* data, int* flags, float* out) {
    unsigned lane = threadIdx.x % 32;
    volatile int* f = flags;
    if (threadIdx.x < 32) {
        if (lane == 0) f[1] = 1;
        data[lane] = float(lane);
        __syncwarp();
        if (lane == 0) {
            __threadfence();
            f[0] = 1;
        }
    } else {
        while (f[1] == 0) {
        }
        out[lane] = data[lane];
    }
}

// A word one thread touched, then another block's thread (no ordering between them): what the
// race check's compact shadow (one entry a word while one thread owns it) must keep.
//   0: thread 0 of block 0 writes w[0], __syncthreads(), reads it back; block 1 reads it: a race
//      with the write (the later read of another segment must not replace it).
//   1: thread 0 of block 0 reads h[0] and writes h[1] (16-bit halves of one word); block 1
//      writes h[0]: a race with the read (the write of other bytes must not replace it).
//   2: thread 0 of block 0 writes byte 0 of the word, then reads all four; block 1 writes byte
//      1: a race with the read (bytes it read that it had not written).
//   3: thread 0 of block 0 reads, then writes, then reads w[0] across barriers; block 1 does
//      nothing with it: no race (one thread's accesses never race).
extern "C" __global__ void one_owner_then_another(unsigned* w, unsigned* out, int variant) {
    unsigned short* h = reinterpret_cast<unsigned short*>(w);
    unsigned char* c = reinterpret_cast<unsigned char*>(w);
    bool owner = blockIdx.x == 0 && threadIdx.x == 0, other = blockIdx.x == 1 && threadIdx.x == 0;
    if (variant == 0) {
        if (owner) w[0] = 7;
        __syncthreads();
        if (owner) out[0] = w[0];
        if (other) out[1] = w[0];
    } else if (variant == 1) {
        if (owner) h[1] = h[0];
        if (other) h[0] = 5;
    } else if (variant == 2) {
        if (owner) {
            c[0] = 1;
            out[0] = w[0];
        }
        if (other) c[1] = 2;
    } else {
        if (owner) out[0] = w[0];
        __syncthreads();
        if (owner) w[0] = out[0] + 1;
        __syncthreads();
        if (owner) out[1] = w[0];
    }
}

// Warp 1 reads the flag once, before warp 0 (which pauses first) sets it, pauses, and reads the
// data without waiting for the flag to be set.
extern "C" __global__ void flag_read_once(float* data, int* flag, float* out) {
    unsigned lane = threadIdx.x % 32;
    volatile int* f = flag;
    if (threadIdx.x < 32) {
        __nanosleep(1000);
        data[lane] = float(lane);
        __syncwarp();
        if (lane == 0) {
            __threadfence();
            *f = 1;
        }
    } else {
        int seen = *f;
        __nanosleep(1000);
        out[lane] = data[lane] + float(seen);
    }
}

// A warp's last reduction steps through volatile shared memory: without __syncwarp() between
// the steps (the pre-Volta idiom) lanes race; with it, they do not.
extern "C" __global__ void volatile_warp_tail(const float* in, float* out, int with_syncwarp) {
    auto& s = *::gpubook::shared_var<float[64]>(0, "s");
    unsigned t = threadIdx.x;
    s[t] = in[t];
    s[t + 32] = in[t + 32];
    __syncwarp();
    volatile float* v = s;
    for (unsigned k = 32; k > 0; k /= 2) {
        float x = v[t] + v[t + k];
        if (with_syncwarp) __syncwarp();
        v[t] = x;
        if (with_syncwarp) __syncwarp();
    }
    if (t == 0) out[0] = v[0];
}

GPUBOOK_EXPORT_KERNEL(vector_add_unguarded)
GPUBOOK_EXPORT_KERNEL(shared_overflow)
GPUBOOK_EXPORT_KERNEL(reduce_missing_sync)
GPUBOOK_EXPORT_KERNEL(shared_read_after_write)
GPUBOOK_EXPORT_KERNEL(shared_write_after_read)
GPUBOOK_EXPORT_KERNEL(shared_input_then_write)
GPUBOOK_EXPORT_KERNEL(reads_in_two_blocks_then_write)
GPUBOOK_EXPORT_KERNEL(count_blocks)
GPUBOOK_EXPORT_KERNEL(early_return)
GPUBOOK_EXPORT_KERNEL(split_barrier)
GPUBOOK_EXPORT_KERNEL(shuffle_half)
GPUBOOK_EXPORT_KERNEL(spin)
GPUBOOK_EXPORT_KERNEL(spin_one)
GPUBOOK_EXPORT_KERNEL(null_write)
GPUBOOK_EXPORT_KERNEL(null_write_lane)
GPUBOOK_EXPORT_KERNEL(stack_array)
GPUBOOK_EXPORT_KERNEL(deep_recursion)
GPUBOOK_EXPORT_KERNEL(assert_positive)
GPUBOOK_EXPORT_KERNEL(divide)
GPUBOOK_EXPORT_KERNEL(shared_tile_edge)
GPUBOOK_EXPORT_KERNEL(shared_from_another_block)
GPUBOOK_EXPORT_KERNEL(shared_histogram_unzeroed)
GPUBOOK_EXPORT_KERNEL(shared_other_byte)
GPUBOOK_EXPORT_KERNEL(shared_struct_copy)
GPUBOOK_EXPORT_KERNEL(wait_for_next_block)
GPUBOOK_EXPORT_KERNEL(unsigned_wrap)
GPUBOOK_EXPORT_KERNEL(short_index)
GPUBOOK_EXPORT_KERNEL(one_owner_then_another)
GPUBOOK_EXPORT_KERNEL(warp_handoff_shared)
GPUBOOK_EXPORT_KERNEL(warp_handoff_global)
GPUBOOK_EXPORT_KERNEL(relay_handoff)
GPUBOOK_EXPORT_KERNEL(relay_handoff_shared)
GPUBOOK_EXPORT_KERNEL(wrong_flag_handoff)
GPUBOOK_EXPORT_KERNEL(flag_read_once)
GPUBOOK_EXPORT_KERNEL(volatile_warp_tail)
