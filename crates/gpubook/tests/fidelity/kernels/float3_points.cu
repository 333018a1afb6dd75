// @feature: 12-byte elements: a float3 buffer of points, summed coordinate by coordinate
// @launch: coordinate_sums grid=1 block=128 float3[100]:iota f32[100]:uninit i32=100
// @expect: sums[i] = 9 * i + 3
extern "C" __global__ void coordinate_sums(const float3* p, float* sums, int n) {
    int i = threadIdx.x;
    if (i < n) sums[i] = p[i].x + p[i].y + p[i].z;
}
