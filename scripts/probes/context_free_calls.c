// Which driver calls that name their context through a handle (an explicit stream, a
// function, an executable graph) work when that context is not current: with no context
// current, and with another context of the same device current. Each call runs in a
// child process (a crash ends only that child); launches are checked by their output,
// queries against the answer with the right context current.
// Build: gcc context_free_calls.c -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs -lcuda
// Run:   ./a.out
#include <cuda.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CK(x) do { CUresult r_ = (x); if (r_) { printf("setup %s -> %d\n", #x, r_); _exit(3); } } while (0)

static const char *PTX =
    ".version 7.0\n.target sm_50\n.address_size 64\n"
    ".visible .entry store(.param .u64 p, .param .u32 v)\n{\n"
    "\t.reg .b64 %rd<2>;\n\t.reg .b32 %r<2>;\n"
    "\tld.param.u64 %rd1, [p];\n\tld.param.u32 %r1, [v];\n"
    "\tcvta.to.global.u64 %rd1, %rd1;\n\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n";

static CUcontext A, B;
static CUmodule mod;
static CUfunction f;
static CUstream s;
static CUdeviceptr buf;
static CUgraph g;
static CUgraphNode node;
static CUgraphExec ex;

static CUDA_KERNEL_NODE_PARAMS params(unsigned *v) {
  static void *args[2];
  args[0] = &buf;
  args[1] = v;
  CUDA_KERNEL_NODE_PARAMS p;
  memset(&p, 0, sizeof p);
  p.func = f; p.gridDimX = p.gridDimY = p.gridDimZ = 1; p.blockDimX = p.blockDimY = p.blockDimZ = 1;
  p.kernelParams = args;
  return p;
}

static void setup(void) {
  CUdevice dev;
  CK(cuInit(0)); CK(cuDeviceGet(&dev, 0));
  CK(cuDevicePrimaryCtxRetain(&A, dev));
  CK(cuCtxCreate(&B, NULL, 0, dev)); // now current; A is made current below
  CK(cuCtxSetCurrent(A));
  CK(cuModuleLoadData(&mod, PTX)); CK(cuModuleGetFunction(&f, mod, "store"));
  CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CK(cuMemAlloc(&buf, 4)); CK(cuMemsetD32(buf, 0, 1));
  unsigned v = 7; CUDA_KERNEL_NODE_PARAMS p = params(&v);
  CK(cuGraphCreate(&g, 0)); CK(cuGraphAddKernelNode(&node, g, 0, 0, &p));
  CK(cuGraphInstantiateWithFlags(&ex, g, 0));
}

// The value the kernel stored, read with A current.
static unsigned stored(void) {
  unsigned v = 0;
  CK(cuCtxSetCurrent(A)); CK(cuStreamSynchronize(s)); CK(cuMemcpyDtoH(&v, buf, 4));
  return v;
}

static void occupancy(long *out) {
  int blocks = 0, grid = 0, block = 0, clusters = 0, csize = 0; size_t avail = 0;
  CUresult r1 = cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, f, 256, 0, 0);
  CUresult r2 = cuOccupancyMaxPotentialBlockSizeWithFlags(&grid, &block, f, 0, 0, 0, 0);
  CUresult r3 = cuOccupancyAvailableDynamicSMemPerBlock(&avail, f, 2, 256);
  CUlaunchConfig c; memset(&c, 0, sizeof c);
  CUlaunchAttribute at; memset(&at, 0, sizeof at);
  at.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION; at.value.clusterDim.x = 2; at.value.clusterDim.y = 1; at.value.clusterDim.z = 1;
  c.gridDimX = 2; c.gridDimY = c.gridDimZ = 1; c.blockDimX = 128; c.blockDimY = c.blockDimZ = 1; c.hStream = s;
  c.attrs = &at; c.numAttrs = 1;
  CUresult r4 = cuOccupancyMaxActiveClusters(&clusters, f, &c);
  c.numAttrs = 0;
  CUresult r5 = cuOccupancyMaxPotentialClusterSize(&csize, f, &c);
  long v[] = {r1, blocks, r2, grid, block, r3, (long)avail, r4, clusters, r5, csize};
  memcpy(out, v, sizeof v);
}

