// mma.h's other shapes: m32n8k16 with __nv_bfloat16 inputs, m8n32k16 with __half, each one warp,
// accumulators zeroed and stored row-major.
// launch: wmma_shapes grid=1 block=32
// out: float 8
// expect: 4.375 1.875 3.375 -0.875 -10 0 9 6
// m32n8k16: A[r][c] = ((7r + 3c) % 9 - 4) / 2, B[r][c] = ((r + 5c) % 11 - 5) / 4, exact in
// bfloat16 and every sum exact in float: out[0] is the sum of D, out[1] D[0][0], out[2] D[31][7],
// out[3] D[17][3]. m8n32k16: A[r][c] = (5r + c) % 6 - 3, B[r][c] = (r + 2c) % 5 - 2: out[4] the
// sum, out[5] D[0][0], out[6] D[7][31], out[7] D[3][20].
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

extern "C" __global__ void wmma_shapes(float* out) {
    __shared__ __align__(32) __nv_bfloat16 a2[32 * 16];
    __shared__ __align__(32) __nv_bfloat16 b2[16 * 8];
    __shared__ __align__(32) half a3[8 * 16];
    __shared__ __align__(32) half b3[16 * 32];
    __shared__ __align__(32) float d2[32 * 8];
    __shared__ __align__(32) float d3[8 * 32];
    int t = threadIdx.x;
    for (int i = t; i < 32 * 16; i += 32) a2[i] = __float2bfloat16(((i / 16 * 7 + i % 16 * 3) % 9 - 4) * 0.5f);
    for (int i = t; i < 16 * 8; i += 32) b2[i] = __float2bfloat16(((i / 8 + i % 8 * 5) % 11 - 5) * 0.25f);
    for (int i = t; i < 8 * 16; i += 32) a3[i] = __float2half((float)((i / 16 * 5 + i % 16) % 6 - 3));
    for (int i = t; i < 16 * 32; i += 32) b3[i] = __float2half((float)((i / 32 + i % 32 * 2) % 5 - 2));
    __syncthreads();
    wmma::fragment<wmma::matrix_a, 32, 8, 16, __nv_bfloat16, wmma::row_major> fa2;
    wmma::fragment<wmma::matrix_b, 32, 8, 16, __nv_bfloat16, wmma::row_major> fb2;
    wmma::fragment<wmma::accumulator, 32, 8, 16, float> acc2;
    wmma::fill_fragment(acc2, 0.0f);
    wmma::load_matrix_sync(fa2, a2, 16);
    wmma::load_matrix_sync(fb2, b2, 8);
    wmma::mma_sync(acc2, fa2, fb2, acc2);
    wmma::store_matrix_sync(d2, acc2, 8, wmma::mem_row_major);
    wmma::fragment<wmma::matrix_a, 8, 32, 16, half, wmma::row_major> fa3;
    wmma::fragment<wmma::matrix_b, 8, 32, 16, half, wmma::row_major> fb3;
    wmma::fragment<wmma::accumulator, 8, 32, 16, float> acc3;
    wmma::fill_fragment(acc3, 0.0f);
    wmma::load_matrix_sync(fa3, a3, 16);
    wmma::load_matrix_sync(fb3, b3, 32);
    wmma::mma_sync(acc3, fa3, fb3, acc3);
    wmma::store_matrix_sync(d3, acc3, 32, wmma::mem_row_major);
    __syncthreads();
    if (t != 0) return;
    float s2 = 0.0f, s3 = 0.0f;
    for (int i = 0; i < 32 * 8; ++i) s2 += d2[i];
    for (int i = 0; i < 8 * 32; ++i) s3 += d3[i];
    out[0] = s2;
    out[1] = d2[0];
    out[2] = d2[31 * 8 + 7];
    out[3] = d2[17 * 8 + 3];
    out[4] = s3;
    out[5] = d3[0];
    out[6] = d3[7 * 32 + 31];
    out[7] = d3[3 * 32 + 20];
}
