// f16/bf16 through inline PTX (NVRTC has no cuda_fp16.h without the toolkit's headers);
// these are the instructions cuda_fp16.h's intrinsics emit.
__device__ unsigned short f2h(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ unsigned short f2h_rz(float f) { unsigned short h; asm("cvt.rz.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ unsigned short f2bf(float f) { unsigned short h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ float h2f(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
extern "C" __global__ void f16_math(const float* a, const float* b, unsigned short* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned short x = f2h(a[i] * 8.0f), y = f2h(b[i]);
    unsigned short s, m, f, bm, ba;
    asm("add.f16 %0, %1, %2;" : "=h"(s) : "h"(x), "h"(y));
    asm("mul.f16 %0, %1, %2;" : "=h"(m) : "h"(x), "h"(y));
    asm("fma.rn.f16 %0, %1, %2, %1;" : "=h"(f) : "h"(x), "h"(y));
    unsigned p = ((unsigned)y << 16) | x, q = ((unsigned)x << 16) | y, r;
    asm("fma.rn.f16x2 %0, %1, %2, %1;" : "=r"(r) : "r"(p), "r"(q));
    unsigned short bx = f2bf(a[i]), by = f2bf(b[i] * 3.0f);
    asm("mul.rn.bf16 %0, %1, %2;" : "=h"(bm) : "h"(bx), "h"(by));
    asm("add.rn.bf16 %0, %1, %2;" : "=h"(ba) : "h"(bx), "h"(by));
    unsigned short* o = out + i * 8;
    o[0] = s; o[1] = m; o[2] = f; o[3] = (unsigned short)(r & 0xffff);
    o[4] = (unsigned short)(r >> 16); o[5] = bm; o[6] = ba; o[7] = f2h_rz(h2f(x) * 1000.0f + a[i]);
}
