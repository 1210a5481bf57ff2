// The kernels of examples/big_shared.rs and examples/matmul_occupancy.rs. execution.ptx is
// this file compiled by NVRTC 13.0.88 (`pip install nvidia-cuda-nvrtc==13.0.88`) with
// `--gpu-architecture=compute_90 -default-device` (PTX ISA 9.0, which the H200's 13.0 driver
// accepts); the names are `extern "C"`, so unmangled.

// Reverses each block's n floats (from blockIdx.x * n) through n * 4 bytes of dynamic
// shared memory: above 48 KiB it needs the opt-in attribute.
extern "C" __global__ void reverse_block(const float* in, float* out, int n) {
    extern __shared__ float buf[];
    long base = (long)blockIdx.x * n;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        buf[i] = in[base + i];
    }
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        out[base + i] = buf[n - 1 - i];
    }
}

// c = a * b for n x n row-major matrices, one thread per element of c.
extern "C" __global__ void matmul_f32(const float* a, const float* b, float* c, int n) {
    long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < (long)n * n) {
        int row = (int)(idx / n);
        int col = (int)(idx % n);
        float sum = 0.0f;
        for (int k = 0; k < n; ++k) {
            sum += a[row * n + k] * b[k * n + col];
        }
        c[idx] = sum;
    }
}
