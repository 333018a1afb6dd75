// Buggy: a local read before any store on some or all paths (9 functions). For
// docs/measurements.md, "Locals read before a store"; run.sh compiles them with check mode's flags.
extern "C" void dot8(const float* in, float* out, int t) {
    float acc;
    for (int k = 0; k < 8; ++k) acc += in[t * 8 + k];
    out[t] = acc;
}
extern "C" void dotn(const float* in, float* out, int t, int n) {
    float acc;
    for (int k = 0; k < n; ++k) acc += in[t * n + k];
    out[t] = acc;
}
extern "C" void cond(const float* in, float* out, int t, int n) {
    float v;
    if (t < n) v = in[t];
    out[t] = v * 2;
}
struct S { float a, b; };
extern "C" void part(const float* in, float* out, int t) {
    S s; s.a = in[t];
    out[t] = s.a + s.b;
}
extern "C" void arr(const float* in, float* out, int t) {
    float r[4];
    for (int i = 0; i < 3; i++) r[i] = in[t+i];
    float sum = 0;
    for (int i = 0; i < 4; i++) sum += r[i];
    out[t] = sum;
}
extern "C" void dotn2(const float* in, float* out, int t, int n) {
    float acc;
    for (int k = 0; k < n; ++k) acc = acc + in[t * n + k];
    out[t] = acc > 0 ? acc : 0;
}
extern "C" void dotn3(const float* in, float* out, int t, int n) {
    float acc;
    for (int k = 0; k < n; ++k) { acc += in[t * n + k]; out[k] = acc; }
}
extern "C" void window(float* out, const float* in, int n, int i) {
    float sum;
    for (int k = 0; k < 4; k++) sum += i + k < n ? in[i + k] : 0.0f;
    if (i < n) out[i] = sum;
}
struct float4_ { float x, y, z, w; };
extern "C" void part4(float4_* out, const float* in, int i) {
    float4_ v; v.x = in[i]; v.y = in[i+1]; v.z = in[i+2];
    out[i] = v;
}
