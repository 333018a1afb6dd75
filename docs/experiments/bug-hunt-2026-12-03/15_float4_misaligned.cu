// gpubook run 15_float4_misaligned.cu --kernel shifted --grid 1 --block 64 --arg f32[260]:iota --arg f32[256]:zeros --mode check
// BUG: vectorised copy of in[1..256] via float4 -- in+1 is not 16-byte aligned
extern "C" __global__ void shifted(const float* in, float* out) {
    int t = threadIdx.x;
    const float4* src = reinterpret_cast<const float4*>(in + 1);
    float4 v = src[t];
    reinterpret_cast<float4*>(out)[t] = v;
}
