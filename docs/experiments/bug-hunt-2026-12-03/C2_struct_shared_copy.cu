// gpubook run C2_struct_shared_copy.cu --kernel best --grid 1 --block 64 --arg f32[64]:random --arg f32[64]:zeros --arg i32[64]:zeros --mode check
// CORRECT: argmax with a padded struct {char tag; int idx; double val;} kept in shared memory and copied WHOLE
// (fields written one by one, so padding bytes are never written)
struct Cand { char tag; int idx; double val; };
extern "C" __global__ void best(const float* in, float* outv, int* outi) {
    __shared__ Cand c[64];
    int t = threadIdx.x;
    c[t].tag = 'c'; c[t].idx = t; c[t].val = in[t];
    __syncthreads();
    for (int st = 32; st > 0; st >>= 1) {
        if (t < st && c[t + st].val > c[t].val) { Cand tmp = c[t + st]; c[t] = tmp; }
        __syncthreads();
    }
    Cand w = c[0];                  // whole-struct copy (padding included)
    outv[t] = (float)w.val;
    outi[t] = w.idx;
}
