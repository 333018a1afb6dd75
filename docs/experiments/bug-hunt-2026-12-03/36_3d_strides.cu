// gpubook run 36_3d_strides.cu --kernel scale3 --grid 1,1,4 --block 8,4,1 --arg f32[128]:iota --arg i32=8 --arg i32=4 --arg i32=4 --mode check
// volume nx=8, ny=4, nz=4 stored x fastest. BUG: z stride written as nx*nz instead of nx*ny ... (equal here) and y stride ny instead of nx
extern "C" __global__ void scale3(float* v, int nx, int ny, int nz) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < nx && y < ny && z < nz) v[z * nx * ny + y * ny + x] *= 2.f;
}
