// The kernel of examples/split_reduction.rs. sum_f32.ptx is this file compiled by NVRTC
// 13.0.88 (`pip install nvidia-cuda-nvrtc==13.0.88`, libnvrtc-builtins.so.13.0 loaded
// first) with `--gpu-architecture=compute_90` (PTX ISA 9.0, which the H200's 13.0 driver
// accepts); the name is `extern "C"`, so unmangled.
//
// sum_f32(const float* x, int n, float* out): *out += the sum of x[0..n).
// Each thread adds up a grid-stride share of x, each block adds its threads' sums in
// shared memory (blocks of 256 threads), and thread 0 of each block adds the block's sum
// to *out atomically. *out must hold 0 (or a sum to add to) before the launch.
extern "C" __global__ void sum_f32(const float* x, int n, float* out) {
    __shared__ float partial[256];
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        acc += x[i];
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            partial[threadIdx.x] += partial[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(out, partial[0]);
    }
}
