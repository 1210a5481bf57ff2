/* Records what the real driver answers for the names libcuda.so.1 exports outside cuda.h:
 * the profiler (cudaProfiler.h), OpenGL, EGL and VDPAU interop (cudaGL.h, cudaEGL.h,
 * cudaVDPAU.h), on a machine with no display; and what its cuGetProcAddress knows of every
 * exported name. Each call runs in a child process (a crash is recorded, not fatal).
 *
 *   gcc -O1 -o interop_exports scripts/probes/interop_exports.c -ldl
 *   ./interop_exports /path/to/h200-libcuda-exports.txt
 *
 * Prints "call NAME FORM status N" (FORM: zero = every argument 0/NULL; out = out-pointers
 * valid, handles 0; FORM_ctx: the same with a primary context current) and "gpa NAME VERSION status N found 0|1". No CUDA headers: the
 * prototypes are written from the headers' documented signatures with plain C types. */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef int (*fn0)(void);
typedef int (*fnp)(void *, void *, void *, void *, void *, void *);

static void *lib;
static int with_context; /* a primary context is current during each call */
static uint64_t outs[6][64]; /* out-pointer targets */

static void call(const char *name, const char *form, int nargs, const int *is_out) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    void *f = dlsym(lib, name);
    if (!f) {
      printf("call %s %s missing\n", name, form);
      fflush(stdout);
      _exit(0);
    }
    int (*init)(unsigned) = (int (*)(unsigned))dlsym(lib, "cuInit");
    init(0);
    if (with_context) {
      int (*retain)(void **, int) = (int (*)(void **, int))dlsym(lib, "cuDevicePrimaryCtxRetain");
      int (*set_current)(void *) = (int (*)(void *))dlsym(lib, "cuCtxSetCurrent");
      void *ctx = NULL;
      if (retain(&ctx, 0) != 0 || set_current(ctx) != 0) _exit(3);
    }
    void *a[6] = {0};
    for (int i = 0; i < nargs && i < 6; i++)
      if (is_out && is_out[i]) a[i] = outs[i];
    alarm(20);
    int st = ((fnp)f)(a[0], a[1], a[2], a[3], a[4], a[5]);
    printf("call %s %s%s status %d\n", name, form, with_context ? "_ctx" : "", st);
    fflush(stdout);
    _exit(0);
  }
  int ws = 0;
  waitpid(pid, &ws, 0);
  if (WIFSIGNALED(ws)) printf("call %s %s%s signal %d\n", name, form, with_context ? "_ctx" : "", WTERMSIG(ws));
}

/* CUeglFrame as cudaEGL.h lays it out on Linux x86-64 (3 pointers, 9 unsigned ints: 64 bytes),
 * for cuEGLStreamProducerPresentFrame, which takes one by value. */
struct egl_frame {
  void *planes[3];
  unsigned int fields[10];
};

static void call_present_frame(const char *form, int outs_valid) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    int (*f)(void *, struct egl_frame, void *) =
        (int (*)(void *, struct egl_frame, void *))dlsym(lib, "cuEGLStreamProducerPresentFrame");
    int (*init)(unsigned) = (int (*)(unsigned))dlsym(lib, "cuInit");
    init(0);
    if (with_context) {
      int (*retain)(void **, int) = (int (*)(void **, int))dlsym(lib, "cuDevicePrimaryCtxRetain");
      int (*set_current)(void *) = (int (*)(void *))dlsym(lib, "cuCtxSetCurrent");
      void *ctx = NULL;
      if (retain(&ctx, 0) != 0 || set_current(ctx) != 0) _exit(3);
    }
    struct egl_frame frame;
    memset(&frame, 0, sizeof frame);
    alarm(20);
    int st = f(outs_valid ? outs[0] : NULL, frame, outs_valid ? outs[2] : NULL);
    printf("call cuEGLStreamProducerPresentFrame %s%s status %d\n", form, with_context ? "_ctx" : "", st);
    fflush(stdout);
    _exit(0);
  }
  int ws = 0;
  waitpid(pid, &ws, 0);
  if (WIFSIGNALED(ws))
    printf("call cuEGLStreamProducerPresentFrame %s%s signal %d\n", form, with_context ? "_ctx" : "", WTERMSIG(ws));
}

struct probe {
  const char *name;
  int nargs;
  int out[6]; /* which arguments are out-pointers */
};

/* Arguments as cudaProfiler.h, cudaGL.h, cudaEGL.h, cudaVDPAU.h declare them (the one that
 * takes a struct by value has its own caller above). */
