// Targets of the source rewrite (see crates/gpubook-emu/DESIGN.md, "The contract"):
//   __shared__ float tile[16][16];  ->  auto& tile = *::gpubook::shared_var<float[16][16]>(ID, "tile");
//   __shared__ __align__(32) half a[256];  ->  ... shared_var<half[256], 32>(ID, "a");
//   extern __shared__ float s[];    ->  float* s = ::gpubook::dynamic_shared<float>("s");
// The worker places each variable in the running block's shared memory with a redzone
// around it, so bounds checks can name the variable and the element.
#ifndef GPUBOOK_SHARED_MEMORY_H
#define GPUBOOK_SHARED_MEMORY_H

namespace gpubook {
namespace detail {
template <class T> struct element { typedef T type; };
template <class T, size_t N> struct element<T[N]> { typedef typename element<T>::type type; };
template <class T> struct element<T[]> { typedef typename element<T>::type type; };
} // namespace detail

// `Align`: the declaration's __align__(N), when it asks for more than the type's own.
template <class T, size_t Align = alignof(T)>
static __forceinline__ T* shared_var(int id, const char* name) {
    return (T*)gpubook_rt_shared_var(id, name, sizeof(T), Align > alignof(T) ? Align : alignof(T),
                                     sizeof(typename detail::element<T>::type));
}
template <class T>
static __forceinline__ T* dynamic_shared(const char* name) {
    return (T*)gpubook_rt_dynamic_shared(name, sizeof(T));
}
} // namespace gpubook

#endif
