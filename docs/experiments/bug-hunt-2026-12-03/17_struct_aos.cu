// gpubook run 17_struct_aos.cu --kernel norm3 --grid 1 --block 64 --arg f32[192]:iota --arg f32[64]:zeros --arg i32=64 --mode check
// BUG: points stored as packed xyz (3 floats each), kernel reads them through a 16-byte aligned struct (float3 padded to 4)
struct __align__(16) P { float x, y, z; };
extern "C" __global__ void norm3(const float* pts, float* out, int n) {
    int i = threadIdx.x;
    const P* p = reinterpret_cast<const P*>(pts);
    if (i < n) { P q = p[i]; out[i] = sqrtf(q.x * q.x + q.y * q.y + q.z * q.z); }
}
