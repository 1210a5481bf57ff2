// The kernels of examples/kernel_features.rs. kernel_features.ptx is this file compiled by
// NVRTC 13.0.88 (`pip install nvidia-cuda-nvrtc==13.0.88`) with
// `--gpu-architecture=compute_90 -default-device` (PTX ISA 9.0, which the H200's 13.0 driver
// accepts); the names are `extern "C"`, so unmangled.

// Globals: read and written from the host through cudrv::Global.
__device__ float table[256];
__constant__ float coeffs[4];
__device__ unsigned int counter;
__managed__ int managed_value;

// out[i] = table[i] * coeffs[i % 4]; counts the threads that ran in `counter`; adds 1 to
// `managed_value` once.
extern "C" __global__ void use_globals(float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = table[i] * coeffs[i % 4];
        atomicAdd(&counter, 1u);
    }
    if (i == 0) {
        atomicAdd(&managed_value, 1);
    }
}

// Reverses n floats through dynamic shared memory (n * 4 bytes: above 48 KiB it needs the
// opt-in attribute). One block; each thread handles every blockDim.x-th value.
extern "C" __global__ void reverse_shared(const float* in, float* out, int n) {
    extern __shared__ float buf[];
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        buf[i] = in[i];
    }
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        out[i] = buf[n - 1 - i];
    }
}

// Parameters of several sizes and alignments, for the parameter layout:
// offsets 0, 8, 16, 24, 28 and sizes 8, 4, 8, 1, 4.
extern "C" __global__ void mixed_params(float* out, int a, double b, char c, float d) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        out[0] = (float)a + (float)b + (float)c + d;
    }
}
