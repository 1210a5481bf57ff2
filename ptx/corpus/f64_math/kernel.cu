extern "C" __global__ void f64_math(const double* a, const double* b, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double x = a[i] * 3.0, y = b[i] + 2.0;
    double* o = out + i * 8;
    o[0] = sqrt(y); o[1] = exp(x); o[2] = log(y); o[3] = sin(x);
    o[4] = x / y; o[5] = fma(x, y, 1.0 / 3.0); o[6] = pow(y, 0.5 * x); o[7] = (double)(float)x * y;
}
