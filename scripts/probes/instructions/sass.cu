// What ptxas makes of each approximate instruction (cuobjdump -sass of this file's kernels).
__global__ void k(float *p) {
  float x = p[threadIdx.x], r;
#define ONE(i, s) asm(s " %0, %1;" : "=f"(r) : "f"(x)); p[i * 32 + threadIdx.x] = r;
  ONE(1, "sin.approx.f32") ONE(2, "cos.approx.f32") ONE(3, "ex2.approx.f32") ONE(4, "ex2.approx.ftz.f32")
  ONE(5, "lg2.approx.f32") ONE(6, "lg2.approx.ftz.f32") ONE(7, "rcp.approx.f32") ONE(8, "rcp.approx.ftz.f32")
  ONE(9, "rsqrt.approx.f32") ONE(10, "sqrt.approx.f32") ONE(11, "sqrt.approx.ftz.f32") ONE(12, "tanh.approx.f32")
  ONE(13, "sin.approx.ftz.f32") ONE(14, "rsqrt.approx.ftz.f32")
  asm("div.approx.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(p[40])); p[15 * 32 + threadIdx.x] = r;
  asm("div.full.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(p[41])); p[16 * 32 + threadIdx.x] = r;
}
__global__ void k64(double *p) {
  double x = p[threadIdx.x], r;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x)); p[32 + threadIdx.x] = r;
  asm("rsqrt.approx.f64 %0, %1;" : "=d"(r) : "d"(x)); p[64 + threadIdx.x] = r;
}
