// @feature: single-precision math functions (sqrtf, expf, logf, sinf) into a float4 buffer
// @launch: functions grid=1 block=256 float4[256]:uninit
// @expect: out[i] = i % 4 == 0 ? sqrt(idiv(i, 4) / 100 + 0.5) : i % 4 == 1 ? exp(-(idiv(i, 4) / 100 + 0.5)) : i % 4 == 2 ? log(idiv(i, 4) / 100 + 0.5) : sin(idiv(i, 4) / 100 + 0.5)
// @tolerance: 1e-5
extern "C" __global__ void functions(float4* out) {
    float x = threadIdx.x / 100.0f + 0.5f;
    out[threadIdx.x] = make_float4(sqrtf(x), expf(-x), logf(x), sinf(x));
}
