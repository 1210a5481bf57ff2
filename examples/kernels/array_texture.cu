// The kernel of examples/array_texture.rs. array_texture.ptx is this file compiled by
// NVRTC 13.0.88 (`pip install nvidia-cuda-nvrtc==13.0.88`) with
// `--gpu-architecture=compute_90 -default-device` (PTX ISA 9.0, which the H200's 13.0 driver
// accepts); the name is `extern "C"`, so unmangled. On the stand-in, the example registers a
// host implementation of it that reads the texture through `cudrv_standin::texture_fetch`.

// out[y * width + x] = the texel (x, y) of a 2D texture of floats, read with point filtering
// and unnormalised coordinates (the texel's centre is at x + 0.5, y + 0.5).
extern "C" __global__ void read_texture_2d(cudaTextureObject_t tex, float* out, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        out[y * width + x] = tex2D<float>(tex, x + 0.5f, y + 0.5f);
    }
}
