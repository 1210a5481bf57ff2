extern "C" __global__ void conversions(const float* in, const double* ind, int* oi, float* of, double* od, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = in[i] * 3.0e9f;
    double d = ind[i] * 1.0e10;
    int* p = oi + i * 8; float* q = of + i * 8; double* r = od + i * 2;
    p[0] = __float2int_rn(x); p[1] = __float2int_rd(x); p[2] = (int)__float2uint_ru(x); p[3] = __float2int_rz(x * 1e-6f);
    p[4] = (int)(long long)(x * 0.5f); p[5] = (int)(unsigned char)(int)(in[i] * 300.0f); p[6] = __double2int_rn(d * 1e-3); p[7] = (int)__double2ll_rd(d);
    q[0] = __int2float_rz(p[0] * 7 + 13); q[1] = __uint2float_ru((unsigned)p[2]); q[2] = __double2float_rd(d); q[3] = __double2float_ru(d);
    q[4] = __saturatef(in[i] * 2.0f); q[5] = __ll2float_rn((long long)(d * 1e5)); q[6] = rintf(in[i] * 10.5f); q[7] = truncf(x * 1e-7f) + floorf(in[i] * 5.5f) + ceilf(in[i] * 2.5f);
    r[0] = (double)x * 1e-3; r[1] = __ll2double_rz((long long)(d * 1e6) * 1001);
}
