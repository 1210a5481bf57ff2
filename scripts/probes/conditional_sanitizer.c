// The graph of examples/graph_conditional.rs through the driver API, with parts toggled by
// the environment, to find what faults under compute-sanitizer.
#include <cuda.h>
// Build: gcc conditional_sanitizer.c -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs -lcuda
// Run: LINK=1 MEMSET=1 ADD=1 TWICE=1 NONBLOCK=1 compute-sanitizer ./a.out graph_kernels.ptx libcudadevrt.a
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CK(x) do { CUresult r_ = (x); if (r_) { printf("%s -> %d\n", #x, r_); return 1; } } while (0)
static int on(const char *k) { const char *v = getenv(k); return v && *v == '1'; }
static char *slurp(const char *p, size_t *n) {
  FILE *f = fopen(p, "rb"); fseek(f, 0, SEEK_END); *n = ftell(f); fseek(f, 0, SEEK_SET);
  char *b = malloc(*n + 1); fread(b, 1, *n, f); b[*n] = 0; fclose(f); return b;
}
int main(int argc, char **argv) {
  CUdevice dev; CUcontext ctx; CUmodule mod; CUfunction add, down;
  CK(cuInit(0)); CK(cuDeviceGet(&dev, 0)); CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
  size_t n; char *ptx = slurp(argv[1], &n);
  if (on("LINK")) {
    size_t ln; char *lib = slurp(argv[2], &ln); CUlinkState st; void *cubin; size_t cs;
    CK(cuLinkCreate(0, 0, 0, &st));
    CK(cuLinkAddData(st, CU_JIT_INPUT_PTX, ptx, n + 1, "k.ptx", 0, 0, 0));
    CK(cuLinkAddData(st, CU_JIT_INPUT_LIBRARY, lib, ln, "libcudadevrt.a", 0, 0, 0));
    CK(cuLinkComplete(st, &cubin, &cs)); CK(cuModuleLoadData(&mod, cubin));
  } else CK(cuModuleLoadData(&mod, ptx));
  CK(cuModuleGetFunction(&add, mod, "add_f32")); CK(cuModuleGetFunction(&down, mod, "count_down"));
  CUstream s; CK(cuStreamCreate(&s, on("NONBLOCK") ? CU_STREAM_NON_BLOCKING : 0));
  int N = 1 << 16; CUdeviceptr x, counter;
  CK(cuMemAlloc(&x, N * 4)); CK(cuMemsetD32(x, 0, N)); CK(cuMemAlloc(&counter, 4)); CK(cuMemsetD32(counter, 10, 1));
  CUgraph g; CK(cuGraphCreate(&g, 0));
  CUgraphNode deps[1]; size_t nd = 0;
  if (on("MEMSET")) {
    CUDA_MEMSET_NODE_PARAMS m = {0}; m.dst = counter; m.value = 10; m.elementSize = 4; m.width = 1; m.height = 1;
    CK(cuGraphAddMemsetNode(&deps[0], g, 0, 0, &m, ctx)); nd = 1;
  }
  CUgraphConditionalHandle h; CK(cuGraphConditionalHandleCreate(&h, g, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT));
  CUgraphNodeParams p; memset(&p, 0, sizeof p); p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  p.conditional.handle = h; p.conditional.type = CU_GRAPH_COND_TYPE_WHILE; p.conditional.size = 1; p.conditional.ctx = ctx;
  CUgraphNode cn; CK(cuGraphAddNode(&cn, g, deps, 0, nd, &p));
  CUgraph body = p.conditional.phGraph_out[0];
  float one = 1; int nn = N; void *aargs[] = {&x, &one, &nn}; void *dargs[] = {&counter, &h};
  CUgraphNode an, dn; size_t bd = 0;
  if (on("ADD")) {
    CUDA_KERNEL_NODE_PARAMS k; memset(&k, 0, sizeof k); k.func = add; k.gridDimX = N / 256; k.gridDimY = k.gridDimZ = 1;
    k.blockDimX = 256; k.blockDimY = k.blockDimZ = 1; k.kernelParams = aargs;
    CK(cuGraphAddKernelNode(&an, body, 0, 0, &k)); bd = 1;
  }
  CUDA_KERNEL_NODE_PARAMS k; memset(&k, 0, sizeof k); k.func = down; k.gridDimX = k.gridDimY = k.gridDimZ = 1;
  k.blockDimX = on("WARP") ? 32 : 1; k.blockDimY = k.blockDimZ = 1; k.kernelParams = dargs;
  CK(cuGraphAddKernelNode(&dn, body, &an, bd, &k));
  CUgraphExec e; CK(cuGraphInstantiate(&e, g, 0));
  int launches = on("TWICE") ? 2 : 1;
  for (int i = 0; i < launches; i++) { if (!on("MEMSET")) CK(cuMemsetD32(counter, 10, 1)); CK(cuGraphLaunch(e, s)); }
  CK(cuStreamSynchronize(s));
  unsigned left; float x0; CK(cuMemcpyDtoH(&left, counter, 4)); CK(cuMemcpyDtoH(&x0, x, 4));
  printf("ok counter %u x0 %g\n", left, x0);
  return 0;
}
