struct Pair { int a; float b; };
__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__device__ __noinline__ Pair combine(Pair p, int k, float f) { Pair r; r.a = p.a * k + 1; r.b = p.b * f - 0.5f; return r; }
__device__ __noinline__ float poly(float x) { return ((x * 2.0f + 1.0f) * x - 3.0f) * x; }
extern "C" __global__ void device_func(const int* in, int* out_i, float* out_f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = in[i] & 15;
    Pair p = {v, (float)v * 0.25f};
    Pair q = combine(p, i, poly((float)i / 7.0f));
    out_i[i] = fib(v) + q.a;
    out_f[i] = q.b;
}
