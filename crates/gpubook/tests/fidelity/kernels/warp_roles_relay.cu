// @feature: warp roles across blocks: warp 0 of block 0 produces, block 1 waits for its flag,
// doubles the data and raises a second flag, and warp 1 of block 0 waits for that one and reads
// both (the hand-over from warp 0 to warp 1 goes through block 1: fences, volatile flags)
// @launch: relay grid=2 block=64 f32[32]:uninit f32[32]:uninit u32[2]:zeros f32[32]:uninit
// @expect: out[i] = 3 * i
extern "C" __global__ void relay(float* data, float* doubled, unsigned* flags, float* out) {
    volatile unsigned* produced = &flags[0];
    volatile unsigned* forwarded = &flags[1];
    unsigned lane = threadIdx.x % 32;
    if (blockIdx.x == 0 && threadIdx.x < 32) { // the producer warp
        data[lane] = float(lane);
        __syncwarp(); // every lane's data, then one lane's fence and flag announce it all
        if (lane == 0) {
            __threadfence();
            *produced = 1;
        }
    } else if (blockIdx.x == 1 && threadIdx.x < 32) { // the forwarding block's first warp
        while (*produced == 0) {
        }
        doubled[lane] = 2.0f * ((volatile float*)data)[lane];
        __syncwarp();
        if (lane == 0) {
            __threadfence();
            *forwarded = 1;
        }
    } else if (blockIdx.x == 0) { // the consumer warp
        while (*forwarded == 0) {
        }
        out[lane] = ((volatile float*)data)[lane] + ((volatile float*)doubled)[lane];
    }
}
