// The computation of a DualPipe chunk pair, for chapter 11 and `gpubook overlap`: each of the
// pair's four computations (attention and the experts' MLP, forward and backward) is one launch
// of `layer`. Its communication is a device-to-device copy, issued from the host.

// ANCHOR: layer
// y = a·x + b, after `rounds` of work that leaves v equal to x: v·½ + x·½ is x again, exactly,
// for every float x (halving and doubling are exact). The loop stands for a layer's FLOPs: it
// makes the kernel as slow as asked without more memory traffic, and the result stays checkable.
// A grid-stride loop, so the host chooses how many SMs' worth of blocks the layer occupies.
extern "C" __global__ void layer(const float* x, float* y, int n, float a, float b, int rounds) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float v = x[i];
        float half_x = 0.5f * v;
        for (int r = 0; r < rounds; ++r) v = fmaf(v, 0.5f, half_x);
        y[i] = a * v + b;
    }
}
// ANCHOR_END: layer
