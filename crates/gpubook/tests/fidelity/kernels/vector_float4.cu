// @feature: float4 loads and stores (one 16-byte access per thread) on float4 buffers
// @launch: twice grid=2 block=128 float4[256]:iota float4[256]:uninit
// @expect: out[i] = 2 * i
extern "C" __global__ void twice(const float4* in, float4* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 v = in[i];
    out[i] = make_float4(2.0f * v.x, 2.0f * v.y, 2.0f * v.z, 2.0f * v.w);
}
