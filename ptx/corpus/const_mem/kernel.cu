__constant__ float coeffs[8] = {1.0f, -0.5f, 0.25f, -0.125f, 0.0625f, 3.0f, -2.0f, 0.1f};
__device__ int counter = 5;
extern "C" __global__ void const_mem(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i], acc = 0.0f;
    for (int k = 7; k >= 0; --k) acc = acc * v + coeffs[k];
    y[i] = acc + (float)counter;
}
