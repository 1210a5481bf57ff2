// The approximate instructions measured over every f32 input on the GPU: for each form, the
// hardware instruction beside candidate models (computed in f64 and rounded once, as the
// executor's float::approx does), counting the inputs where they differ and the largest
// difference in ulps (distance in the ordered f32 encoding; a NaN matches any NaN).
//
//   nvcc -O3 -arch=sm_90 -o /tmp/approx scripts/probes/instructions/approx.cu && /tmp/approx
//
// One line per (form, model): FORM MODEL differing=N max_ulp=U first=... (model 0: the
// exact function rounded once; 1: ptx/src/approx.rs; 10+q: sin/cos with q fraction bits).
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

// The special function unit as ptx/src/approx.rs models it: the exact function of the
// flushed input rounded to nearest, a subnormal result flushed (tanh: neither); sin/cos in
// revolutions. quant > 0 (measurement of hypotheses only): the fraction of a revolution
// truncated to quant bits first.
__device__ float unit(int f, float x, int quant) {
  if (f == TANH)
    return isnan(x) ? __int_as_float(0x7fffffff) : (float)tanh((double)x);
  double v = flush(x), r;
  switch (f) {
  case SIN: case COS: {
    if (!isfinite(v)) { r = nan(""); break; }
    double fr = copysign(v - trunc(v), v);
    if (quant > 0) fr = copysign(trunc(fabs(fr) * ldexp(1.0, quant)) * ldexp(1.0, -quant), fr);
    double turn = 6.283185307179586476925286766559 * fr;
    r = f == SIN ? sin(turn) : cos(turn);
    break;
  }
  case EX2: r = exp2(v); break;
  case LG2: r = v < 0 ? nan("") : log2(v); break;
  case RCP: r = 1.0 / v; break;
  case RSQRT: r = 1.0 / sqrt(v); break;
  default: r = sqrt(v); break;
  }
  if (isnan(r))
    return __int_as_float(0x7fffffff);
  return flush((float)r);
}

// ptxas's sequences around the unit (ptx/src/approx.rs, f32_ftz / f32_full / div_f32).
__device__ float seq(int f, int ftz, float x, int quant) {
  const float two24 = 16777216.0f, two126 = 8.50705917e37f;
  if (f == DIV_APPROX || f == DIV_FULL) {
    float a = 1.0f, b = x;
    if (ftz) { a = flush(a); b = flush(b); }
    if (f == DIV_FULL && fabsf(b) > two126) { a *= 0.25f; b *= 0.25f; }
    else if (!ftz && fabsf(b) < 1.17549435e-38f) { a *= two24; b *= two24; }
    float r = unit(RCP, b, 0) * a;
    r = ftz ? flush(r) : r;
    return isnan(r) ? __int_as_float(0x7fffffff) : r;
  }
  if (ftz)
    x = flush(x);
  bool tiny = fabsf(x) < 1.17549435e-38f;
  switch (f) {
  case SIN: case COS: return unit(f, __fmul_rz(x, __int_as_float(0x3e22f983)), quant);
  case TANH: return unit(f, x, 0);
  default: break;
  }
  if (ftz)
    return unit(f, x, 0);
  switch (f) {
  case EX2: if (x >= -126.0f || isnan(x)) return unit(f, x, 0); else { float h = unit(f, x * 0.5f, 0); return h * h; }
  case LG2: return tiny ? unit(f, x * two24, 0) - 24.0f : unit(f, x, 0);
  case RSQRT: return tiny ? unit(f, x * two24, 0) * 4096.0f : unit(f, x, 0);
  case SQRT: return tiny ? unit(f, x * two24, 0) * (1.0f / 4096.0f) : unit(f, x, 0);
  default: {
    float scale = fabsf(x) > two126 ? 0.25f : tiny ? two24 : 1.0f;
    return unit(f, x * scale, 0) * scale;
  }
  }
}

// Model 0: the function in f64 rounded once (the executor before 2026-12-06). Model 1: the
// sequences of ptx/src/approx.rs (what the executor computes now). Models 10+q (sin, cos):
// model 1 with the unit's revolution fraction truncated to q bits.
__device__ float model(int f, int ftz, float xf, int m) {
  if (m >= 10)
    return seq(f, ftz, xf, m - 10);
  if (m == 1)
    return seq(f, ftz, xf, 0);
  if (ftz)
    xf = flush(xf);
  double x = xf, r;
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
  float o = (float)r;
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

__global__ void half_table(unsigned short *out) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 65536)
    return;
  unsigned short x = i, r;
  asm("ex2.approx.f16 %0, %1;" : "=h"(r) : "h"(x)); out[i] = r;
  asm("tanh.approx.f16 %0, %1;" : "=h"(r) : "h"(x)); out[65536 + i] = r;
  asm("ex2.approx.ftz.bf16 %0, %1;" : "=h"(r) : "h"(x)); out[2 * 65536 + i] = r;
  asm("tanh.approx.bf16 %0, %1;" : "=h"(r) : "h"(x)); out[3 * 65536 + i] = r;
}

int main() {
  Stat *s;
  cudaMallocManaged(&s, sizeof(Stat));
  // ex2.approx.f16, tanh.approx.f16, ex2.approx.ftz.bf16, tanh.approx.bf16 of every input:
  // half-approx.bin, 4 x 65536 u16.
  unsigned short *h;
  cudaMallocManaged(&h, 4 * 65536 * 2);
  half_table<<<256, 256>>>(h);
  cudaDeviceSynchronize();
  char name[256];
  snprintf(name, sizeof name, "%s/half-approx.bin", getenv("OUT") ? getenv("OUT") : ".");
  FILE *fp = fopen(name, "wb");
  fwrite(h, 2, 4 * 65536, fp);
  fclose(fp);
  int models[] = {0, 1, 19, 20, 21, 22, 23, 24, 25, 26, 28, 30};
  // Pass 0: models 0 and 1 of every form; pass 1: the sin/cos quantisation hypotheses.
  for (int pass = 0; pass < 2; pass++)
  for (int f = 0; f < NFUNC; f++)
    for (int ftz = 0; ftz < 2; ftz++) {
      if (f == TANH && ftz)
        continue;
      for (int mi = 0; mi < (int)(sizeof models / sizeof models[0]); mi++) {
        int m = models[mi] >= 19 ? 10 + models[mi] : models[mi];
        if ((m >= 10) != (pass == 1) || (m >= 10 && f != SIN && f != COS))
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
  cudaError_t e = cudaGetLastError();
  printf("done %s\n", cudaGetErrorString(e));
  return 0;
}
