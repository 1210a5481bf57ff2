// The special function unit's own results, dumped for fitting its models off the GPU: for
// each unit instruction (the .ftz forms, which ptxas emits as the unit instruction alone),
// every input of one binade (two for rsqrt and sqrt; ex2 a grid of 2^-23 over [-1, 1)),
// written as the signed difference, in the encoding's units, between the unit's result and
// a reference computed in f64 and rounded once (IEEE division and square root in f64, so
// `1/x`, `1/sqrt(x)` and `sqrt(x)` are reproducible bit for bit on a CPU; log2/exp2 through
// CUDA's f64 functions, within one f64 ulp of exact). Files: DIR/sfu-NAME.i32 (little-endian
// int32, one per input in order).
//
//   nvcc -O3 -arch=sm_90 -o /tmp/sfu_dump scripts/probes/instructions/sfu_dump.cu && /tmp/sfu_dump DIR
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>

enum { RCP, RSQRT, SQRT, LG2, EX2 };

__device__ float unit(int f, float x) {
  float r;
  switch (f) {
  case RCP: asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
  case RSQRT: asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
  case SQRT: asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
  case LG2: asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
  default: asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); break;
  }
  return r;
}

__device__ float reference(int f, float x) {
  double d = x;
  switch (f) {
  case RCP: return (float)(1.0 / d);
  case RSQRT: return (float)(1.0 / sqrt(d));
  case SQRT: return (float)sqrt(d);
  case LG2: return (float)log2(d);
  default: return (float)exp2(d);
  }
}

__device__ float input(int f, uint32_t k) {
  if (f == EX2)
    return -1.0f + (float)k * (1.0f / 8388608.0f);
  return __uint_as_float(0x3f800000u + k);
}

__global__ void dump(int f, uint32_t n, int32_t *out) {
  uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n)
    return;
  float x = input(f, k);
  out[k] = (int32_t)(__float_as_uint(unit(f, x)) - __float_as_uint(reference(f, x)));
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  const char *names[] = {"rcp", "rsqrt", "sqrt", "lg2", "ex2"};
  const uint32_t counts[] = {1u << 23, 1u << 24, 1u << 24, 1u << 23, 1u << 24};
  for (int f = 0; f < 5; f++) {
    uint32_t n = counts[f];
    int32_t *d;
    if (cudaMalloc(&d, n * 4) != cudaSuccess) return 1;
    dump<<<(n + 255) / 256, 256>>>(f, n, d);
    std::vector<int32_t> h(n);
    if (cudaMemcpy(h.data(), d, n * 4, cudaMemcpyDeviceToHost) != cudaSuccess) return 2;
    cudaFree(d);
    char path[512];
    snprintf(path, sizeof path, "%s/sfu-%s.i32", dir, names[f]);
    FILE *o = fopen(path, "wb");
    if (!o) return 3;
    fwrite(h.data(), 4, n, o);
    fclose(o);
    long nonzero = 0, lo = 0, hi = 0;
    for (uint32_t k = 0; k < n; k++) {
      nonzero += h[k] != 0;
      if (h[k] < lo) lo = h[k];
      if (h[k] > hi) hi = h[k];
    }
    printf("%s inputs=%u differing=%ld min=%ld max=%ld\n", names[f], n, nonzero, lo, hi);
  }
  return 0;
}
