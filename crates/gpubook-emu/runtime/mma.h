// mma.h for gpubook's CPU emulator: nvcuda::wmma, the warp-wide tensor-core API. A warp loads
// tiles of A and B into fragments, multiplies them into an accumulator fragment and stores it:
// shapes m16n16k16, m32n8k16 and m8n32k16, inputs __half or __nv_bfloat16, accumulators float
// (or __half).
//
// How the emulator holds a fragment (the real mapping of elements to threads is unspecified):
// - an accumulator is spread over the warp, as on a GPU: lane l holds the elements l*E .. l*E+E-1
//   of the tile in row-major order, E = M*N/32 (8 for 16 x 16), so `num_elements` and `x[]` read
//   as on a GPU and element-wise work on them (scaling, an activation) is each lane's own;
// - a matrix_a or matrix_b fragment is held whole by every lane (`num_elements` is the tile's
//   size, not a GPU's 16): every lane reads the whole tile at a load, so an mma needs no exchange
//   between lanes. Element-wise work on one is applied by every lane to its copy, which agrees
//   with a GPU for any operation that depends on the values alone.
// Products of half or bfloat16 values are exact in float; each output adds them to C in k order,
// in float. A GPU's tensor core may add in another order and keep fewer bits between steps, so
// sums that are not exact in float can differ in the last bits.
//
// Every operation is warp-wide: it starts with a __syncwarp, so a lane that does not take part is
// reported. Misuse a GPU would punish silently stops the launch with a trap at the call: a pointer
// not 32-byte aligned, a leading dimension not a multiple of 16 bytes.
#ifndef GPUBOOK_MMA_H
#define GPUBOOK_MMA_H

#include "cuda_bf16.h"
#include "cuda_fp16.h"

extern "C" void gpubook_rt_assert_fail(const char* expr, const char* file, int line, const char* func) __attribute__((noreturn));

namespace nvcuda {
namespace wmma {
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

namespace detail {
// The tile a fragment of `Use` covers: A is M x K, B is K x N, an accumulator M x N.
template <class Use, int M, int N, int K> struct dims;
template <int M, int N, int K> struct dims<matrix_a, M, N, K> { static constexpr int rows = M, cols = K; };
template <int M, int N, int K> struct dims<matrix_b, M, N, K> { static constexpr int rows = K, cols = N; };
template <int M, int N, int K> struct dims<accumulator, M, N, K> { static constexpr int rows = M, cols = N; };

template <int M, int N, int K> struct shape_ok { static constexpr bool value = false; };
template <> struct shape_ok<16, 16, 16> { static constexpr bool value = true; };
template <> struct shape_ok<32, 8, 16> { static constexpr bool value = true; };
template <> struct shape_ok<8, 32, 16> { static constexpr bool value = true; };

static __forceinline__ void check(bool ok, const char* what, const char* file, int line, const char* func) {
    if (!ok) gpubook_rt_assert_fail(what, file, line, func);
}

static __forceinline__ unsigned lane() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
} // namespace detail

template <class Use, int M, int N, int K, class T, class Layout = void>
class fragment {
    static_assert(detail::shape_ok<M, N, K>::value, "wmma shapes: m16n16k16, m32n8k16 or m8n32k16 (the emulator's set)");

