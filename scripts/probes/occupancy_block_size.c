// occupancy_block_size.c: what the driver answers for the occupancy queries at the edges
// of the block size, for a trivial kernel (issue 25: the stand-in answers Ok(0) for
// cuOccupancyMaxActiveBlocksPerMultiprocessor with block size 0). One line per call:
// "call(arguments) -> status NAME out=values"; each out-value starts as -7 (or 777777 for
// a size_t), so an unwritten one shows as that.
// Build: gcc occupancy_block_size.c -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs -lcuda -o occupancy_block_size
// Run:   ./occupancy_block_size
#include <cuda.h>
#include <stdio.h>

#define CK(x) do { CUresult r_ = (x); if (r_) { printf("setup %s -> %d\n", #x, r_); return 3; } } while (0)

static const char *PTX =
    ".version 7.0\n.target sm_50\n.address_size 64\n"
    ".visible .entry nop()\n{\n\tret;\n}\n";

static const char *name(CUresult r) {
  const char *n = 0;
  return cuGetErrorName(r, &n) == CUDA_SUCCESS && n ? n : "?";
}

// The dynamic shared memory callback of cuOccupancyMaxPotentialBlockSize: records the
// block sizes the driver asks about (the smallest and how many), and answers 0 bytes.
static int asked_min = -7, asked_count = 0;
static size_t smem_for(int block) {
  if (asked_count == 0 || block < asked_min) asked_min = block;
  asked_count++;
  return 0;
}

static void active(CUfunction f, int block, size_t smem) {
  int n = -7;
  CUresult r = cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, block, smem);
  printf("cuOccupancyMaxActiveBlocksPerMultiprocessor(block %d, smem %zu) -> %d %s out=%d\n", block, smem, r, name(r), n);
  for (unsigned flags = 0; flags <= 1; flags++) {
    n = -7;
    r = cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&n, f, block, smem, flags);
    printf("cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(block %d, smem %zu, flags %u) -> %d %s out=%d\n",
           block, smem, flags, r, name(r), n);
  }
}

static void potential(CUfunction f, int limit, int with_callback) {
  int grid = -7, block = -7;
  asked_min = -7; asked_count = 0;
  CUresult r = cuOccupancyMaxPotentialBlockSize(&grid, &block, f, with_callback ? smem_for : NULL, 0, limit);
  printf("cuOccupancyMaxPotentialBlockSize(limit %d, callback %s) -> %d %s out=grid %d block %d", limit,
         with_callback ? "yes" : "no", r, name(r), grid, block);
  if (with_callback) printf(" (callback asked %d sizes, the smallest %d)", asked_count, asked_min);
  printf("\n");
  for (unsigned flags = 0; flags <= 1; flags++) {
    grid = block = -7;
    r = cuOccupancyMaxPotentialBlockSizeWithFlags(&grid, &block, f, NULL, 0, limit, flags);
    printf("cuOccupancyMaxPotentialBlockSizeWithFlags(limit %d, flags %u) -> %d %s out=grid %d block %d\n", limit, flags,
           r, name(r), grid, block);
  }
}

static void available(CUfunction f, int blocks, int block) {
  size_t bytes = 777777;
  CUresult r = cuOccupancyAvailableDynamicSMemPerBlock(&bytes, f, blocks, block);
  printf("cuOccupancyAvailableDynamicSMemPerBlock(blocks %d, block %d) -> %d %s out=%zu\n", blocks, block, r, name(r),
         bytes);
}

int main(void) {
  CUdevice dev; CUcontext ctx; CUmodule mod; CUfunction f;
  int driver = 0, max_threads = 0;
  CK(cuInit(0)); CK(cuDeviceGet(&dev, 0)); CK(cuDriverGetVersion(&driver));
  CK(cuDeviceGetAttribute(&max_threads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev));
  CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
  CK(cuModuleLoadData(&mod, PTX)); CK(cuModuleGetFunction(&f, mod, "nop"));
  printf("# driver %d, max threads per block %d\n", driver, max_threads);
  int blocks[] = {0, -1, 1, 32, max_threads, max_threads + 1};
  for (unsigned i = 0; i < sizeof blocks / sizeof blocks[0]; i++) active(f, blocks[i], 0);
  active(f, 0, 1 << 20); // block size 0 with more shared memory than a block can have
  int limits[] = {0, -1, 1, 32, max_threads + 1};
  for (unsigned i = 0; i < sizeof limits / sizeof limits[0]; i++) {
    potential(f, limits[i], 0);
    potential(f, limits[i], 1);
  }
  available(f, 1, 0);
  available(f, 0, 128);
  available(f, 0, 0);
  available(f, 1, max_threads + 1);
  return 0;
}
