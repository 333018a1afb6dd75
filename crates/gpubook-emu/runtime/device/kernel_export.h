// GPUBOOK_EXPORT_KERNEL(NAME): the entry point the worker finds with dlsym.
//
// The worker holds a launch's arguments as cuLaunchKernel does: an array of pointers, one
// per parameter. `extern "C" void __gpubook_kernel_NAME(void** args)` unpacks that array
// with the kernel's own parameter types and calls the kernel once (for one CUDA thread).
#ifndef GPUBOOK_KERNEL_EXPORT_H
#define GPUBOOK_KERNEL_EXPORT_H

namespace gpubook {
namespace detail {
template <unsigned... I> struct index_list {};
template <unsigned N, unsigned... I> struct make_index_list : make_index_list<N - 1, N - 1, I...> {};
template <unsigned... I> struct make_index_list<0, I...> { typedef index_list<I...> type; };

template <class... P, unsigned... I>
static __forceinline__ void call_kernel(void (*kernel)(P...), void** args, index_list<I...>) {
    kernel(*static_cast<P*>(args[I])...);
}
template <class... P>
static __forceinline__ void call_kernel(void (*kernel)(P...), void** args) {
    call_kernel(kernel, args, typename make_index_list<sizeof...(P)>::type());
}

#if defined(GPUBOOK_CHECK_PASS)
// The block loop's own code gets no checks from the pass (it reads the argument array and the
// loop's bounds, never device memory); the kernel inlined into it keeps its own.
#define GPUBOOK_NO_CHECKS __attribute__((no_instrument_function))
// flatten, which the pass takes back from a kernel that would bring too many checks along.
#define GPUBOOK_LOOP_INLINING __attribute__((flatten, noinline))
// Check mode: the thread's counts start at zero, and the worker does the rest of its
// bookkeeping at its first call for it (check_state.h, gpubook_thread_hot::started).
// The rest of its counts (atomics, barriers) are zero: only the worker counts them, and it
// zeroes them again when it folds a thread it started (gpubook_rt_loop_fold).
static __forceinline__ GPUBOOK_NO_CHECKS void start_thread(unsigned i) {
    gpubook_check_state& s = gpubook_check_tls;
    gpubook_thread_hot& h = *s.loop_hot;
    s.thread = i;
    h.global_loads = h.global_stores = h.shared_loads = h.shared_stores = 0;
    h.slice = h.started = 0;
}
// Its counts into the block's extremes, unless it left the loop (a barrier: it ends on a fiber).
static __forceinline__ GPUBOOK_NO_CHECKS void end_thread() {
    gpubook_check_state& s = gpubook_check_tls;
    const gpubook_thread_hot& h = *s.loop_hot;
    if (s.hot != s.loop_hot) return;
    if ((h.global_loads ^ s.loop_last[0]) | (h.global_stores ^ s.loop_last[1]) | (h.shared_loads ^ s.loop_last[2]) |
        (h.shared_stores ^ s.loop_last[3]) | h.started)
        gpubook_rt_loop_fold();
}
#else
#define GPUBOOK_NO_CHECKS
#define GPUBOOK_LOOP_INLINING __attribute__((flatten, noinline))
static __forceinline__ void start_thread(unsigned) {}
static __forceinline__ void end_thread() {}
#endif

// The block loop (abi.h, gpubook_block_loop) of fast mode, and of check mode with the compiler
// pass: the parameters are unpacked once a block and the kernel, inlined into the loop
// (flatten), runs once per thread.
template <class F, F Kernel> struct block_loop;
template <class... P, void (*Kernel)(P...)> struct block_loop<void (*)(P...), Kernel> {
    template <unsigned... I>
    static __forceinline__ GPUBOOK_NO_CHECKS void run(void** args, gpubook_block_loop* loop, index_list<I...>) {
        threads(loop, *static_cast<P*>(args[I])...);
    }
    // `loop->end` is re-read after every thread: a call into the worker may have ended the loop.
    // The thread's coordinates count up from the first one's, x fastest, without a division.
    // They are stored whole before each thread, after its start (a store through a pointer
    // after them, or a store of one field, would keep the compiler from reading the kernel's
    // threadIdx back from the stores, and the processor from forwarding them to its loads);
    // the worker finds the running thread from them.
    static GPUBOOK_LOOP_INLINING GPUBOOK_NO_CHECKS void threads(gpubook_block_loop* loop, P... p) {
        unsigned i = loop->next;
        if (i >= loop->end) return;
        const unsigned dx = gpubook_rt_coord(GPUBOOK_BLOCK_DIM), dy = gpubook_rt_coord(GPUBOOK_BLOCK_DIM + 1);
        unsigned x = i % dx, y = i / dx % dy, z = i / dx / dy;
        for (;;) {
            start_thread(i);
            gpubook_current_coords.thread_idx = gpubook_dim3{x, y, z};
            Kernel(p...);
            end_thread();
            if (++i >= loop->end) return;
            if (++x == dx) {
                x = 0;
                if (++y == dy) {
                    y = 0;
                    z++;
                }
            }
        }
    }
};
// The worker asks how many parameters a kernel has, to check LAUNCH's argument count.
template <class... P> static constexpr int arity(void (*)(P...)) { return sizeof...(P); }
} // namespace detail
} // namespace gpubook

// GPUBOOK_EXPORT_KERNEL_AS(SYMBOL, EXPRESSION...): the entry point `__gpubook_kernel_SYMBOL`
// for the kernel EXPRESSION names: a plain name, `ns::name`, or a template instantiation
// `reduce<float, 256>` (variadic, for the commas).
// Fast mode, and check mode with the compiler pass, add `__gpubook_kloop_SYMBOL`, the block loop.
#if defined(GPUBOOK_FAST) || defined(GPUBOOK_CHECK_PASS)
#define GPUBOOK_EXPORT_BLOCK_LOOP(SYMBOL, ...)                                              \
    extern "C" void __gpubook_kloop_##SYMBOL(void** args, gpubook_block_loop* loop) {       \
        typedef decltype(&__VA_ARGS__) kernel_type;                                         \
        ::gpubook::detail::block_loop<kernel_type, &__VA_ARGS__>::run(                      \
            args, loop, typename ::gpubook::detail::make_index_list<                        \
                            ::gpubook::detail::arity(&__VA_ARGS__)>::type());               \
    }
#else
#define GPUBOOK_EXPORT_BLOCK_LOOP(SYMBOL, ...)
#endif
// The entry is not instrumented in check mode: reading the argument array is not the kernel's.
#define GPUBOOK_EXPORT_KERNEL_AS(SYMBOL, ...)                                               \
    extern "C" __attribute__((no_sanitize("thread"))) void __gpubook_kernel_##SYMBOL(void** args) { \
        ::gpubook::detail::call_kernel(&__VA_ARGS__, args);                                 \
    }                                                                                       \
    GPUBOOK_EXPORT_BLOCK_LOOP(SYMBOL, __VA_ARGS__)                                          \
    extern "C" const int __gpubook_kernel_arity_##SYMBOL = ::gpubook::detail::arity(&__VA_ARGS__);
#define GPUBOOK_EXPORT_KERNEL(NAME) GPUBOOK_EXPORT_KERNEL_AS(NAME, NAME)

#endif