static const struct probe probes[] = {
    {"cuProfilerInitialize", 3, {0}},
    {"cuProfilerStart", 0, {0}},
    {"cuProfilerStop", 0, {0}},
    {"cuGLInit", 0, {0}},
    {"cuGLCtxCreate", 3, {1}},
    {"cuGLCtxCreate_v2", 3, {1}},
    {"cuGLGetDevices", 4, {1, 1}},
    {"cuGLGetDevices_v2", 4, {1, 1}},
    {"cuGLRegisterBufferObject", 1, {0}},
    {"cuGLUnregisterBufferObject", 1, {0}},
    {"cuGLMapBufferObject", 3, {1, 1}},
    {"cuGLMapBufferObject_v2", 3, {1, 1}},
    {"cuGLMapBufferObject_v2_ptds", 3, {1, 1}},
    {"cuGLMapBufferObjectAsync", 4, {1, 1}},
    {"cuGLMapBufferObjectAsync_v2", 4, {1, 1}},
    {"cuGLMapBufferObjectAsync_v2_ptsz", 4, {1, 1}},
    {"cuGLUnmapBufferObject", 1, {0}},
    {"cuGLUnmapBufferObjectAsync", 2, {0}},
    {"cuGLSetBufferObjectMapFlags", 2, {0}},
    {"cuGraphicsGLRegisterBuffer", 3, {1}},
    {"cuGraphicsGLRegisterImage", 4, {1}},
    {"cuEGLApiInit", 0, {0}},
    {"cuGraphicsEGLRegisterImage", 3, {1}},
    {"cuGraphicsResourceGetMappedEglFrame", 4, {1}},
    {"cuEGLStreamConsumerConnect", 2, {1}},
    {"cuEGLStreamConsumerConnectWithFlags", 3, {1}},
    {"cuEGLStreamConsumerDisconnect", 1, {1}},
    {"cuEGLStreamConsumerAcquireFrame", 4, {1, 1, 1}},
    {"cuEGLStreamConsumerReleaseFrame", 3, {1, 0, 1}},
    {"cuEGLStreamProducerConnect", 4, {1}},
    {"cuEGLStreamProducerDisconnect", 1, {1}},
    {"cuEGLStreamProducerReturnFrame", 3, {1, 1, 1}},
    {"cuGraphicsVDPAURegisterOutputSurface", 3, {1}},
    {"cuGraphicsVDPAURegisterVideoSurface", 3, {1}},
    {"cuVDPAUCtxCreate", 5, {1, 0, 0, 0, 0}},
    {"cuVDPAUCtxCreate_v2", 5, {1, 0, 0, 0, 0}},
    {"cuVDPAUGetDevice", 3, {1}},
};

int main(int argc, char **argv) {
  lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "no libcuda.so.1\n");
    return 2;
  }
  for (with_context = 0; with_context < 2; with_context++) {
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
      call(probes[i].name, "zero", probes[i].nargs, NULL);
      call(probes[i].name, "out", probes[i].nargs, probes[i].out);
    }
    call_present_frame("zero", 0);
    call_present_frame("out", 1);
  }
  /* cuGetProcAddress_v2(symbol, &pfn, cudaVersion, flags, &status) of every exported name. */
  int (*init)(unsigned) = (int (*)(unsigned))dlsym(lib, "cuInit");
  int (*gpa)(const char *, void **, int, uint64_t, int *) =
      (int (*)(const char *, void **, int, uint64_t, int *))dlsym(lib, "cuGetProcAddress_v2");
  init(0);
  if (argc > 1 && gpa) {
    FILE *f = fopen(argv[1], "r");
    char line[256];
    static const int versions[] = {11030, 12000, 13000};
    while (f && fgets(line, sizeof line, f)) {
      if (line[0] == '#' || line[0] == '\n') continue;
      line[strcspn(line, "\n")] = 0;
      for (int v = 0; v < 3; v++) {
        void *p = NULL;
        int found = -1;
        int st = gpa(line, &p, versions[v], 0, &found);
        printf("gpa %s %d status %d found %d ptr %d\n", line, versions[v], st, found, p != NULL);
      }
    }
  }
  /* cuGetExportTable with an unknown id: status, and whether the out-pointer was written. */
  int (*get_export)(const void **, const void *) = (int (*)(const void **, const void *))dlsym(lib, "cuGetExportTable");
  if (get_export) {
    unsigned char id[16];
    memset(id, 0x5a, sizeof id);
    const void *table = (const void *)0x1234;
    int st = get_export(&table, id);
    printf("export_table unknown status %d written %d\n", st, table != (const void *)0x1234);
  }
  return 0;
}
