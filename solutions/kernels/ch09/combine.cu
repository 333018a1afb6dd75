// The expert stage and the combine of a mixture-of-experts layer, around a send buffer of
// messages: each message is a 16-byte header followed by one row of `hidden` floats.
//
//   | src_token | k | weight (float bits) | expert | payload[0] ... payload[hidden-1] |
//
// Row m of the experts' work is token m / top_k's copy for its (m % top_k)-th expert.

// ANCHOR: expert
// The expert's computation, a stand-in for its MLP: y = relu(x * scale[e] + bias[e]) per channel.
// Row m is written at y + m * ld: `ld` (the leading dimension) lets the rows sit inside a larger
// structure, such as the payload slots of the send buffer's messages.
extern "C" __global__ void expert_forward(const float* x, const int* expert_of, const float* scale, const float* bias,
                                         float* y, int ld, int rows, int hidden) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int m = blockIdx.y;
    if (c >= hidden || m >= rows) return;
    int e = expert_of[m];
    float v = x[m * hidden + c] * scale[e * hidden + c] + bias[e * hidden + c];
    y[m * ld + c] = v > 0.0f ? v : 0.0f;
}
// ANCHOR_END: expert

// Each message's header: where its row goes back to and with what gate weight. (In DeepEP the
// dispatch leaves this information behind for the combine.)
extern "C" __global__ void write_headers(int* send, int msg_words, const float* weight, const int* expert_of, int rows,
                                         int top_k) {
    int m = blockIdx.x * blockDim.x + threadIdx.x;
    if (m >= rows) return;
    int* h = send + m * msg_words;
    h[0] = m / top_k;
    h[1] = m % top_k;
    h[2] = __float_as_int(weight[m]);
    h[3] = expert_of[m];
}

// ANCHOR: combine
// out[t][c] = sum over k of weight * payload[c] of token t's k-th message, added in k order, so
// the result does not depend on where the payloads came from: the copy path and the zero-copy
// path give the same bits.
extern "C" __global__ void combine(const int* send, int msg_words, float* out, int tokens, int top_k, int hidden) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int t = blockIdx.y;
    if (c >= hidden || t >= tokens) return;
    float acc = 0.0f;
    for (int k = 0; k < top_k; k++) {
        const int* msg = send + (t * top_k + k) * msg_words;
        const float* payload = (const float*)(msg + 4);
        acc += __int_as_float(msg[2]) * payload[c];
    }
    out[t * hidden + c] = acc;
}
// ANCHOR_END: combine
