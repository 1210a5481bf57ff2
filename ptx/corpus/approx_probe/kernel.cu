// Probes the H200's approximate instructions over many inputs (its recorded outputs are
// the data for bit-exact models of them; see ../approximate.txt).
#define A1(name, inst) __device__ float name(float x) { float r; asm(inst " %0, %1;" : "=f"(r) : "f"(x)); return r; }
A1(rcp_a, "rcp.approx.f32")
A1(rcp_af, "rcp.approx.ftz.f32")
A1(sqrt_a, "sqrt.approx.f32")
A1(rsqrt_a, "rsqrt.approx.f32")
A1(ex2_a, "ex2.approx.f32")
A1(ex2_af, "ex2.approx.ftz.f32")
A1(lg2_a, "lg2.approx.f32")
A1(sin_a, "sin.approx.f32")
A1(cos_a, "cos.approx.f32")
A1(tanh_a, "tanh.approx.f32")
__device__ float div_a(float x, float y) { float r; asm("div.approx.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y)); return r; }
__device__ float div_f(float x, float y) { float r; asm("div.full.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y)); return r; }
__device__ double rcp_d(double x) { double r; asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x)); return r; }
extern "C" __global__ void approx_probe(const float* in, float* out, double* outd, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float u = in[i];                       // [-1, 1)
    float big = u * 64.0f;                 // ex2/sin/cos range
    float pos = fabsf(u) * 1000.0f + 1e-3f; // positive
    float* o = out + i * 13;
    o[0] = rcp_a(big); o[1] = rcp_af(u); o[2] = sqrt_a(pos); o[3] = rsqrt_a(pos);
    o[4] = ex2_a(big * 0.25f); o[5] = ex2_af(u * 10.0f); o[6] = lg2_a(pos); o[7] = sin_a(big);
    o[8] = cos_a(big); o[9] = tanh_a(u * 4.0f); o[10] = div_a(big, pos); o[11] = div_f(big, u + 1.5f);
    o[12] = sin_a(u * 3.14159265f);
    outd[i] = rcp_d((double)pos * 1.0000001);
}
