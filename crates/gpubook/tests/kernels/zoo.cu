// The bug zoo: kernels with one planted bug each (`bug_*`), every one beside a correct twin
// (`ok_*`) that does the same job. tests/bug_zoo.rs runs each on the emulator and checks the
// diagnostic: its class, a thread, and a line marked `// BUG: <name>` here.
// Every kernel takes (float* out, const float* in, int n), with n elements in both buffers.

extern "C" __global__ void ok_copy(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}

// No guard: the threads of the last block past n read and write out of bounds.
extern "C" __global__ void bug_no_guard(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];  // BUG: no_guard
}

// `<=` lets thread n through: one element past the end.
extern "C" __global__ void bug_off_by_one(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) out[i] = 2.0f * in[i];  // BUG: off_by_one
}

extern "C" __global__ void ok_scale(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * in[i];
}

// Reads the neighbour to the left, including in[-1].
extern "C" __global__ void bug_negative_index(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] - in[i - 1];  // BUG: negative_index
}

extern "C" __global__ void ok_difference(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] - (i > 0 ? in[i - 1] : 0.0f);
}

// Writes the input buffer's mirror index without a guard on the reversed side.
extern "C" __global__ void bug_reverse_past_end(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[n - i] = in[i];  // BUG: reverse_past_end
}

extern "C" __global__ void ok_reverse(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[n - 1 - i] = in[i];
}

#define TILE 64

// The tile has 64 slots but the block has 128 threads.
extern "C" __global__ void bug_shared_overflow(float* out, const float* in, int n) {
    __shared__ float tile[TILE];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    tile[t] = i < n ? in[i] : 0.0f;  // BUG: shared_overflow
    __syncthreads();
    if (i < n) out[i] = tile[t];
}

extern "C" __global__ void ok_shared_staging(float* out, const float* in, int n) {
    __shared__ float tile[128];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    tile[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    if (i < n) out[i] = tile[t];
}

// Dynamic shared memory sized for blockDim.x floats, indexed one past it.
extern "C" __global__ void bug_dynamic_shared(float* out, const float* in, int n) {
    extern __shared__ float buf[];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    buf[t + 1] = i < n ? in[i] : 0.0f;  // BUG: dynamic_shared
    __syncthreads();
    if (i < n) out[i] = buf[t + 1];
}

extern "C" __global__ void ok_dynamic_shared(float* out, const float* in, int n) {
    extern __shared__ float buf[];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    buf[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    if (i < n) out[i] = buf[t];
}

// Reverses each block's slice through shared memory, without the barrier between the write
// and the read of another thread's slot.
extern "C" __global__ void bug_missing_sync(float* out, const float* in, int n) {
    __shared__ float tile[128];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    tile[t] = i < n ? in[i] : 0.0f;  // BUG: missing_sync
    if (i < n) out[i] = tile[blockDim.x - 1 - t];  // BUG: missing_sync
}

extern "C" __global__ void ok_block_reverse(float* out, const float* in, int n) {
    __shared__ float tile[128];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    tile[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    if (i < n) out[i] = tile[blockDim.x - 1 - t];
}

// A tree reduction that is missing the barrier inside its loop.
extern "C" __global__ void bug_reduce_no_loop_sync(float* out, const float* in, int n) {
    __shared__ float s[128];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k /= 2) {
        if (t < k) s[t] += s[t + k];  // BUG: reduce_no_loop_sync
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

extern "C" __global__ void ok_reduce(float* out, const float* in, int n) {
    __shared__ float s[128];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k /= 2) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

// Every block adds into out[0] with a plain +=: a race between blocks (atomicAdd is the fix).
extern "C" __global__ void bug_global_sum(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && threadIdx.x == 0) out[0] += in[i];  // BUG: global_sum
}

extern "C" __global__ void ok_global_sum(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && threadIdx.x == 0) atomicAdd(&out[0], in[i]);
}

// Threads of one block shift the array in place: thread t reads what thread t+1 writes.
extern "C" __global__ void bug_in_place_shift(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 1 < n) out[i] = out[i + 1];  // BUG: in_place_shift
}

extern "C" __global__ void ok_shift(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 1 < n) out[i] = in[i + 1];
}

// __syncthreads inside a branch only half of the block takes.
extern "C" __global__ void bug_divergent_barrier(float* out, const float* in, int n) {
    __shared__ float s[128];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0.0f;
    if (t < 64) {
        __syncthreads();  // BUG: divergent_barrier
        s[t] += s[t + 64];
    }
    if (i < n) out[i] = s[t];
}

extern "C" __global__ void ok_uniform_barrier(float* out, const float* in, int n) {
    __shared__ float s[128];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    float v = s[t] + (t < 64 ? s[t + 64] : 0.0f);
    if (i < n) out[i] = v;
}

