// Kernels of the texture probe (probe.c). Each thread reads one coordinate set c[i]
// (x, y, z or layer, level) and writes one 16-byte result out[i]. Compiled to kernels.ptx
// by build.py (NVRTC 13.0, compute_90).
typedef unsigned long long obj_t;

#define TEX_KERNELS(T, S)                                                                      \
  extern "C" __global__ void tex1d_##S(obj_t t, const float4 *c, T *out, int n) {             \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (i < n) out[i] = tex1D<T>(t, c[i].x);                                                   \
  }                                                                                            \
  extern "C" __global__ void tex2d_##S(obj_t t, const float4 *c, T *out, int n) {             \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (i < n) out[i] = tex2D<T>(t, c[i].x, c[i].y);                                           \
  }                                                                                            \
  extern "C" __global__ void tex3d_##S(obj_t t, const float4 *c, T *out, int n) {             \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (i < n) out[i] = tex3D<T>(t, c[i].x, c[i].y, c[i].z);                                   \
  }                                                                                            \
  extern "C" __global__ void tex1dl_##S(obj_t t, const float4 *c, T *out, int n) {            \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (i < n) out[i] = tex1DLayered<T>(t, c[i].x, (int)c[i].z);                               \
  }                                                                                            \
  extern "C" __global__ void tex2dl_##S(obj_t t, const float4 *c, T *out, int n) {            \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (i < n) out[i] = tex2DLayered<T>(t, c[i].x, c[i].y, (int)c[i].z);                       \
  }                                                                                            \
  extern "C" __global__ void fetch_##S(obj_t t, const float4 *c, T *out, int n) {             \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (i < n) out[i] = tex1Dfetch<T>(t, (int)c[i].x);                                         \
  }                                                                                            \
  extern "C" __global__ void tex2dlod_##S(obj_t t, const float4 *c, T *out, int n) {          \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (i < n) out[i] = tex2DLod<T>(t, c[i].x, c[i].y, c[i].w);                                \
  }                                                                                            \
  extern "C" __global__ void tex2dgrad_##S(obj_t t, const float4 *c, T *out, int n) {         \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (i < n) out[i] = tex2DGrad<T>(t, c[i].x, c[i].y, make_float2(c[i].w, 0), make_float2(0, c[i].w)); \
  }                                                                                            \
  extern "C" __global__ void texcube_##S(obj_t t, const float4 *c, T *out, int n) {           \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (i < n) out[i] = texCubemap<T>(t, c[i].x, c[i].y, c[i].z);                              \
  }                                                                                            \
  extern "C" __global__ void texcubel_##S(obj_t t, const float4 *c, T *out, int n) {          \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (i < n) out[i] = texCubemapLayered<T>(t, c[i].x, c[i].y, c[i].z, (int)c[i].w);          \
  }                                                                                            \
  extern "C" __global__ void gather_##S(obj_t t, const float4 *c, T *out, int n) {            \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (i >= n) return;                                                                        \
    switch ((int)c[i].w) {                                                                     \
    case 0: out[i] = tex2Dgather<T>(t, c[i].x, c[i].y, 0); break;                             \
    case 1: out[i] = tex2Dgather<T>(t, c[i].x, c[i].y, 1); break;                             \
    case 2: out[i] = tex2Dgather<T>(t, c[i].x, c[i].y, 2); break;                             \
    default: out[i] = tex2Dgather<T>(t, c[i].x, c[i].y, 3); break;                            \
    }                                                                                          \
  }

TEX_KERNELS(float4, f)
TEX_KERNELS(int4, s)
TEX_KERNELS(uint4, u)

// Every txq query of a texture object and every suq query of a surface object.
extern "C" __global__ void txq(obj_t t, int *out) {
  int r[11];
  asm("txq.width.b32 %0, [%1];" : "=r"(r[0]) : "l"(t));
  asm("txq.height.b32 %0, [%1];" : "=r"(r[1]) : "l"(t));
  asm("txq.depth.b32 %0, [%1];" : "=r"(r[2]) : "l"(t));
  asm("txq.channel_data_type.b32 %0, [%1];" : "=r"(r[3]) : "l"(t));
  asm("txq.channel_order.b32 %0, [%1];" : "=r"(r[4]) : "l"(t));
  asm("txq.normalized_coords.b32 %0, [%1];" : "=r"(r[5]) : "l"(t));
  asm("txq.filter_mode.b32 %0, [%1];" : "=r"(r[6]) : "l"(t));
  asm("txq.addr_mode_0.b32 %0, [%1];" : "=r"(r[7]) : "l"(t));
  asm("txq.addr_mode_1.b32 %0, [%1];" : "=r"(r[8]) : "l"(t));
  asm("txq.addr_mode_2.b32 %0, [%1];" : "=r"(r[9]) : "l"(t));
  asm("txq.num_mipmap_levels.b32 %0, [%1];" : "=r"(r[10]) : "l"(t));
  for (int k = 0; k < 11; k++) out[k] = r[k];
}

