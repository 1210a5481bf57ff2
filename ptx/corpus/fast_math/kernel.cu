extern "C" __global__ void fast_math(const float* a, const float* b, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i] * 4.0f, y = b[i] + 1.5f;
    float* o = out + i * 12;
    o[0] = sqrtf(y); o[1] = expf(x); o[2] = logf(y); o[3] = sinf(x);
    o[4] = cosf(x); o[5] = powf(y, x); o[6] = tanhf(x); o[7] = fmaf(x, y, 0.25f);
    o[8] = x / y; o[9] = rsqrtf(y); o[10] = exp2f(x) + log2f(y); o[11] = atan2f(x, y);
}
