// Vector add, two ways, for `gpubook bench`: the first kernel a learner writes, and one tuned
// to keep enough bytes in flight to run at the memory's speed.

// One element per thread: each thread issues one 4-byte load per input.
extern "C" __global__ void vector_add_naive(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

// ANCHOR: tuned
// 16-byte loads (float4), UNROLL independent loads per input in flight before the first add,
// and a grid-stride loop so a grid sized to the machine covers any n.
#define UNROLL 4
extern "C" __global__ void vector_add_tuned(const float4* __restrict__ a, const float4* __restrict__ b,
                                            float4* __restrict__ c, int n4) {
    int stride = gridDim.x * blockDim.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (UNROLL - 1) * stride < n4; i += UNROLL * stride) {
        float4 x[UNROLL], y[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) { x[u] = a[i + u * stride]; y[u] = b[i + u * stride]; }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            c[i + u * stride] = make_float4(x[u].x + y[u].x, x[u].y + y[u].y, x[u].z + y[u].z, x[u].w + y[u].w);
        }
    }
    for (; i < n4; i += stride) {
        float4 x = a[i], y = b[i];
        c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
}
// ANCHOR_END: tuned

// The same with one float4 per thread and no loop: wide loads alone.
extern "C" __global__ void vector_add_float4(const float4* __restrict__ a, const float4* __restrict__ b,
                                             float4* __restrict__ c, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 x = a[i], y = b[i];
        c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
}
