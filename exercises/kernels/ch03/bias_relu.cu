// ANCHOR: kernel
// x = max(x + bias, 0), in place: a bias and a ReLU, as after a layer of a neural network. It
// must work for any n with ANY grid, so it uses a grid-stride loop: the grid's threads sweep
// over the array together, each moving on by the number of threads in the grid, until every
// element has been visited exactly once.
extern "C" __global__ void bias_relu(float* x, float bias, int n) {
    // TODO: start at this thread's global index and step by the number of threads in the
    // grid (gridDim.x * blockDim.x) while i < n, updating x[i] = fmaxf(x[i] + bias, 0.0f).
}
// ANCHOR_END: kernel
