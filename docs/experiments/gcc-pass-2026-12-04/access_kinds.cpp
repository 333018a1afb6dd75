// Kinds of access for tsan-parity.sh: what ThreadSanitizer's pass calls for each, and what
// the production draft of the plugin (production-draft.patch) calls instead.
struct Bits { unsigned a : 3, b : 5; unsigned short c : 9; };
struct __attribute__((packed)) Packed { char c; int i; };
struct F3 { float x, y, z; };
struct F4 { float x, y, z, w; } __attribute__((aligned(16)));
struct Big { double d[4]; };
int g_global;
struct Acc { float v; void add(float x) { v += x; } __attribute__((noinline)) void add_out_of_line(float x) { v += x; } };
extern "C" {
void bitfield(Bits* p, int v) { p->b = v; }
int bitfield_read(const Bits* p) { return p->b + p->c; }
int packed(const Packed* p) { return p->i; }
void f3copy(F3* d, const F3* s) { *d = *s; }
void f4copy(F4* d, const F4* s) { *d = *s; }
void bigcopy(Big* d, const Big* s) { *d = *s; }
int vol(volatile int* p) { return *p; }
void volw(volatile int* p) { *p = 1; }
int glob() { return g_global++; }
int twice(const int* a, int i) { return a[i] * a[i]; }
void memcpy4(char* d, const char* s) { __builtin_memcpy(d, s, 4); }
void memcpy16(char* d, const char* s) { __builtin_memcpy(d, s, 16); }
int atom(int* p) { return __atomic_fetch_add(p, 1, __ATOMIC_RELAXED); }
int local_escape(int i) { int a[8]; int* p = a; for (int k = 0; k < 8; k++) p[k] = k; return p[i & 7]; }
double dbl(const double* p, long i) { return p[i]; }
float method_on_local(const float* p, int n) { Acc a{0}; for (int i = 0; i < n; i++) a.add(p[i]); return a.v; }
float method_out_of_line(const float* p, int n) { Acc a{0}; for (int i = 0; i < n; i++) a.add_out_of_line(p[i]); return a.v; }
void chars(unsigned char* p, int n) { for (int i = 0; i < n; i++) p[i] = (unsigned char)i; }
}
