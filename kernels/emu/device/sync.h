// Block barriers and memory fences.
#ifndef GPUBOOK_SYNC_H
#define GPUBOOK_SYNC_H

// Each call is a real rendezvous in the worker: the calling fiber parks until every
// thread of the block has arrived, and the worker reports divergence instead of hanging.
static __forceinline__ void __syncthreads() { gpubook_rt_syncthreads(GPUBOOK_BAR_SYNC, 0); }
static __forceinline__ int __syncthreads_count(int pred) {
    return gpubook_rt_syncthreads(GPUBOOK_BAR_COUNT, pred);
}
static __forceinline__ int __syncthreads_and(int pred) {
    return gpubook_rt_syncthreads(GPUBOOK_BAR_AND, pred);
}
static __forceinline__ int __syncthreads_or(int pred) {
    return gpubook_rt_syncthreads(GPUBOOK_BAR_OR, pred);
}

// Fibers of one block share an OS thread, and fast mode's OS threads communicate only
// through atomics, so a sequentially consistent fence is always enough.
static __forceinline__ void __threadfence() {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    gpubook_rt_threadfence();
}
static __forceinline__ void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static __forceinline__ void __threadfence_system() { __threadfence(); }

#endif