// Threads past n return before a barrier the others wait at.
extern "C" __global__ void bug_early_return(float* out, const float* in, int n) {
    __shared__ float s[128];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    if (i >= n) return;
    s[t] = in[i];
    __syncthreads();  // BUG: early_return
    out[i] = s[t];
}

// A thread waits for a flag that nothing ever sets.
extern "C" __global__ void bug_spin_forever(float* out, const float* in, int n) {
    volatile float* flag = out;
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        while (flag[0] != 12345.0f) {  // BUG: spin_forever
        }
    }
}

// A loop whose counter never moves.
extern "C" __global__ void bug_stuck_loop(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < n; k += 0) {  // BUG: stuck_loop
        if (i < n) out[i] = in[i];  // BUG: stuck_loop
    }
}

// Dereferences a null pointer.
extern "C" __global__ void bug_null_pointer(float* out, const float* in, int n) {
    float* p = (float*)0;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = p[i];  // BUG: null_pointer
}

// A pointer made from an integer that points nowhere.
extern "C" __global__ void bug_wild_pointer(float* out, const float* in, int n) {
    float* p = (float*)(unsigned long long)0x10;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = in[i];  // BUG: wild_pointer
}

// Unbounded recursion.
__device__ float depth(float x) {
    return depth(x + 1.0f) + 1.0f;  // BUG: recursion
}
extern "C" __global__ void bug_recursion(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = depth(in[i]);  // BUG: recursion
}

// A 4 MiB local array: far more stack than a GPU thread (or an emulated one) has.
// (The stack is probed on entry, so the report points at the kernel's first line.)
extern "C" __global__ void bug_huge_local(float* out, const float* in, int n) {  // BUG: huge_local
    volatile float big[1 << 20];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    big[(i * 7919) & ((1 << 20) - 1)] = 1.0f;  // BUG: huge_local
    if (i < n) out[i] = big[i & 1023];  // BUG: huge_local
}

// assert() fails for the elements equal to 100, as a kernel's own check would.
extern "C" __global__ void bug_assert(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        assert(in[i] < 100.0f);  // BUG: assert
        out[i] = in[i];
    }
}

// Integer division by a zero that came from the data.
extern "C" __global__ void bug_divide_by_zero(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int d = (int)in[i] - (int)in[i];
        out[i] = (float)(i / d);  // BUG: divide_by_zero
    }
}

// A warp shuffle that only half of the warp reaches, with a full mask.
extern "C" __global__ void bug_partial_shuffle(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    if ((threadIdx.x & 31) < 16) {
        v += __shfl_down_sync(0xffffffff, v, 16);  // BUG: partial_shuffle
    }
    if (i < n) out[i] = v;
}

extern "C" __global__ void ok_warp_sum(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffff, v, d);
    if (i < n) out[i] = v;
}

// Accumulates into an output nobody zeroed (the classic "forgot the memset").
extern "C" __global__ void bug_read_unwritten(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] += in[i];  // BUG: read_unwritten
}

// Twins of the bugs above that have no natural twin yet.
extern "C" __global__ void ok_flag(float* out, const float* in, int n) {
    volatile float* flag = out;
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        flag[0] = 12345.0f;
        while (flag[0] != 12345.0f) {
        }
    }
}

extern "C" __global__ void ok_loop(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < 3; k += 1) {
        if (i < n) out[i] = in[i] + k;
    }
}

__device__ float bounded_depth(float x, int left) {
    return left == 0 ? x : bounded_depth(x + 1.0f, left - 1);
}
extern "C" __global__ void ok_recursion(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = bounded_depth(in[i], 10);
}

extern "C" __global__ void ok_small_local(float* out, const float* in, int n) {
    float small[16];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < 16; k++) small[k] = (float)k;
    if (i < n) out[i] = in[i] + small[i & 15];
}

extern "C" __global__ void ok_divide(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int d = (int)in[i] + 1;
        out[i] = (float)(i / d);
    }
}

extern "C" __global__ void ok_accumulate(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 0.0f;
    if (i < n) out[i] += in[i];
}

extern "C" __global__ void ok_half_shuffle(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    float other = __shfl_down_sync(0xffffffff, v, 16);
    if ((threadIdx.x & 31) < 16) v += other;
    if (i < n) out[i] = v;
}

// A float4 read from in + 1: 4 bytes past a 16-byte boundary (a GPU stops with "misaligned
// address"; a CPU's aligned vector load faults too).
extern "C" __global__ void bug_misaligned_vector(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (4 * i + 4 < n) {
        float4 v = reinterpret_cast<const float4*>(in + 1)[i];  // BUG: misaligned_vector
        reinterpret_cast<float4*>(out)[i] = v;
    }
}

