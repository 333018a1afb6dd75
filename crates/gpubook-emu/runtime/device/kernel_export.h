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
// The worker asks how many parameters a kernel has, to check LAUNCH's argument count.
template <class... P> static constexpr int arity(void (*)(P...)) { return sizeof...(P); }
} // namespace detail
} // namespace gpubook

// GPUBOOK_EXPORT_KERNEL_AS(SYMBOL, EXPRESSION...): the entry point `__gpubook_kernel_SYMBOL`
// for the kernel EXPRESSION names: a plain name, `ns::name`, or a template instantiation
// `reduce<float, 256>` (variadic, for the commas).
#define GPUBOOK_EXPORT_KERNEL_AS(SYMBOL, ...)                                               \
    extern "C" void __gpubook_kernel_##SYMBOL(void** args) {                                \
        ::gpubook::detail::call_kernel(&__VA_ARGS__, args);                                 \
    }                                                                                       \
    extern "C" const int __gpubook_kernel_arity_##SYMBOL = ::gpubook::detail::arity(&__VA_ARGS__);
#define GPUBOOK_EXPORT_KERNEL(NAME) GPUBOOK_EXPORT_KERNEL_AS(NAME, NAME)

#endif
