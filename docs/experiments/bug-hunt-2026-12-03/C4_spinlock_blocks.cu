// gpubook run C4_spinlock_blocks.cu --kernel locked --grid 16 --block 32 --arg i32[1]:zeros --arg f32[2]:zeros --mode check
// CORRECT: a global spin lock (atomicCAS / atomicExch) taken by one thread per block; critical section uses volatile
// accesses and __threadfence, so each block sees the previous holder's writes
extern "C" __global__ void locked(int* lock, float* acc) {
    if (threadIdx.x == 0) {
        while (atomicCAS(lock, 0, 1) != 0) { }
        __threadfence();
        volatile float* a = acc;
        a[0] = a[0] + 1.f;
        a[1] = a[1] + (float)blockIdx.x;
        __threadfence();
        atomicExch(lock, 0);
    }
}