static void run(const char *op, CUcontext cur) {
  unsigned v = 11; void *args[2] = {&buf, &v};
  CUresult r = 0; long extra = -1;
  if (!strcmp(op, "launch")) r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, 0);
  else if (!strcmp(op, "launch_ex")) {
    CUlaunchConfig c; memset(&c, 0, sizeof c);
    c.gridDimX = c.gridDimY = c.gridDimZ = 1; c.blockDimX = c.blockDimY = c.blockDimZ = 1; c.hStream = s;
    r = cuLaunchKernelEx(&c, f, args, 0);
  } else if (!strcmp(op, "graph_launch")) { v = 7; r = cuGraphLaunch(ex, s); }
  else if (!strcmp(op, "exec_update")) {
    CUgraphExecUpdateResultInfo info; r = cuGraphExecUpdate(ex, g, &info); v = 0; // nothing runs
  } else if (!strcmp(op, "exec_set_kernel")) {
    unsigned w = 11; CUDA_KERNEL_NODE_PARAMS p = params(&w);
    r = cuGraphExecKernelNodeSetParams(ex, node, &p);
    if (!r) r = cuGraphLaunch(ex, s);
  } else if (!strcmp(op, "exec_set_ctx")) {
    // The same with the parameters' `ctx` naming A (documented for `kern`, ignored with `func`).
    unsigned w = 11; CUDA_KERNEL_NODE_PARAMS p = params(&w);
    p.ctx = A;
    r = cuGraphExecKernelNodeSetParams(ex, node, &p);
    if (!r) r = cuGraphLaunch(ex, s);
  } else if (!strcmp(op, "exec_set_generic")) {
    // The generic per-node update (12.2+) with kernel parameters.
    unsigned w = 11; CUgraphNodeParams np; memset(&np, 0, sizeof np);
    CUDA_KERNEL_NODE_PARAMS p = params(&w);
    np.type = CU_GRAPH_NODE_TYPE_KERNEL;
    memcpy(&np.kernel, &p, sizeof p);
    r = cuGraphExecNodeSetParams(ex, node, &np);
    if (!r) r = cuGraphLaunch(ex, s);
  } else if (!strcmp(op, "add_kernel_ctx")) {
    // Adding a kernel node with `ctx` naming A, then running it.
    unsigned w = 11; CUDA_KERNEL_NODE_PARAMS p = params(&w);
    p.ctx = A;
    CUgraph g2; CUgraphNode n2; CUgraphExec e2;
    CK(cuGraphCreate(&g2, 0));
    r = cuGraphAddKernelNode(&n2, g2, 0, 0, &p);
    if (!r) r = cuGraphInstantiateWithFlags(&e2, g2, 0);
    if (!r) r = cuGraphLaunch(e2, s);
  } else if (!strcmp(op, "memcpy_async")) {
    r = cuMemsetD32Async(buf, 11, 1, s);
  } else if (!strcmp(op, "stream_sync")) { r = cuStreamSynchronize(s); v = 0; }
  else if (!strcmp(op, "occupancy")) {
    long want[11], got[11];
    CK(cuCtxSetCurrent(A)); occupancy(want);
    CK(cuCtxSetCurrent(cur)); occupancy(got);
    printf("%-16s %-7s statuses %ld %ld %ld %ld %ld (with A current %ld %ld %ld %ld %ld); answers got/want", op,
           cur ? "B" : "none", got[0], got[2], got[5], got[7], got[9], want[0], want[2], want[5], want[7], want[9]);
    for (int k = 0; k < 11; k++) printf(" %ld/%ld", got[k], want[k]);
    printf("\n");
    return;
  } else if (!strcmp(op, "func_attr")) {
    int a = -1, b = -1; CUresult w;
    CK(cuCtxSetCurrent(A)); w = cuFuncGetAttribute(&a, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
    CK(cuCtxSetCurrent(cur)); r = cuFuncGetAttribute(&b, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
    extra = (w == 0 && a == b);
  } else if (!strcmp(op, "func_set_attr")) {
    r = cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024);
    int back = -1; CK(cuCtxSetCurrent(A)); CK(cuFuncGetAttribute(&back, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
    CK(cuCtxSetCurrent(cur)); extra = back == 1024;
  }
  CUcontext now = 0; cuCtxGetCurrent(&now);
  int kept = now == cur;
  if (extra < 0 && v != 0 && r == 0) extra = stored() == v;
  printf("%-16s %-7s -> %d, current context unchanged: %s, result right: %s\n", op, cur ? "B" : "none", r,
         kept ? "yes" : "NO", extra < 0 ? "-" : extra ? "yes" : "NO");
}

int main(void) {
  const char *ops[] = {"launch", "launch_ex", "graph_launch", "exec_update", "exec_set_kernel", "exec_set_ctx", "exec_set_generic",
                       "add_kernel_ctx", "memcpy_async",
                       "stream_sync", "occupancy", "func_attr", "func_set_attr"};
  for (unsigned i = 0; i < sizeof ops / sizeof *ops; i++) {
    for (int which = 0; which < 2; which++) {
      fflush(stdout);
      pid_t pid = fork();
      if (pid == 0) {
        setup();
        CUcontext cur = which ? B : 0;
        CK(cuCtxSetCurrent(cur));
        run(ops[i], cur);
        fflush(stdout);
        _exit(0);
      }
      int st = 0; waitpid(pid, &st, 0);
      if (WIFSIGNALED(st)) printf("%-16s %-7s -> killed by signal %d\n", ops[i], which ? "B" : "none", WTERMSIG(st));
      else if (WEXITSTATUS(st)) printf("%-16s %-7s -> exit %d\n", ops[i], which ? "B" : "none", WEXITSTATUS(st));
    }
  }
  return 0;
}
