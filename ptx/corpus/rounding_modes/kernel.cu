extern "C" __global__ void rounding_modes(const float* a, const float* b, const double* c, const double* d, float* of, double* od, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i], y = b[i] * 1e-3f + 1.0f;
    double u = c[i], v = d[i] * 1e-5 + 1.0;
    float* p = of + i * 12; double* q = od + i * 8;
    p[0] = __fadd_rd(x, y); p[1] = __fadd_ru(x, y); p[2] = __fadd_rz(x, y); p[3] = __fmul_rd(x, y);
    p[4] = __fmul_ru(x, y); p[5] = __fdiv_rz(x, y); p[6] = __fdiv_ru(x, y); p[7] = __fsqrt_rd(y);
    p[8] = __fsqrt_ru(y); p[9] = __fmaf_rd(x, y, 1e-4f); p[10] = __frcp_rz(y); p[11] = __fsub_ru(x, y);
    q[0] = __dadd_rd(u, v); q[1] = __dadd_ru(u, v); q[2] = __dmul_rz(u, v); q[3] = __ddiv_rd(u, v);
    q[4] = __ddiv_ru(u, v); q[5] = __dsqrt_rd(v); q[6] = __fma_ru(u, v, 1e-9); q[7] = __drcp_rz(v);
}
