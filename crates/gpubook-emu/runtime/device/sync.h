// Block barriers and memory fences.
#ifndef GPUBOOK_SYNC_H
#define GPUBOOK_SYNC_H

// Each call is a real rendezvous in the worker: the calling fiber parks until every
// thread of the block has arrived, and the worker reports divergence instead of hanging.
// A barrier is named by its source line (the rewrite's #line directives make __LINE__ the
// learner's line), not by its call site: the optimiser may duplicate one __syncthreads() into
// two call sites, which is still one barrier.
#define __syncthreads() ((void)gpubook_rt_syncthreads(GPUBOOK_BAR_SYNC, 0, __LINE__))
#define __syncthreads_count(pred) gpubook_rt_syncthreads(GPUBOOK_BAR_COUNT, (pred), __LINE__)
#define __syncthreads_and(pred) gpubook_rt_syncthreads(GPUBOOK_BAR_AND, (pred), __LINE__)
#define __syncthreads_or(pred) gpubook_rt_syncthreads(GPUBOOK_BAR_OR, (pred), __LINE__)

// Check mode runs every thread on one OS thread, so a fence orders nothing there; it tells the
// race detector that what the block wrote so far may be published (races.h). Fast mode's OS
// threads communicate only through atomics, so a sequentially consistent fence is enough.
#if defined(GPUBOOK_CHECK)
static __forceinline__ void __threadfence() { gpubook_rt_threadfence(); }
static __forceinline__ void __threadfence_block() { gpubook_rt_threadfence_block(); }
#else
static __forceinline__ void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static __forceinline__ void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
#endif
static __forceinline__ void __threadfence_system() { __threadfence(); }

// A thread that waits for another lets the others run (sm_70's __nanosleep).
static __forceinline__ void __nanosleep(unsigned ns) { gpubook_rt_nanosleep(ns); }

#endif
