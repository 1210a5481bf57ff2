/* Loads a kernel image (PTX, cubin or fatbin) every way the driver API offers and runs
 * `scale` from it: cuModuleLoad (file), cuModuleLoadData, cuModuleLoadDataEx (with an
 * error log), cuModuleLoadFatBinary, cuLibraryLoadData, cuLibraryLoadFromFile. Prints
 * "FILE WAY status N [run ok|wrong|status N]" and the JIT error log of a refusal. No CUDA
 * headers: plain C types and dlopen.
 *
 *   gcc -O1 -o load load.c -ldl && ./load image.fatbin ... */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*f_t)();
static void *lib;
#define F(name) ((f_t)dlsym(lib, name))

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *len = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = calloc(*len + 1, 1);
  if (fread(b, 1, *len, f) != *len) *len = 0;
  fclose(f);
  return b;
}

static void run(const char *file, const char *way, int st, void *func) {
  printf("%s %s status %d", file, way, st);
  if (st == 0 && func) {
    enum { N = 256 };
    float h[N], out[N];
    for (int i = 0; i < N; i++) h[i] = (float)i;
    unsigned long long x = 0, y = 0;
    F("cuMemAlloc_v2")(&x, sizeof h);
    F("cuMemAlloc_v2")(&y, sizeof h);
    F("cuMemcpyHtoD_v2")(x, h, sizeof h);
    int n = N;
    void *args[] = {&x, &y, &n};
    int l = F("cuLaunchKernel")(func, 1, 1, 1, N, 1, 1, 0, NULL, args, NULL);
    int s = F("cuCtxSynchronize")();
    F("cuMemcpyDtoH_v2")(out, y, sizeof out);
    int wrong = 0;
    for (int i = 0; i < N; i++) wrong += out[i] != 3.0f * (float)i + 1.0f;
    if (l || s)
      printf(" run status %d/%d", l, s);
    else
      printf(" run %s", wrong ? "wrong" : "ok");
    F("cuMemFree_v2")(x);
    F("cuMemFree_v2")(y);
  }
  printf("\n");
}

int main(int argc, char **argv) {
  lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (!lib) return 2;
  void *ctx = NULL;
  F("cuInit")(0);
  F("cuDevicePrimaryCtxRetain")(&ctx, 0);
  F("cuCtxSetCurrent")(ctx);
  for (int a = 1; a < argc; a++) {
    const char *file = argv[a];
    size_t len = 0;
    char *image = slurp(file, &len);
    void *mod = NULL, *func = NULL, *lib_ = NULL, *kern = NULL;
    int st = F("cuModuleLoad")(&mod, file);
    if (!st) F("cuModuleGetFunction")(&func, mod, "scale");
    run(file, "cuModuleLoad", st, func);
    if (!st) F("cuModuleUnload")(mod);
    func = NULL;
    st = F("cuModuleLoadData")(&mod, image);
    if (!st) F("cuModuleGetFunction")(&func, mod, "scale");
    run(file, "cuModuleLoadData", st, func);
    if (!st) F("cuModuleUnload")(mod);
    func = NULL;
    char log[4096] = {0};
    int opts[] = {5 /* CU_JIT_ERROR_LOG_BUFFER */, 6 /* CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES */};
    void *vals[] = {log, (void *)(size_t)sizeof log};
    st = F("cuModuleLoadDataEx")(&mod, image, 2, opts, vals);
    if (!st) F("cuModuleGetFunction")(&func, mod, "scale");
    run(file, "cuModuleLoadDataEx", st, func);
    if (st) printf("%s cuModuleLoadDataEx log %s\n", file, log[0] ? log : "(empty)");
    if (!st) F("cuModuleUnload")(mod);
    func = NULL;
    st = F("cuModuleLoadFatBinary")(&mod, image);
    if (!st) F("cuModuleGetFunction")(&func, mod, "scale");
    run(file, "cuModuleLoadFatBinary", st, func);
    if (!st) F("cuModuleUnload")(mod);
    func = NULL;
    st = F("cuLibraryLoadData")(&lib_, image, NULL, NULL, 0, NULL, NULL, 0);
    if (!st && !F("cuLibraryGetKernel")(&kern, lib_, "scale")) F("cuKernelGetFunction")(&func, kern);
    run(file, "cuLibraryLoadData", st, func);
    if (!st) F("cuLibraryUnload")(lib_);
    func = NULL;
    st = F("cuLibraryLoadFromFile")(&lib_, file, NULL, NULL, 0, NULL, NULL, 0);
    if (!st && !F("cuLibraryGetKernel")(&kern, lib_, "scale")) F("cuKernelGetFunction")(&func, kern);
    run(file, "cuLibraryLoadFromFile", st, func);
    if (!st) F("cuLibraryUnload")(lib_);
    free(image);
  }
  int st = F("cuModuleLoad")(&(void *){0}, "/nonexistent.ptx");
  printf("missing-file cuModuleLoad status %d\n", st);
  st = F("cuLibraryLoadFromFile")(&(void *){0}, "/nonexistent.ptx", NULL, NULL, 0, NULL, NULL, 0);
  printf("missing-file cuLibraryLoadFromFile status %d\n", st);
  return 0;
}
