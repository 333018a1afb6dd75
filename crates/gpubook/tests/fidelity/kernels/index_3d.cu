// @feature: 3D indexing: a 10 x 6 x 5 volume covered by 4 x 4 x 2 blocks
// @launch: volume grid=3,2,3 block=4,4,2 i32[300]:uninit i32=10 i32=6 i32=5
// @expect: out[i] = i % 10 + 100 * (idiv(i, 10) % 6) + 10000 * idiv(i, 60)
extern "C" __global__ void volume(int* out, int w, int h, int d) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < w && y < h && z < d) out[(z * h + y) * w + x] = x + 100 * y + 10000 * z;
}
