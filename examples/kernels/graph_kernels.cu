// The kernels of examples/graph_explicit.rs and examples/graph_conditional.rs.
// graph_kernels.ptx is this file compiled by NVRTC 13.0.88 (`pip install
// nvidia-cuda-nvrtc==13.0.88`) with `--gpu-architecture=compute_90 -default-device`
// (PTX ISA 9.0, which the H200's 13.0 driver accepts); the names are `extern "C"`.

typedef unsigned long long cudaGraphConditionalHandle;
extern "C" __device__ void cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned int value);

// x[i] += a for i < n.
extern "C" __global__ void add_f32(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] += a;
    }
}

// The body of a while loop: one thread counts *counter down and sets the loop's condition
// to whether it is still above zero.
extern "C" __global__ void count_down(unsigned int* counter, cudaGraphConditionalHandle handle) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        unsigned int left = *counter > 0 ? *counter - 1 : 0;
        *counter = left;
        cudaGraphSetConditional(handle, left > 0 ? 1 : 0);
    }
}