extern "C" __global__ void suq(obj_t s, int *out) {
  int r[5];
  asm("suq.width.b32 %0, [%1];" : "=r"(r[0]) : "l"(s));
  asm("suq.height.b32 %0, [%1];" : "=r"(r[1]) : "l"(s));
  asm("suq.depth.b32 %0, [%1];" : "=r"(r[2]) : "l"(s));
  asm("suq.channel_data_type.b32 %0, [%1];" : "=r"(r[3]) : "l"(s));
  asm("suq.channel_order.b32 %0, [%1];" : "=r"(r[4]) : "l"(s));
  for (int k = 0; k < 5; k++) out[k] = r[k];
}

// Surface reads of 4-byte elements (x in bytes as the surface functions take it), one
// kernel per boundary mode; c[i] = (byte x, y, z or layer).
#define SURF_READ(MODE, M)                                                                     \
  extern "C" __global__ void surf1d_##M(obj_t s, const int4 *c, uint4 *out, int n) {          \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (i < n) out[i] = make_uint4(surf1Dread<unsigned>(s, c[i].x, MODE), 0, 0, 0);            \
  }                                                                                            \
  extern "C" __global__ void surf2d_##M(obj_t s, const int4 *c, uint4 *out, int n) {          \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (i < n) out[i] = make_uint4(surf2Dread<unsigned>(s, c[i].x, c[i].y, MODE), 0, 0, 0);    \
  }                                                                                            \
  extern "C" __global__ void surf3d_##M(obj_t s, const int4 *c, uint4 *out, int n) {          \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (i < n) out[i] = make_uint4(surf3Dread<unsigned>(s, c[i].x, c[i].y, c[i].z, MODE), 0, 0, 0); \
  }                                                                                            \
  extern "C" __global__ void surf1dl_##M(obj_t s, const int4 *c, uint4 *out, int n) {         \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (i < n) out[i] = make_uint4(surf1DLayeredread<unsigned>(s, c[i].x, c[i].z, MODE), 0, 0, 0); \
  }                                                                                            \
  extern "C" __global__ void surf2dl_##M(obj_t s, const int4 *c, uint4 *out, int n) {         \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (i < n) out[i] = make_uint4(surf2DLayeredread<unsigned>(s, c[i].x, c[i].y, c[i].z, MODE), 0, 0, 0); \
  }                                                                                            \
  extern "C" __global__ void surf2dv4_##M(obj_t s, const int4 *c, uint4 *out, int n) {        \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (i < n) out[i] = surf2Dread<uint4>(s, c[i].x, c[i].y, MODE);                            \
  }                                                                                            \
  extern "C" __global__ void surf2dw_##M(obj_t s, const int4 *c, uint4 *out, int n) {         \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (i < n) surf2Dwrite<unsigned>(0xA0000000u + c[i].w, s, c[i].x, c[i].y, MODE);               \
  }

SURF_READ(cudaBoundaryModeTrap, trap)
SURF_READ(cudaBoundaryModeClamp, clamp)
SURF_READ(cudaBoundaryModeZero, zero)

// Surface writes write 0xA0000000 + c[i].w (bytes: 0x40 + c[i].w).
// Byte and short surface reads and writes (b8, b16, b64 forms).
extern "C" __global__ void surf2d_b8(obj_t s, const int4 *c, uint4 *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = make_uint4(surf2Dread<unsigned char>(s, c[i].x, c[i].y, cudaBoundaryModeZero), 0, 0, 0);
}
extern "C" __global__ void surf2d_b16(obj_t s, const int4 *c, uint4 *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = make_uint4(surf2Dread<unsigned short>(s, c[i].x, c[i].y, cudaBoundaryModeZero), 0, 0, 0);
}
extern "C" __global__ void surf2d_b64(obj_t s, const int4 *c, uint4 *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned long long v = surf2Dread<unsigned long long>(s, c[i].x, c[i].y, cudaBoundaryModeZero);
    out[i] = make_uint4((unsigned)v, (unsigned)(v >> 32), 0, 0);
  }
}
extern "C" __global__ void surf2d_v2(obj_t s, const int4 *c, uint4 *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    uint2 v = surf2Dread<uint2>(s, c[i].x, c[i].y, cudaBoundaryModeZero);
    out[i] = make_uint4(v.x, v.y, 0, 0);
  }
}
extern "C" __global__ void surf2dw_b8(obj_t s, const int4 *c, uint4 *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) surf2Dwrite<unsigned char>((unsigned char)(0x40 + c[i].w), s, c[i].x, c[i].y, cudaBoundaryModeZero);
}
