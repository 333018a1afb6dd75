// __align__(n) on a struct, the 3- and 4-element vectors of the wider base types (double4,
// longlong4, ulong3, char3), clock_t and clock64(), and placement new with no #include.
// launch: types_and_layout grid=1 block=1
// out: int 9
// expect: 16 32 32 24 3 10 1 42 12
// alignof(Pair16) = 16; sizeof(double4) = 32, sizeof(longlong4) = 32, sizeof(ulong3) = 24,
// sizeof(char3) = 3; double4 components summed = 10; clock64() moved forward = 1; placement new
// constructed 42; sizeof(int3) = 12.

struct __align__(16) Pair16 {
    float a, b;
};

struct Answer {
    int value;
    __device__ Answer(int v) : value(v) {}
};

extern "C" __global__ void types_and_layout(int* out) {
    out[0] = (int)alignof(Pair16);
    out[1] = (int)sizeof(double4);
    out[2] = (int)sizeof(longlong4);
    out[3] = (int)sizeof(ulong3);
    out[4] = (int)sizeof(char3);
    double4 d = make_double4(1.0, 2.0, 3.0, 4.0);
    longlong4 l = make_longlong4(1, 2, 3, 4);
    out[5] = (int)(d.x + d.y + d.z + d.w) + (int)(l.x - l.x);
    clock_t start = clock();
    long long t0 = clock64();
    volatile int spin = 0;
    for (int i = 0; i < 1000; i++) spin += i;
    long long t1 = clock64();
    out[6] = (t1 > t0 && start >= 0) ? 1 : 0;
    alignas(Answer) unsigned char storage[sizeof(Answer)];
    Answer* a = new (storage) Answer(42);
    out[7] = a->value;
    out[8] = (int)sizeof(int3);
}
