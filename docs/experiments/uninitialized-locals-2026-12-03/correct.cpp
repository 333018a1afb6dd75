// Correct: every read comes after a store on every path that can run (8 functions); maxloop's
// m is set on the first pass of a loop that runs at least once (n > i >= 0).
extern "C" void fine(const float* in, float* out, int t, int n) {
    float v;
    if (t < n) v = in[t]; else v = 0;
    out[t] = v * 2;
}
extern "C" void corr(const float* in, float* out, int t, int n) {
    float v;
    if (t < n) v = in[t];
    out[0] = 1;
    if (t < n) out[t] = v * 2;
}
extern "C" void corr2(const float* in, float* out, int t, int n, int m) {
    float v;
    bool ok = t < n && t < m;
    if (ok) v = in[t];
    for (int k = 0; k < m; k++) out[k] += 1;
    if (ok) out[t] = v * 2;
}
extern "C" void first_iter(const float* in, float* out, int i, int n) {
    if (i >= n) return;
    float v;
    for (int k = 0; k < 4; k++) { if (k == 0) v = in[i]; else v += in[i+k]; }
    out[i] = v;
}
extern "C" void maxloop(const float* in, float* out, int i, int n) {
    if (i >= n) return;
    float m;
    bool first = true;
    for (int k = 0; k < n; k++) { if (first || in[k] > m) { m = in[k]; first = false; } }
    out[i] = m;
}
extern "C" void sw(const float* in, float* out, int i, int n, int op) {
    float v;
    switch (op) { case 0: v = in[i]; break; case 1: v = -in[i]; break; default: return; }
    out[i] = v;
}
extern "C" void tile(const float* in, float* out, int i, int n, int tiles) {
    float acc;
    for (int t = 0; t < tiles; t++) {
        float part = 0;
        for (int k = 0; k < 4; k++) part += in[t*4+k];
        if (t == 0) acc = part; else acc += part;
    }
    if (tiles > 0) out[i] = acc;
}
extern "C" void idx(const float* in, float* out, int i, int n) {
    int j;
    if (i < n) j = i; 
    if (i < n) out[j] = in[j];
}
