extern "C" __global__ void local_array(const int* idx, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int arr[32];
    for (int k = 0; k < 32; ++k) arr[k] = k * i + (k ^ i);
    int s = 0;
    for (int k = 0; k < 8; ++k) s += arr[(idx[i] + k * 5) & 31];
    volatile int v[4];
    v[idx[i] & 3] = s;
    out[i] = v[idx[i] & 3] + arr[idx[i] & 31];
}
