// The kernel of scripts/probes/fatbin_loads.sh: y[i] = 3 * x[i] + 1.
extern "C" __global__ void scale(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 3.0f * x[i] + 1.0f;
}
