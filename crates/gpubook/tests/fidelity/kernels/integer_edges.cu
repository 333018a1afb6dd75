// @feature: integer edge cases: wrap-around, division and shifts of negatives, bit intrinsics, narrowing
// @launch: edges grid=1 block=1 i32[16]:uninit i32=-7 i32=2 i32=2147483647
// @expect: out[0] = -2147483648
// @expect: out[1] = -3
// @expect: out[2] = -1
// @expect: out[3] = -3
// @expect: out[4] = 2147483647
// @expect: out[5] = -4
// @expect: out[6] = 8
// @expect: out[7] = 31
// @expect: out[8] = 9
// @expect: out[9] = -2147483648
// @expect: out[10] = -7
// @expect: out[11] = 7
// @expect: out[12] = 2
// @expect: out[13] = 44
// @expect: out[14] = -25536
// @expect: out[15] = -2
extern "C" __global__ void edges(int* out, int a, int b, int big) {
    out[0] = (int)((unsigned)big + 1u);     // INT_MAX + 1 wraps
    out[1] = a / b;                         // truncates toward zero
    out[2] = a % b;                         // takes the dividend's sign
    out[3] = -a / -b;
    out[4] = (int)((unsigned)(a - a - 1) >> 1);
    out[5] = (a - 1) >> 1;                  // arithmetic shift of -8
    out[6] = __popc(0xF0F0u + (unsigned)(a - a));
    out[7] = __clz(b - 1);
    out[8] = __ffs(b << 7);
    out[9] = (int)__brev((unsigned)(b - 1));
    out[10] = min(a, b);
    out[11] = abs(a);
    out[12] = __mulhi(0x40000000, b * 4);
    out[13] = (int)(unsigned char)(300 + a - a);
    out[14] = (int)(short)(40000 + a - a);
    out[15] = (int)(a / 2.5f);              // -2.8 truncates toward zero
}