  public:
    static constexpr int rows = detail::dims<Use, M, N, K>::rows;
    static constexpr int cols = detail::dims<Use, M, N, K>::cols;
    // An accumulator's share of one lane; an input fragment's whole tile (see the top).
    static constexpr int num_elements = __is_same(Use, accumulator) ? rows * cols / 32 : rows * cols;
    typedef T element_type;
    T x[num_elements];
};

// fill_fragment: every element `v`.
template <class Use, int M, int N, int K, class T, class L>
static __forceinline__ void fill_fragment(fragment<Use, M, N, K, T, L>& f, const T& v) {
    __syncwarp();
    for (int i = 0; i < f.num_elements; ++i) f.x[i] = v;
}

// Inputs: the whole tile, row-major or column-major in memory as the fragment's Layout says.
template <class Use, int M, int N, int K, class T, class L, class S>
static __forceinline__ void load_matrix_sync(fragment<Use, M, N, K, T, L>& f, const S* p, unsigned ldm,
                                             const char* file = __builtin_FILE(), int line = __builtin_LINE(),
                                             const char* func = __builtin_FUNCTION()) {
    static_assert(!__is_same(Use, accumulator), "an accumulator's load names the memory layout: load_matrix_sync(f, p, ldm, mem_row_major)");
    static_assert(__is_same(L, row_major) || __is_same(L, col_major), "an input fragment names its layout: row_major or col_major");
    __syncwarp();
    detail::check(((unsigned long)p & 31u) == 0, "wmma::load_matrix_sync: the pointer must be 32-byte (256-bit) aligned", file, line, func);
    detail::check((ldm * sizeof(S)) % 16 == 0, "wmma::load_matrix_sync: ldm must be a multiple of 16 bytes (8 halves)", file, line, func);
    typedef fragment<Use, M, N, K, T, L> F;
    for (int r = 0; r < F::rows; ++r)
        for (int c = 0; c < F::cols; ++c)
            f.x[r * F::cols + c] = (T)(__is_same(L, row_major) ? p[(unsigned long)r * ldm + c] : p[(unsigned long)c * ldm + r]);
}

// An accumulator: this lane's share, from a row- or column-major tile.
template <int M, int N, int K, class T>
static __forceinline__ void load_matrix_sync(fragment<accumulator, M, N, K, T>& f, const T* p, unsigned ldm, layout_t layout,
                                             const char* file = __builtin_FILE(), int line = __builtin_LINE(),
                                             const char* func = __builtin_FUNCTION()) {
    __syncwarp();
    detail::check(((unsigned long)p & 31u) == 0, "wmma::load_matrix_sync: the pointer must be 32-byte (256-bit) aligned", file, line, func);
    detail::check((ldm * sizeof(T)) % 16 == 0, "wmma::load_matrix_sync: ldm must be a multiple of 16 bytes", file, line, func);
    typedef fragment<accumulator, M, N, K, T> F;
    unsigned first = (detail::lane() % 32) * F::num_elements;
    for (int i = 0; i < F::num_elements; ++i) {
        int r = (first + i) / F::cols, c = (first + i) % F::cols;
        f.x[i] = layout == mem_row_major ? p[(unsigned long)r * ldm + c] : p[(unsigned long)c * ldm + r];
    }
}

template <int M, int N, int K, class T>
static __forceinline__ void store_matrix_sync(T* p, const fragment<accumulator, M, N, K, T>& f, unsigned ldm, layout_t layout,
                                              const char* file = __builtin_FILE(), int line = __builtin_LINE(),
                                              const char* func = __builtin_FUNCTION()) {
    __syncwarp();
    detail::check(((unsigned long)p & 31u) == 0, "wmma::store_matrix_sync: the pointer must be 32-byte (256-bit) aligned", file, line, func);
    detail::check((ldm * sizeof(T)) % 16 == 0, "wmma::store_matrix_sync: ldm must be a multiple of 16 bytes", file, line, func);
    typedef fragment<accumulator, M, N, K, T> F;
    unsigned first = (detail::lane() % 32) * F::num_elements;
    for (int i = 0; i < F::num_elements; ++i) {
        int r = (first + i) / F::cols, c = (first + i) % F::cols;
        if (layout == mem_row_major) p[(unsigned long)r * ldm + c] = f.x[i];
        else p[(unsigned long)c * ldm + r] = f.x[i];
    }
}

// D = A * B + C, this lane's share of D from the whole of A and B.
template <int M, int N, int K, class TA, class LA, class TB, class LB, class TC, class TD>
static __forceinline__ void mma_sync(fragment<accumulator, M, N, K, TD>& d, const fragment<matrix_a, M, N, K, TA, LA>& a,
                                     const fragment<matrix_b, M, N, K, TB, LB>& b, const fragment<accumulator, M, N, K, TC>& c,
                                     bool satf = false) {
    static_assert(__is_same(TA, TB), "A and B hold the same type (__half or __nv_bfloat16)");
    __syncwarp();
    typedef fragment<accumulator, M, N, K, TD> F;
    unsigned first = (detail::lane() % 32) * F::num_elements;
    for (int i = 0; i < F::num_elements; ++i) {
        int r = (first + i) / N, col = (first + i) % N;
        float acc = (float)c.x[i];
        for (int k = 0; k < K; ++k) acc += (float)a.x[r * K + k] * (float)b.x[k * N + col];
        if (satf) acc = acc != acc ? 0.0f : fminf(fmaxf(acc, -3.4028235e38f), 3.4028235e38f);
        d.x[i] = (TD)acc;
    }
}
} // namespace wmma
} // namespace nvcuda

#endif
