/* Loads each texture (txq) and surface (suq) query alone in a module and prints what
 * cuModuleLoadDataEx and cuModuleGetFunction answer (recorded:
 * docs/gpu-runs/h200/texture-queries-2026-12-05.txt).
 *   gcc -O1 -o /tmp/q scripts/probes/texture/queries.c -ldl && /tmp/q */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
int main(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW);
  int (*cuInit)(unsigned) = dlsym(lib, "cuInit");
  int (*cuDevicePrimaryCtxRetain)(void **, int) = dlsym(lib, "cuDevicePrimaryCtxRetain");
  int (*cuCtxSetCurrent)(void *) = dlsym(lib, "cuCtxSetCurrent");
  int (*load)(void **, const void *, unsigned, int *, void **) = dlsym(lib, "cuModuleLoadDataEx");
  int (*getf)(void **, void *, const char *) = dlsym(lib, "cuModuleGetFunction");
  void *ctx;
  cuInit(0);
  cuDevicePrimaryCtxRetain(&ctx, 0);
  cuCtxSetCurrent(ctx);
  const char *ops[] = {"txq.width", "txq.height", "txq.depth", "txq.channel_data_type", "txq.channel_order",
                       "txq.normalized_coords", "txq.filter_mode", "txq.addr_mode_0", "txq.addr_mode_1",
                       "txq.addr_mode_2", "txq.num_mipmap_levels", "txq.num_samples", "txq.array_size",
                       "suq.width", "suq.height", "suq.depth", "suq.channel_data_type", "suq.channel_order",
                       "suq.array_size", "suq.memory_layout"};
  for (unsigned i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    char ptx[1024];
    snprintf(ptx, sizeof ptx,
             ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 a, .param .u64 o)\n{\n"
             ".reg .b32 %%r<2>;\n.reg .b64 %%rd<4>;\nld.param.u64 %%rd1, [a];\nld.param.u64 %%rd2, [o];\n"
             "cvta.to.global.u64 %%rd3, %%rd2;\n%s.b32 %%r1, [%%rd1];\nst.global.u32 [%%rd3], %%r1;\nret;\n}\n",
             ops[i]);
    char log[2048] = {0}, info[2048] = {0};
    int opts[4] = {5, 6, 3, 4};
    void *vals[4] = {log, (void *)sizeof log, info, (void *)sizeof info};
    void *m = 0, *f = 0;
    int st = load(&m, ptx, 4, opts, vals);
    int g = st == 0 ? getf(&f, m, "k") : -1;
    for (char *p = log; *p; p++) if (*p == '\n') *p = '|';
    printf("%s load=%d getf=%d log=%s\n", ops[i], st, g, log);
  }
  return 0;
}
