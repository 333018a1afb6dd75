// The storage and rounding both cuda_fp16.h and cuda_bf16.h build on: 16-bit floats kept as
// their bits, converted to and from float with round-to-nearest-even as a GPU's cvt.rn does.
// Arithmetic runs in float and rounds once, which gives the correctly rounded half (or
// bfloat16) result for + - * / and fma's product-sum, as the GPU's native instructions do.
#ifndef GPUBOOK_LOW_PRECISION_H
#define GPUBOOK_LOW_PRECISION_H

namespace gpubook {
namespace lowp {
static __forceinline__ unsigned f32_bits(float f) { unsigned u; __builtin_memcpy(&u, &f, 4); return u; }
static __forceinline__ float bits_f32(unsigned u) { float f; __builtin_memcpy(&f, &u, 4); return f; }

// IEEE binary16, round to nearest even; NaN stays NaN, overflow goes to infinity.
static __forceinline__ unsigned short float_to_half(float f) {
    unsigned u = f32_bits(f);
    unsigned sign = (u >> 16) & 0x8000u;
    unsigned abs = u & 0x7fffffffu;
    if (abs > 0x7f800000u) return (unsigned short)(sign | 0x7e00u);           // NaN
    if (abs >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u);          // rounds past 65504
    if (abs < 0x38800000u) {                                                  // subnormal or zero
        // Scale into the subnormal grid (2^-24 steps) and let float addition round it.
        float scaled = bits_f32(abs) + 0.5f; // 0.5 = 2^-1: the bits below 2^-24 round away (RNE)
        return (unsigned short)(sign | (f32_bits(scaled) - 0x3f000000u));
    }
    unsigned mant_odd = (abs >> 13) & 1u;
    abs += 0xc8000fffu + mant_odd; // rebias exponent (-112 << 23) and round to nearest even
    return (unsigned short)(sign | (abs >> 13));
}
static __forceinline__ float half_to_float(unsigned short h) {
    unsigned sign = unsigned(h & 0x8000u) << 16;
    unsigned exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0x1f) return bits_f32(sign | 0x7f800000u | (mant << 13));     // inf, NaN
    if (exp == 0) {                                                           // zero, subnormal
        float v = float(mant) * 5.9604644775390625e-8f;                       // mant * 2^-24
        return sign ? -v : v;
    }
    return bits_f32(sign | ((exp + 112) << 23) | (mant << 13));
}

// bfloat16: the top half of a float, rounded to nearest even.
static __forceinline__ unsigned short float_to_bf16(float f) {
    unsigned u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u); // quiet NaN
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
}
static __forceinline__ float bf16_to_float(unsigned short b) { return bits_f32(unsigned(b) << 16); }
} // namespace lowp
} // namespace gpubook

#endif
