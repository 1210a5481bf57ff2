// The approximate instructions measured over every f32 input on the GPU: for each form, the
// hardware instruction beside candidate models (computed in f64 and rounded once, as the
// executor's float::approx does), counting the inputs where they differ and the largest
// difference in ulps (distance in the ordered f32 encoding; a NaN matches any NaN).
//
//   nvcc -O3 -arch=sm_90 -o /tmp/approx scripts/probes/instructions/approx.cu && /tmp/approx
//
// One line per (form, model): FORM MODEL differing=N max_ulp=U first=...
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cmath>

enum { SIN, COS, EX2, LG2, RCP, RSQRT, SQRT, TANH, DIV_APPROX, DIV_FULL, NFUNC };
static const char *NAMES[] = {"sin", "cos", "ex2", "lg2", "rcp", "rsqrt", "sqrt", "tanh", "div.approx", "div.full"};

__device__ float hw(int f, int ftz, float x) {
  float r;
  if (ftz) {
    switch (f) {
    case SIN: asm("sin.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
    case COS: asm("cos.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
    case EX2: asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
    case LG2: asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
    case RCP: asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
    case RSQRT: asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
    case SQRT: asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
    case TANH: asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
    case DIV_APPROX: asm("div.approx.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(1.0f), "f"(x)); break;
    default: asm("div.full.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(1.0f), "f"(x)); break;
    }
  } else {
    switch (f) {
    case SIN: asm("sin.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
    case COS: asm("cos.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
    case EX2: asm("ex2.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
    case LG2: asm("lg2.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
    case RCP: asm("rcp.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
    case RSQRT: asm("rsqrt.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
    case SQRT: asm("sqrt.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
    case TANH: asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
    case DIV_APPROX: asm("div.approx.f32 %0, %1, %2;" : "=f"(r) : "f"(1.0f), "f"(x)); break;
    default: asm("div.full.f32 %0, %1, %2;" : "=f"(r) : "f"(1.0f), "f"(x)); break;
    }
  }
  return r;
}

__device__ float flush(float x) { return (fabsf(x) < 1.17549435e-38f) ? copysignf(0.0f, x) : x; }

// Model 0: the function in f64, rounded once. Model 1: sin/cos with the argument first
// reduced as x * (1/2pi) rounded toward zero in f32 (the range reduction the SFU is fed);
// others: the result rounded toward zero. Model 2: sin/cos reduced with round-to-nearest.
__device__ float model(int f, int ftz, float xf, int m) {
  if (ftz)
    xf = flush(xf);
  double x = xf, r;
  const double two_pi = 6.283185307179586476925286766559;
  if ((f == SIN || f == COS) && m > 0) {
    float t = m == 1 ? __fmul_rz(xf, 0.15915494309189533577f) : __fmul_rn(xf, 0.15915494309189533577f);
    x = two_pi * (double)t;
  }
  switch (f) {
  case SIN: r = sin(x); break;
  case COS: r = cos(x); break;
  case EX2: r = exp2(x); break;
  case LG2: r = x < 0 ? nan("") : log2(x); break;
  case RCP: case DIV_APPROX: case DIV_FULL: r = 1.0 / x; break;
  case RSQRT: r = 1.0 / sqrt(x); break;
  case SQRT: r = sqrt(x); break;
  default: r = tanh(x); break;
  }
  float o = (m == 1 && f != SIN && f != COS) ? __double2float_rz(r) : (float)r;
  return ftz ? flush(o) : o;
}

__device__ int64_t ordered(float v) {
  int32_t i = __float_as_int(v);
  return i < 0 ? -(int64_t)(i & 0x7fffffff) : (int64_t)i;
}

struct Stat {
  unsigned long long differing;
  unsigned long long max_ulp;
  unsigned first;
  unsigned long long hist[6]; // 1, 2, 3-4, 5-16, 17-256, more
};

// Each thread measures 64 consecutive inputs; a warp adds its counts up before one atomic.
__global__ void measure(int f, int ftz, int m, unsigned long long base, Stat *s) {
  unsigned long long t = base + (blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x) * 64;
  unsigned differing = 0, max_ulp = 0, first = 0xffffffffu, hist[6] = {0, 0, 0, 0, 0, 0};
  for (unsigned k = 0; k < 64; k++) {
    unsigned bits = (unsigned)(t + k);
    float x = __int_as_float(bits);
    float h = hw(f, ftz, x), g = model(f, ftz, x, m);
    if ((isnan(h) && isnan(g)) || __float_as_int(h) == __float_as_int(g))
      continue;
    long long d = ordered(h) - ordered(g);
    unsigned long long u = d < 0 ? -d : d;
    if (isnan(h) || isnan(g) || u > 0xffffffffull)
      u = 0xffffffffull;
    differing++;
    max_ulp = max(max_ulp, (unsigned)u);
    first = min(first, bits);
    hist[u <= 1 ? 0 : u <= 2 ? 1 : u <= 4 ? 2 : u <= 16 ? 3 : u <= 256 ? 4 : 5]++;
  }
  unsigned all = 0xffffffffu;
  differing = __reduce_add_sync(all, differing);
  max_ulp = __reduce_max_sync(all, max_ulp);
  first = __reduce_min_sync(all, first);
  for (int b = 0; b < 6; b++)
    hist[b] = __reduce_add_sync(all, hist[b]);
  if ((threadIdx.x & 31) == 0 && differing) {
    atomicAdd(&s->differing, (unsigned long long)differing);
    atomicMax(&s->max_ulp, (unsigned long long)max_ulp);
    atomicMin(&s->first, first);
    for (int b = 0; b < 6; b++)
      atomicAdd(&s->hist[b], (unsigned long long)hist[b]);
  }
}

__global__ void sample(int f, int ftz, unsigned *out, unsigned n, unsigned stride) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = __float_as_uint(hw(f, ftz, __uint_as_float(i * stride)));
}

int main() {
  Stat *s;
  cudaMallocManaged(&s, sizeof(Stat));
  for (int f = 0; f < NFUNC; f++)
    for (int ftz = 0; ftz < 2; ftz++) {
      if (f == TANH && ftz)
        continue;
      for (int m = 0; m < 3; m++) {
        if (m == 2 && f != SIN && f != COS)
          continue;
        *s = Stat{0, 0, 0xffffffffu, {0, 0, 0, 0, 0, 0}};
        measure<<<(1u << 26) / 256, 256>>>(f, ftz, m, 0, s);
        cudaDeviceSynchronize();
        printf("%s%s.f32 model%d differing=%llu max_ulp=%llu first=%08x hist=%llu,%llu,%llu,%llu,%llu,%llu\n",
               NAMES[f], ftz ? ".ftz" : "", m, s->differing, s->max_ulp, s->first, s->hist[0], s->hist[1],
               s->hist[2], s->hist[3], s->hist[4], s->hist[5]);
        fflush(stdout);
      }
    }
  // A sample of each hardware function over the whole encoding (every 65536th input) for
  // fitting models: sample-FORM.bin, 65536 u32 results.
  unsigned *o;
  cudaMallocManaged(&o, 65536 * 4);
  for (int f = 0; f < NFUNC; f++) {
    sample<<<256, 256>>>(f, 1, o, 65536, 65536);
    cudaDeviceSynchronize();
    char name[64];
    snprintf(name, sizeof name, "%s/sample-%s.bin", getenv("OUT") ? getenv("OUT") : ".", NAMES[f]);
    FILE *fp = fopen(name, "wb");
    fwrite(o, 4, 65536, fp);
    fclose(fp);
  }
  cudaError_t e = cudaGetLastError();
  printf("done %s\n", cudaGetErrorString(e));
  return 0;
}
