// The experts: each a small FFN, y = W2 relu(W1 x) with W1 ffn x hidden and W2 hidden x ffn (row
// major). One block per received token; for each of its experts on this rank (recv_topk_idx >= 0,
// a local expert number), the block computes the FFN into expert_out[(slot * topk + k)]. Rows for
// experts elsewhere are left alone. Dynamic shared memory: (hidden + ffn) floats.
extern "C" __global__ void moe_experts(const float* recv_x, const int* recv_topk_idx, const float* w1, const float* w2,
                                       float* expert_out, int num_recv, int hidden, int ffn, int topk) {
    extern __shared__ float smem[];
    float* xs = smem;            // the token's row
    float* act = smem + hidden;  // relu(W1 x)
    long long slot = blockIdx.x;
    for (int h = threadIdx.x; h < hidden; h += blockDim.x) xs[h] = recv_x[slot * hidden + h];
    __syncthreads();
    for (int k = 0; k < topk; ++k) {
        int e = recv_topk_idx[slot * topk + k];
        if (e < 0) continue;  // the same for the whole block
        const float* a = w1 + (long long)e * ffn * hidden;
        const float* b = w2 + (long long)e * hidden * ffn;
        for (int f = threadIdx.x; f < ffn; f += blockDim.x) {
            float z = 0.0f;
            for (int h = 0; h < hidden; ++h) z += a[(long long)f * hidden + h] * xs[h];
            act[f] = z > 0.0f ? z : 0.0f;
        }
        __syncthreads();
        float* y = expert_out + (slot * topk + k) * hidden;
        for (int h = threadIdx.x; h < hidden; h += blockDim.x) {
            float z = 0.0f;
            for (int f = 0; f < ffn; ++f) z += b[(long long)h * ffn + f] * act[f];
            y[h] = z;
        }
        __syncthreads();  // act is rewritten for the next expert
    }
}