extern "C" __global__ void ok_vector_copy(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (4 * i + 3 < n) reinterpret_cast<float4*>(out)[i] = reinterpret_cast<const float4*>(in)[i];
}

// Lanes 0-15 read lanes 16-31, which the mask leaves out: the value is undefined on a GPU.
extern "C" __global__ void bug_shuffle_outside_mask(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    int lane = threadIdx.x & 31;
    if (lane < 16) v += __shfl_sync(0x0000ffff, v, lane + 16);  // BUG: shuffle_outside_mask
    if (i < n) out[i] = v;
}

// Run with 48 threads a block: the second warp has lanes 0-15 only, and they read lanes 16-31,
// which do not exist (a full-warp reduction on a block that is not a multiple of 32).
extern "C" __global__ void bug_shuffle_missing_lane(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    v += __shfl_down_sync(0xffffffff, v, 16);  // BUG: shuffle_missing_lane
    if (i < n) out[i] = v;
}

// The same pairing, reading only lanes that exist.
extern "C" __global__ void ok_partial_warp(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    int lane = threadIdx.x & 31;
    int lanes = min(32, (int)(blockDim.x - (threadIdx.x - lane)));  // lanes in this warp
    unsigned mask = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
    float other = __shfl_sync(mask, v, lane + 16 < lanes ? lane + 16 : lane);
    if (lane + 16 < lanes) v += other;
    if (i < n) out[i] = v;
}

// A loop with no side effects that never ends: C++ lets a compiler assume it ends and delete
// it (g++ -O2 does), which would turn the hang into a silent "ok". The emulator keeps it.
extern "C" __global__ void bug_empty_loop(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    while (n > 0) {  // BUG: empty_loop
    }
    if (i < n) out[i] = in[i];
}

// Adds each element's right-hand neighbour through a tile; threads past n load nothing, yet
// the last one in range reads the slot after its own. Shared memory starts every block with
// whatever was there: garbage on a GPU, which no sanitizer tool reports.
extern "C" __global__ void bug_shared_tile_edge(float* out, const float* in, int n) {
    __shared__ float tile[128];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    if (i < n) tile[t] = in[i];
    __syncthreads();
    if (i < n) out[i] = tile[t] + (t + 1 < blockDim.x ? tile[t + 1] : 0.0f);  // BUG: shared_tile_edge
}

extern "C" __global__ void ok_shared_neighbour(float* out, const float* in, int n) {
    __shared__ float tile[128];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    tile[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    if (i < n) out[i] = tile[t] + (t + 1 < blockDim.x ? tile[t + 1] : 0.0f);
}

// A histogram of (int)in[i] % 8 in shared memory that nobody zeroed: every bin starts at
// whatever the last block left.
extern "C" __global__ void bug_shared_histogram(float* out, const float* in, int n) {
    __shared__ int bins[8];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[(int)in[i] % 8], 1);  // BUG: shared_histogram
    __syncthreads();
    if (threadIdx.x < 8) atomicAdd(&out[threadIdx.x], (float)bins[threadIdx.x]);
}

extern "C" __global__ void ok_shared_histogram(float* out, const float* in, int n) {
    __shared__ int bins[8];
    if (threadIdx.x < 8) bins[threadIdx.x] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[(int)in[i] % 8], 1);
    __syncthreads();
    if (threadIdx.x < 8) atomicAdd(&out[threadIdx.x], (float)bins[threadIdx.x]);
}

// The left neighbour with unsigned arithmetic: element 0 reads in[0u - 1], 16 GiB past the
// buffer (a GPU faults or reads garbage; a 64-bit index does not wrap back).
extern "C" __global__ void bug_unsigned_wrap(float* out, const float* in, int n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] - in[i - 1];  // BUG: unsigned_wrap
}

// The pre-Volta reduction: the last 32 partial sums added by one warp through volatile shared
// memory with no __syncwarp() between the steps. Lanes no longer run in lockstep: a lane can read
// its neighbour's slot before the neighbour added into it. (It usually works on today's GPUs,
// and a compiler change or a different GPU breaks it.)
extern "C" __global__ void bug_volatile_warp_reduce(float* out, const float* in, int n) {
    __shared__ float s[128];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 32; k /= 2) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t < 32) {
        volatile float* v = s;
        v[t] += v[t + 32];  // BUG: volatile_warp_reduce
        v[t] += v[t + 16];  // BUG: volatile_warp_reduce
        v[t] += v[t + 8];   // BUG: volatile_warp_reduce
        v[t] += v[t + 4];   // BUG: volatile_warp_reduce
        v[t] += v[t + 2];   // BUG: volatile_warp_reduce
        v[t] += v[t + 1];   // BUG: volatile_warp_reduce
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
