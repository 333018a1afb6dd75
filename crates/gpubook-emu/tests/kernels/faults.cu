// Kernels that go wrong on purpose, one way each.

// Spins forever: thread 0 waits for a flag nobody sets.
extern "C" __global__ void spin(volatile int* flag) {
    while (flag[0] == 0) {
    }
}

// Writes through a pointer that is not device memory.
extern "C" __global__ void wild_write(int* p) {
    int* wild = (int*)16;
    wild[threadIdx.x] = p[0];
}

// Says hello, so tests can see kernel printf.
extern "C" __global__ void hello(int tag) {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        printf("hello from the emulator, tag %d\n", tag);
    }
}

// A local array far larger than a thread's stack.
extern "C" __global__ void overflow(int* sink) {
    volatile int big[1 << 20];
    big[threadIdx.x * 4096] = sink[0];
    sink[threadIdx.x] = big[0];
}

// Fails an assertion in thread 3.
extern "C" __global__ void failed_assert(int* p) {
    assert(threadIdx.x != 3);
    p[threadIdx.x] = 1;
}

// Busy but never stuck: every thread reads `reps` elements, so a big grid takes many seconds in
// check mode while threads finish all the time.
extern "C" __global__ void busy(const float* x, float* out, int reps) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int r = 0; r < reps; r++) s += x[(i + r) % 1024];
    out[i] = s;
}

// Writes 16 KiB past the end of its buffer: into the unmapped gap after it, which fast mode
// (no checks) hits as a fault.
extern "C" __global__ void far_past_the_end(float* p, int n) { p[n + 4096] = 1.0f; }
