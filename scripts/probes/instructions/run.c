/* The instruction suite's GPU side: runs every form of the suite's PTX (written by
 * `cargo run -p cudrv-ptx --example instruction_suite`, one module per form after a line
 * "//@@ ID<tab>LANES<tab>W,W..") and prints one line per form:
 *
 *   ID<tab>LANE LANE ...        each lane's destination slots in hex, joined by ':',
 *                               a run of equal lanes written once as "VALUE*COUNT"
 *   ID<tab>LOAD <status>        the driver refused the module (the JIT log on stderr)
 *   ID<tab>LAUNCH <status>      the launch or its synchronisation failed
 *
 *   gcc -O2 -o /tmp/suite-run scripts/probes/instructions/run.c -ldl
 *   /tmp/suite-run suite.ptx > instruction-suite.txt
 *
 * libcuda.so.1 is dlopen'ed, or the library CUDRV_LIBCUDA names. No CUDA headers. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t dptr;
static int (*cuInit)(unsigned);
static int (*cuDeviceGet)(int *, int);
static int (*cuCtxCreate)(void **, unsigned, int);
static int (*cuCtxDestroy)(void *);
static int (*cuModuleLoadDataEx)(void **, const void *, unsigned, int *, void **);
static int (*cuModuleUnload)(void *);
static int (*cuModuleGetFunction)(void **, void *, const char *);
static int (*cuMemAlloc)(dptr *, size_t);
static int (*cuMemFree)(dptr);
static int (*cuMemsetD8)(dptr, unsigned char, size_t);
static int (*cuMemcpyDtoH)(void *, dptr, size_t);
static int (*cuCtxSynchronize)(void);
static int (*cuLaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                             void **, void **);

static void *sym(void *lib, const char *name) {
  void *f = dlsym(lib, name);
  if (!f) {
    fprintf(stderr, "missing %s\n", name);
    exit(2);
  }
  return f;
}

static void *ctx;
static void fresh_context(void) {
  if (ctx)
    cuCtxDestroy(ctx);
  int dev = 0;
  if (cuDeviceGet(&dev, 0) || cuCtxCreate(&ctx, 0, dev)) {
    fprintf(stderr, "no context\n");
    exit(2);
  }
}

static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc(n + 1);
  if (fread(s, 1, n, f) != (size_t)n)
    exit(2);
  s[n] = 0;
  fclose(f);
  return s;
}

static void print_lane(const unsigned char *rec, const int *w, int slots) {
  for (int j = 0; j < slots; j++) {
    uint64_t v = 0;
    memcpy(&v, rec + j * 8, w[j]);
    printf(j ? ":%llx" : "%llx", (unsigned long long)v);
  }
}

static void run_form(char *id, int lanes, const int *w, int slots, const char *ptx) {
  void *mod = NULL, *fn = NULL;
  char log[8192] = {0};
  int opts[2] = {5 /* ERROR_LOG_BUFFER */, 6 /* ERROR_LOG_BUFFER_SIZE_BYTES */};
  void *vals[2] = {log, (void *)(uintptr_t)sizeof log};
  int st = cuModuleLoadDataEx(&mod, ptx, 2, opts, vals);
  if (st == 0)
    st = cuModuleGetFunction(&fn, mod, "k");
  if (st != 0) {
    printf("%s\tLOAD %d\n", id, st);
    fprintf(stderr, "%s: %s\n", id, log);
    if (mod)
      cuModuleUnload(mod);
    return;
  }
  size_t bytes = (size_t)lanes * slots * 8;
  dptr out = 0;
  if (cuMemAlloc(&out, bytes) || cuMemsetD8(out, 0, bytes)) {
    fprintf(stderr, "allocation failed\n");
    exit(2);
  }
  void *args[] = {&out};
  unsigned blocks = (lanes + 127) / 128;
  st = cuLaunchKernel(fn, blocks, 1, 1, 128, 1, 1, 0, NULL, args, NULL);
  if (st == 0)
    st = cuCtxSynchronize();
  if (st != 0) {
    printf("%s\tLAUNCH %d\n", id, st);
    fresh_context();
    return;
  }
  unsigned char *host = malloc(bytes);
  if (cuMemcpyDtoH(host, out, bytes)) {
    fprintf(stderr, "copy failed\n");
    exit(2);
  }
  printf("%s\t", id);
  int i = 0;
  while (i < lanes) {
    int run = 1;
    while (i + run < lanes && memcmp(host + (size_t)i * slots * 8, host + (size_t)(i + run) * slots * 8, slots * 8) == 0)
      run++;
    if (i)
      printf(" ");
    print_lane(host + (size_t)i * slots * 8, w, slots);
    if (run > 1)
      printf("*%d", run);
    i += run;
  }
  printf("\n");
  free(host);
  cuMemFree(out);
  cuModuleUnload(mod);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s suite.ptx [ID-prefix]\n", argv[0]);
    return 2;
  }
  const char *path = getenv("CUDRV_LIBCUDA");
  void *lib = dlopen(path ? path : "libcuda.so.1", RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  cuInit = sym(lib, "cuInit");
  cuDeviceGet = sym(lib, "cuDeviceGet");
  cuCtxCreate = sym(lib, "cuCtxCreate_v2");
  cuCtxDestroy = sym(lib, "cuCtxDestroy_v2");
  cuModuleLoadDataEx = sym(lib, "cuModuleLoadDataEx");
  cuModuleUnload = sym(lib, "cuModuleUnload");
  cuModuleGetFunction = sym(lib, "cuModuleGetFunction");
  cuMemAlloc = sym(lib, "cuMemAlloc_v2");
  cuMemFree = sym(lib, "cuMemFree_v2");
  cuMemsetD8 = sym(lib, "cuMemsetD8_v2");
  cuMemcpyDtoH = sym(lib, "cuMemcpyDtoH_v2");
  cuCtxSynchronize = sym(lib, "cuCtxSynchronize");
  cuLaunchKernel = sym(lib, "cuLaunchKernel");
  if (cuInit(0)) {
    fprintf(stderr, "cuInit failed\n");
    return 2;
  }
  fresh_context();
  char *text = read_all(argv[1]);
  const char *prefix = argc > 2 ? argv[2] : "";
  char *p = strstr(text, "//@@ ");
  while (p) {
    char *next = strstr(p + 5, "//@@ ");
    char *eol = strchr(p, '\n');
    if (!eol)
      break;
    *eol = 0;
    if (next)
      *next = 0; /* the module's text ends here (restored below) */
    char *id = p + 5;
    char *tab1 = strchr(id, '\t');
    char *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
    if (!tab2) {
      fprintf(stderr, "bad header %s\n", id);
      return 2;
    }
    *tab1 = 0;
    int lanes = atoi(tab1 + 1);
    int w[8], slots = 0;
    char *s = tab2 + 1;
    while (*s && slots < 8) {
      w[slots++] = (int)strtol(s, &s, 10);
      if (*s != ',')
        break;
      s++;
    }
    if (strncmp(id, prefix, strlen(prefix)) == 0)
      run_form(id, lanes, w, slots, eol + 1);
    if (next)
      *next = '/';
    p = next;
  }
  return 0;
}
