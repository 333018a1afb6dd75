// CUDA's vector types (float4 & co.) with CUDA's sizes and alignments, and make_* helpers.
#ifndef GPUBOOK_VECTOR_TYPES_H
#define GPUBOOK_VECTOR_TYPES_H

// GPUBOOK_VEC{1,2,3,4}(name, scalar, align) define `struct name` and `make_name(...)`.
#define GPUBOOK_VEC1(N, T, A)                                                          \
    struct __attribute__((aligned(A))) N { T x; };                                     \
    static inline N make_##N(T x) { N v; v.x = x; return v; }
#define GPUBOOK_VEC2(N, T, A)                                                          \
    struct __attribute__((aligned(A))) N { T x, y; };                                  \
    static inline N make_##N(T x, T y) { N v; v.x = x; v.y = y; return v; }
#define GPUBOOK_VEC3(N, T, A)                                                          \
    struct __attribute__((aligned(A))) N { T x, y, z; };                               \
    static inline N make_##N(T x, T y, T z) { N v; v.x = x; v.y = y; v.z = z; return v; }
#define GPUBOOK_VEC4(N, T, A)                                                          \
    struct __attribute__((aligned(A))) N { T x, y, z, w; };                            \
    static inline N make_##N(T x, T y, T z, T w) {                                     \
        N v; v.x = x; v.y = y; v.z = z; v.w = w; return v;                             \
    }

// Alignments follow CUDA's vector_types.h: 2- and 4-element vectors are aligned to their
// size (up to 16 bytes: double4 and longlong4 are 16-byte aligned), 3-element vectors to their
// scalar. uint3 is defined below, with dim3.
GPUBOOK_VEC1(char1, signed char, 1)   GPUBOOK_VEC2(char2, signed char, 2)
GPUBOOK_VEC3(char3, signed char, 1)   GPUBOOK_VEC4(char4, signed char, 4)
GPUBOOK_VEC1(uchar1, unsigned char, 1) GPUBOOK_VEC2(uchar2, unsigned char, 2)
GPUBOOK_VEC3(uchar3, unsigned char, 1) GPUBOOK_VEC4(uchar4, unsigned char, 4)
GPUBOOK_VEC1(short1, short, 2)        GPUBOOK_VEC2(short2, short, 4)
GPUBOOK_VEC3(short3, short, 2)        GPUBOOK_VEC4(short4, short, 8)
GPUBOOK_VEC1(ushort1, unsigned short, 2) GPUBOOK_VEC2(ushort2, unsigned short, 4)
GPUBOOK_VEC3(ushort3, unsigned short, 2) GPUBOOK_VEC4(ushort4, unsigned short, 8)
GPUBOOK_VEC1(int1, int, 4)            GPUBOOK_VEC2(int2, int, 8)
GPUBOOK_VEC3(int3, int, 4)            GPUBOOK_VEC4(int4, int, 16)
GPUBOOK_VEC1(uint1, unsigned, 4)      GPUBOOK_VEC2(uint2, unsigned, 8)
GPUBOOK_VEC4(uint4, unsigned, 16)
GPUBOOK_VEC1(long1, long, 8)          GPUBOOK_VEC2(long2, long, 16)
GPUBOOK_VEC3(long3, long, 8)          GPUBOOK_VEC4(long4, long, 16)
GPUBOOK_VEC1(ulong1, unsigned long, 8) GPUBOOK_VEC2(ulong2, unsigned long, 16)
GPUBOOK_VEC3(ulong3, unsigned long, 8) GPUBOOK_VEC4(ulong4, unsigned long, 16)
GPUBOOK_VEC1(longlong1, long long, 8) GPUBOOK_VEC2(longlong2, long long, 16)
GPUBOOK_VEC3(longlong3, long long, 8) GPUBOOK_VEC4(longlong4, long long, 16)
GPUBOOK_VEC1(ulonglong1, unsigned long long, 8) GPUBOOK_VEC2(ulonglong2, unsigned long long, 16)
GPUBOOK_VEC3(ulonglong3, unsigned long long, 8) GPUBOOK_VEC4(ulonglong4, unsigned long long, 16)
GPUBOOK_VEC1(float1, float, 4)        GPUBOOK_VEC2(float2, float, 8)
GPUBOOK_VEC3(float3, float, 4)        GPUBOOK_VEC4(float4, float, 16)
GPUBOOK_VEC1(double1, double, 8)      GPUBOOK_VEC2(double2, double, 16)
GPUBOOK_VEC3(double3, double, 8)      GPUBOOK_VEC4(double4, double, 16)

// uint3 is what threadIdx and blockIdx are; dim3 is what blockDim and gridDim are, and
// defaults missing dimensions to 1 as CUDA's does.
struct uint3 { unsigned x, y, z; };
static inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) { uint3 v = {x, y, z}; return v; }
struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};

#undef GPUBOOK_VEC1
#undef GPUBOOK_VEC2
#undef GPUBOOK_VEC3
#undef GPUBOOK_VEC4

#endif
