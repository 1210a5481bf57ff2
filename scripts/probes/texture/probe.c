/* Texture and surface semantics: fetches through texture objects and surface accesses
 * over a deterministic grid of formats, channels, read modes, filter modes, address modes,
 * normalised coordinates and coordinates (edges, out of range, texel-centre fractions near
 * the 1/256 steps of linear filtering's 9-bit weights), with every output bit printed in
 * hex, one line per case. The same program runs on the H200 (its recording is
 * docs/gpu-runs/h200/texture-probe-2026-12-05.txt) and on the stand-in
 * (standin/tests/texture_probe.rs compares the two).
 *
 *   python3 scripts/probes/texture/build.py        # kernels.cu -> kernels.ptx (NVRTC 13.0)
 *   gcc -O2 -o /tmp/tp scripts/probes/texture/probe.c -ldl
 *   /tmp/tp scripts/probes/texture/kernels.ptx > texture-probe.txt
 *
 * libcuda.so.1 is dlopen'ed, or the library CUDRV_LIBCUDA names. No CUDA headers: the
 * structures are written out from cuda.h (CUDA 13.0, x86-64). The last case makes a
 * surface read trap (the context is unusable after it). */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t dptr;
typedef struct {
  size_t Width, Height, Depth;
  int Format;
  unsigned NumChannels, Flags;
} ARRAY3D_DESC;
typedef struct {
  size_t srcXInBytes, srcY, srcZ, srcLOD;
  int srcMemoryType;
  const void *srcHost;
  dptr srcDevice;
  void *srcArray, *reserved0;
  size_t srcPitch, srcHeight;
  size_t dstXInBytes, dstY, dstZ, dstLOD;
  int dstMemoryType;
  void *dstHost;
  dptr dstDevice;
  void *dstArray, *reserved1;
  size_t dstPitch, dstHeight;
  size_t WidthInBytes, Height, Depth;
} MEMCPY3D;
typedef struct {
  int resType;
  union {
    struct {
      void *hArray;
    } array;
    struct {
      dptr devPtr;
      int format;
      unsigned numChannels;
      size_t sizeInBytes;
    } linear;
    struct {
      dptr devPtr;
      int format;
      unsigned numChannels;
      size_t width, height, pitchInBytes;
    } pitch2D;
    int reserved[32];
  } res;
  unsigned flags;
} RES_DESC;
typedef struct {
  int addressMode[3];
  int filterMode;
  unsigned flags, maxAnisotropy;
  int mipmapFilterMode;
  float mipmapLevelBias, minMipmapLevelClamp, maxMipmapLevelClamp;
  float borderColor[4];
  int reserved[12];
} TEX_DESC;

enum { U8 = 1, U16 = 2, U32 = 3, S8 = 8, S16 = 9, S32 = 10, F16 = 0x10, F32 = 0x20 };
#define LAYERED 1
#define SURFACE_LDST 2
#define CUBEMAP 4
#define READ_AS_INTEGER 1
#define NORMALIZED 2

static int (*cuInit)(unsigned);
static int (*cuDeviceGet)(int *, int);
static int (*cuDevicePrimaryCtxRetain)(void **, int);
static int (*cuCtxSetCurrent)(void *);
static int (*cuCtxSynchronize)(void);
static int (*cuModuleLoadDataEx)(void **, const void *, unsigned, int *, void **);
static int (*cuModuleGetFunction)(void **, void *, const char *);
static int (*cuMemAlloc)(dptr *, size_t);
static int (*cuMemFree)(dptr);
static int (*cuMemcpyHtoD)(dptr, const void *, size_t);
static int (*cuMemcpyDtoH)(void *, dptr, size_t);
static int (*cuMemsetD8)(dptr, unsigned char, size_t);
static int (*cuArray3DCreate)(void **, const ARRAY3D_DESC *);
static int (*cuArrayDestroy)(void *);
static int (*cuMemcpy3D)(const MEMCPY3D *);
static int (*cuTexObjectCreate)(uint64_t *, const RES_DESC *, const TEX_DESC *, const void *);
static int (*cuTexObjectDestroy)(uint64_t);
static int (*cuSurfObjectCreate)(uint64_t *, const RES_DESC *);
static int (*cuSurfObjectDestroy)(uint64_t);
static int (*cuLaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                             void **, void **);

/* The PTX text; each kernel is loaded as a module of its own (the header and its entry),
 * so that a kernel a driver refuses costs only its own cases: its lines say
 * "unavailable" with the status, and the JIT's log goes to stderr. */
static char *ptx_text;
static dptr dcoords, dout;
#define MAXN 256

static void check(int st, const char *what) {
  if (st != 0) {
    printf("error %s status %d\n", what, st);
    exit(1);
  }
}

/* The kernel `name`, loaded on first use; NULL (and the status in *status) if the driver
 * refuses its module or it is not in the PTX. */
static void *fn_of(const char *name, int *status) {
  static struct {
    char name[32];
    void *fn;
    int status;
  } cache[128];
  static int cached = 0;
  for (int i = 0; i < cached; i++)
    if (strcmp(cache[i].name, name) == 0) {
      *status = cache[i].status;
      return cache[i].fn;
    }
  char needle[64];
  snprintf(needle, sizeof needle, ".visible .entry %s(", name);
  const char *start = strstr(ptx_text, needle);
  const char *first = strstr(ptx_text, ".visible .entry ");
  void *fn = NULL;
  int st = 500; /* CUDA_ERROR_NOT_FOUND: no such entry in the text */
  if (start && first) {
    const char *end = strstr(start + 1, ".visible .entry ");
    if (!end) end = start + strlen(start);
    size_t head = (size_t)(first - ptx_text), body = (size_t)(end - start);
    char *text = calloc(1, head + body + 2);
    memcpy(text, ptx_text, head);
    memcpy(text + head, start, body);
    char log[4096] = {0};
    int opts[2] = {5 /* CU_JIT_ERROR_LOG_BUFFER */, 6 /* CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES */};
    void *vals[2] = {log, (void *)(uintptr_t)sizeof log};
    void *module = NULL;
    st = cuModuleLoadDataEx(&module, text, 2, opts, vals);
    free(text);
    if (st == 0) st = cuModuleGetFunction(&fn, module, name);
    if (st != 0) {
      fn = NULL;
      fprintf(stderr, "%s: module status %d, log: %s\n", name, st, log);
    }
  }
  if (cached < 128) {
    snprintf(cache[cached].name, sizeof cache[cached].name, "%s", name);
    cache[cached].fn = fn;
    cache[cached].status = st;
    cached++;
  }
  *status = st;
  return fn;
}

static void *sym(void *lib, const char *name) {
  void *f = dlsym(lib, name);
  if (!f) {
    fprintf(stderr, "missing %s\n", name);
    exit(2);
  }
  return f;
}

static int fmt_bytes(int f) { return f == U8 || f == S8 ? 1 : f == U16 || f == S16 || f == F16 ? 2 : 4; }
static const char *fmt_name(int f) {
  switch (f) {
  case U8: return "u8";
  case U16: return "u16";
  case U32: return "u32";
  case S8: return "s8";
  case S16: return "s16";
  case S32: return "s32";
  case F16: return "f16";
  default: return "f32";
  }
}
static const char *addr_name[] = {"wrap", "clamp", "mirror", "border"};

/* An exactly representable half from a small multiple of 1/4. */
static uint16_t half_of(float v) {
  uint32_t b;
  memcpy(&b, &v, 4);
  uint32_t sign = (b >> 16) & 0x8000;
  int exp = (int)((b >> 23) & 0xff) - 127 + 15;
  if ((b & 0x7fffffff) == 0) return (uint16_t)sign;
  return (uint16_t)(sign | (uint32_t)exp << 10 | (b >> 13 & 0x3ff));
}

/* Channel c of element k of a texture of format f: a fixed pattern with each format's
 * extremes. */
static void put_channel(unsigned char *p, int f, int k, int c) {
  int i = k * 4 + c;
  switch (f) {
  case U8: { unsigned char v = (unsigned char)(i % 7 == 0 ? 255 : i * 37 + 5); memcpy(p, &v, 1); break; }
  case S8: { signed char v = (signed char)(i % 7 == 0 ? -128 : i % 5 == 0 ? 127 : i * 37 - 60); memcpy(p, &v, 1); break; }
  case U16: { uint16_t v = (uint16_t)(i % 7 == 0 ? 65535 : i * 4099 + 3); memcpy(p, &v, 2); break; }
  case S16: { int16_t v = (int16_t)(i % 7 == 0 ? -32768 : i % 5 == 0 ? 32767 : i * 2731 - 20000); memcpy(p, &v, 2); break; }
  case U32: { uint32_t v = i % 7 == 0 ? 0xffffffffu : (uint32_t)i * 0x10001u + 7; memcpy(p, &v, 4); break; }
  case S32: { int32_t v = i % 7 == 0 ? INT32_MIN : i * 100003 - 900000; memcpy(p, &v, 4); break; }
  case F16: { uint16_t v = half_of((float)(i * 3 - 40) * 0.25f); memcpy(p, &v, 2); break; }
  default: { float v = (float)(i * 7 - 50) * 0.375f; memcpy(p, &v, 4); break; }
  }
}

/* Fills `n` elements of format f with `ch` channels. */
static unsigned char *texels(int f, int ch, int n) {
  int e = fmt_bytes(f) * ch;
  unsigned char *h = calloc((size_t)n, (size_t)e);
  for (int k = 0; k < n; k++)
    for (int c = 0; c < ch; c++) put_channel(h + (size_t)k * e + (size_t)c * fmt_bytes(f), f, k, c);
  return h;
}

/* A w x h x d array (h, d 0 as cuArray3DCreate takes them) filled with the pattern. */
static void *make_array(int f, int ch, size_t w, size_t h, size_t d, unsigned flags) {
  ARRAY3D_DESC a = {w, h, d, f, (unsigned)ch, flags};
  void *arr = NULL;
  check(cuArray3DCreate(&arr, &a), "cuArray3DCreate");
  size_t rows = h ? h : 1, slices = d ? d : 1, e = (size_t)fmt_bytes(f) * ch;
  unsigned char *host = texels(f, ch, (int)(w * rows * slices));
  MEMCPY3D m;
  memset(&m, 0, sizeof m);
  m.srcMemoryType = 1;
  m.srcHost = host;
  m.srcPitch = w * e;
  m.srcHeight = rows;
  m.dstMemoryType = 3;
  m.dstArray = arr;
  m.WidthInBytes = w * e;
  m.Height = rows;
  m.Depth = slices;
  check(cuMemcpy3D(&m), "cuMemcpy3D");
  free(host);
  return arr;
}

static uint64_t tex_object(RES_DESC *r, int addr, int linear, unsigned flags) {
  TEX_DESC t;
  memset(&t, 0, sizeof t);
  for (int i = 0; i < 3; i++) t.addressMode[i] = addr;
  t.filterMode = linear;
  t.flags = flags;
  t.borderColor[0] = 0.5f;
  t.borderColor[1] = -2.0f;
  t.borderColor[2] = 7.0f;
  t.borderColor[3] = 0.25f;
  uint64_t h = 0;
  int st = cuTexObjectCreate(&h, r, &t, NULL);
  if (st != 0) {
    printf("texcreate addr=%s filt=%d flags=%u status %d\n", addr_name[addr], linear, flags, st);
    return 0;
  }
  return h;
}

static uint64_t array_tex(void *arr, int addr, int linear, unsigned flags) {
  RES_DESC r;
  memset(&r, 0, sizeof r);
  r.resType = 0;
  r.res.array.hArray = arr;
  return tex_object(&r, addr, linear, flags);
}

/* Launches kernel `name` over n coordinates (16 bytes each) with object h and prints
 * each 16-byte result with `tag` and the coordinates. */
static void run(const char *name, uint64_t h, const void *coords, int n, const char *tag, int int_coords) {
  int st;
  void *fn = fn_of(name, &st);
  if (!fn) {
    printf("%s %s unavailable status %d\n", name, tag, st);
    return;
  }
  check(cuMemcpyHtoD(dcoords, coords, (size_t)n * 16), "coords");
  check(cuMemsetD8(dout, 0xEE, (size_t)n * 16), "memset");
  void *args[] = {&h, &dcoords, &dout, &n};
  check(cuLaunchKernel(fn, (unsigned)(n + 63) / 64, 1, 1, 64, 1, 1, 0, NULL, args, NULL), "launch");
  st = cuCtxSynchronize();
  if (st != 0) {
    printf("%s %s sync status %d\n", name, tag, st);
    exit(0);
  }
  uint32_t out[MAXN * 4];
  check(cuMemcpyDtoH(out, dout, (size_t)n * 16), "out");
  const float *cf = coords;
  const int *ci = coords;
  for (int i = 0; i < n; i++) {
    if (int_coords)
      printf("%s %s c=%d,%d,%d ->", name, tag, ci[4 * i], ci[4 * i + 1], ci[4 * i + 2]);
    else
      printf("%s %s c=%.9g,%.9g,%.9g,%.9g ->", name, tag, cf[4 * i], cf[4 * i + 1], cf[4 * i + 2], cf[4 * i + 3]);
    for (int k = 0; k < 4; k++) printf(" %08x", out[4 * i + k]);
    printf("\n");
  }
}

static void query(const char *kernel, uint64_t h, int count, const char *tag) {
  int st;
  void *fn = fn_of(kernel, &st);
  if (!fn) {
    printf("%s %s unavailable status %d\n", kernel, tag, st);
    return;
  }
  void *args[] = {&h, &dout};
  check(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL), "launch");
  check(cuCtxSynchronize(), "sync");
  int32_t out[16];
  check(cuMemcpyDtoH(out, dout, (size_t)count * 4), "out");
  printf("%s %s ->", kernel, tag);
  for (int k = 0; k < count; k++) printf(" %x", (unsigned)out[k]);
  printf("\n");
}

/* The x coordinates (unnormalised, in texels) every 1D/2D case reads. */
static const float XS[] = {-1.25f, -0.5f, 0.0f, 0.25f, 0.5f, 0.5f + 1.0f / 512, 0.5f + 1.0f / 1024,
                           0.5f + 3.0f / 1024, 1.0f + 127.0f / 256, 1.75f, 2.999f, 4.5f, 4.99f, 5.0f, 6.5f, 11.25f};
#define NXS (int)(sizeof XS / sizeof XS[0])
static const float YS[] = {0.5f, 1.25f + 1.0f / 512, 4.25f};
#define NYS (int)(sizeof YS / sizeof YS[0])
#define W 5
#define H 4

static const char *kind_of(int f, unsigned flags) {
  int is_float = f == F16 || f == F32 || (!(flags & READ_AS_INTEGER) && fmt_bytes(f) < 4);
  if (is_float) return "f";
  return f == S8 || f == S16 || f == S32 ? "s" : "u";
}

/* 2D (and 1D, via its first row) fetches of one texture configuration. */
static void tex2d_case(void *arr2, void *arr1, int f, int ch, int addr, int linear, unsigned flags) {
  char tag[128], kernel[32];
  const char *k = kind_of(f, flags);
  snprintf(tag, sizeof tag, "%sx%d %s %s %s%s", fmt_name(f), ch, addr_name[addr], linear ? "linear" : "point",
           flags & READ_AS_INTEGER ? "int" : "float", (flags & NORMALIZED) ? " norm" : "");
  float c[MAXN * 4];
  int n = 0;
  float sx = (flags & NORMALIZED) ? 1.0f / W : 1.0f, sy = (flags & NORMALIZED) ? 1.0f / H : 1.0f;
  uint64_t h2 = array_tex(arr2, addr, linear, flags);
  if (!h2) return;
  for (int j = 0; j < NYS; j++)
    for (int i = 0; i < NXS; i++) {
      c[4 * n] = XS[i] * sx;
      c[4 * n + 1] = YS[j] * sy;
      c[4 * n + 2] = 0;
      c[4 * n + 3] = 0;
      n++;
    }
  snprintf(kernel, sizeof kernel, "tex2d_%s", k);
  run(kernel, h2, c, n, tag, 0);
  cuTexObjectDestroy(h2);
  uint64_t h1 = array_tex(arr1, addr, linear, flags);
  if (!h1) return;
  snprintf(kernel, sizeof kernel, "tex1d_%s", k);
  run(kernel, h1, c, NXS, tag, 0);
  cuTexObjectDestroy(h1);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s kernels.ptx\n", argv[0]);
    return 2;
  }
  const char *path = getenv("CUDRV_LIBCUDA");
  void *lib = dlopen(path ? path : "libcuda.so.1", RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 2;
  }
  cuInit = sym(lib, "cuInit");
  cuDeviceGet = sym(lib, "cuDeviceGet");
  cuDevicePrimaryCtxRetain = sym(lib, "cuDevicePrimaryCtxRetain");
  cuCtxSetCurrent = sym(lib, "cuCtxSetCurrent");
  cuCtxSynchronize = sym(lib, "cuCtxSynchronize");
  cuModuleLoadDataEx = sym(lib, "cuModuleLoadDataEx");
  cuModuleGetFunction = sym(lib, "cuModuleGetFunction");
  cuMemAlloc = sym(lib, "cuMemAlloc_v2");
  cuMemFree = sym(lib, "cuMemFree_v2");
  cuMemcpyHtoD = sym(lib, "cuMemcpyHtoD_v2");
  cuMemcpyDtoH = sym(lib, "cuMemcpyDtoH_v2");
  cuMemsetD8 = sym(lib, "cuMemsetD8_v2");
  cuArray3DCreate = sym(lib, "cuArray3DCreate_v2");
  cuArrayDestroy = sym(lib, "cuArrayDestroy");
  cuMemcpy3D = sym(lib, "cuMemcpy3D_v2");
  cuTexObjectCreate = sym(lib, "cuTexObjectCreate");
  cuTexObjectDestroy = sym(lib, "cuTexObjectDestroy");
  cuSurfObjectCreate = sym(lib, "cuSurfObjectCreate");
  cuSurfObjectDestroy = sym(lib, "cuSurfObjectDestroy");
  cuLaunchKernel = sym(lib, "cuLaunchKernel");

  FILE *fp = fopen(argv[1], "rb");
  if (!fp) {
    perror(argv[1]);
    return 2;
  }
  fseek(fp, 0, SEEK_END);
  long len = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  char *ptx = calloc(1, (size_t)len + 1);
  if (fread(ptx, 1, (size_t)len, fp) != (size_t)len) return 2;
  ptx_text = ptx;
  fclose(fp);

  int dev = 0;
  void *ctx = NULL;
  check(cuInit(0), "cuInit");
  check(cuDeviceGet(&dev, 0), "cuDeviceGet");
  check(cuDevicePrimaryCtxRetain(&ctx, dev), "retain");
  check(cuCtxSetCurrent(ctx), "setcurrent");
  check(cuMemAlloc(&dcoords, MAXN * 16), "alloc");
  check(cuMemAlloc(&dout, MAXN * 16), "alloc");

  /* 1. Every format, 1 and 4 channels (2: section 2), each read mode it allows, point and linear where
   * the read is a float, clamp and border, unnormalised coordinates. */
  static const int fmts[] = {U8, U16, U32, S8, S16, S32, F16, F32};
  static const int chans[] = {1, 4};
  for (int fi = 0; fi < 8; fi++)
    for (int ci = 0; ci < 2; ci++) {
      int f = fmts[fi], ch = chans[ci];
      void *a2 = make_array(f, ch, W, H, 0, 0), *a1 = make_array(f, ch, W, 0, 0, 0);
      for (int rm = 0; rm < 2; rm++) {
        unsigned flags = rm ? READ_AS_INTEGER : 0;
        if (rm && (f == F16 || f == F32)) continue;
        int is_float = !strcmp(kind_of(f, flags), "f");
        for (int lin = 0; lin < (is_float ? 2 : 1); lin++)
          for (int addr = 1; addr <= 3; addr += 2) tex2d_case(a2, a1, f, ch, addr, lin, flags);
      }
      cuArrayDestroy(a2);
      cuArrayDestroy(a1);
    }

  /* 2. Every address mode with normalised and unnormalised coordinates, point and
   * linear, on u8x4 (read as float), s16x1 (as float) and f32x2. */
  static const int afmt[][2] = {{U8, 4}, {S16, 1}, {F32, 2}};
  for (int k = 0; k < 3; k++) {
    int f = afmt[k][0], ch = afmt[k][1];
    void *a2 = make_array(f, ch, W, H, 0, 0), *a1 = make_array(f, ch, W, 0, 0, 0);
    for (int norm = 0; norm < 2; norm++)
      for (int lin = 0; lin < 2; lin++)
        for (int addr = 0; addr < 4; addr++) tex2d_case(a2, a1, f, ch, addr, lin, norm ? NORMALIZED : 0);
    cuArrayDestroy(a2);
    cuArrayDestroy(a1);
  }

  /* 3. txq on a few configurations. */
  {
    void *a2 = make_array(U8, 4, W, H, 0, 0), *a3 = make_array(S16, 2, 3, 3, 2, 0);
    void *al = make_array(F32, 1, W, H, 3, LAYERED);
    uint64_t t;
    if ((t = array_tex(a2, 0, 1, NORMALIZED))) query("txq", t, 11, "u8x4 wrap linear norm float"), cuTexObjectDestroy(t);
    if ((t = array_tex(a2, 3, 0, READ_AS_INTEGER))) query("txq", t, 11, "u8x4 border point int"), cuTexObjectDestroy(t);
    if ((t = array_tex(a3, 2, 0, NORMALIZED))) query("txq", t, 11, "s16x2 3d mirror point norm float"), cuTexObjectDestroy(t);
    if ((t = array_tex(al, 1, 1, 0))) query("txq", t, 11, "f32x1 layered clamp linear"), cuTexObjectDestroy(t);
    cuArrayDestroy(a2);
    cuArrayDestroy(a3);
    cuArrayDestroy(al);
  }

  /* 4. 3D: f32x1 and u8x2 (as float), point and linear, clamp and border. */
  {
    static const float c3[][3] = {{0.5f, 0.5f, 0.5f}, {1.0f, 1.5f, 1.0f}, {2.75f, 0.25f, 1.5f + 1.0f / 512},
                                  {-1.0f, 1.0f, 0.75f}, {1.5f, 3.5f, 2.5f}, {1.2f, 2.6f, 0.9f}};
    float c[6 * 4];
    for (int i = 0; i < 6; i++) c[4 * i] = c3[i][0], c[4 * i + 1] = c3[i][1], c[4 * i + 2] = c3[i][2], c[4 * i + 3] = 0;
    static const int f3[][2] = {{F32, 1}, {U8, 2}};
    for (int k = 0; k < 2; k++) {
      void *a = make_array(f3[k][0], f3[k][1], 3, 3, 2, 0);
      for (int lin = 0; lin < 2; lin++)
        for (int addr = 1; addr <= 3; addr += 2) {
          char tag[96];
          snprintf(tag, sizeof tag, "%sx%d addr=%s filt=%s", fmt_name(f3[k][0]), f3[k][1], addr_name[addr],
                   lin ? "linear" : "point");
          uint64_t t = array_tex(a, addr, lin, 0);
          if (t) run("tex3d_f", t, c, 6, tag, 0), cuTexObjectDestroy(t);
        }
      cuArrayDestroy(a);
    }
  }

  /* 5. Layered 1D and 2D (3 layers): layers in and out of range. */
  {
    static const float cl[][3] = {{0.5f, 0.5f, 0}, {2.25f, 1.75f, 1}, {3.5f, 3.5f, 2}, {1.5f, 0.5f, 3}, {1.5f, 0.5f, -1}};
    float c[5 * 4];
    for (int i = 0; i < 5; i++) c[4 * i] = cl[i][0], c[4 * i + 1] = cl[i][1], c[4 * i + 2] = cl[i][2], c[4 * i + 3] = 0;
    void *a1 = make_array(F32, 1, W, 0, 3, LAYERED), *a2 = make_array(U16, 1, W, H, 3, LAYERED);
    for (int lin = 0; lin < 2; lin++) {
      uint64_t t;
      const char *tag = lin ? "linear clamp" : "point clamp";
      if ((t = array_tex(a1, 1, lin, 0))) run("tex1dl_f", t, c, 5, tag, 0), cuTexObjectDestroy(t);
      if ((t = array_tex(a2, 1, lin, 0))) run("tex2dl_f", t, c, 5, tag, 0), cuTexObjectDestroy(t);
    }
    cuArrayDestroy(a1);
    cuArrayDestroy(a2);
  }

  /* 6. tex1Dfetch on linear memory (integer coordinates; out of range reads 0). */
  {
    /* The kernel converts x to an int. */
    float ci[8 * 4];
    static const float xs[] = {-1, 0, 3, 9, 10, 11, 1000, 2};
    for (int i = 0; i < 8; i++) ci[4 * i] = xs[i], ci[4 * i + 1] = ci[4 * i + 2] = ci[4 * i + 3] = 0;
    static const int lf[][3] = {{U8, 4, 0}, {F32, 1, 0}, {S16, 2, READ_AS_INTEGER}, {U16, 1, 0}};
    for (int k = 0; k < 4; k++) {
      int f = lf[k][0], ch = lf[k][1], e = fmt_bytes(f) * ch;
      dptr buf = 0;
      check(cuMemAlloc(&buf, 512), "alloc");
      unsigned char *h = texels(f, ch, 10);
      check(cuMemcpyHtoD(buf, h, (size_t)(10 * e)), "htod");
      free(h);
      RES_DESC r;
      memset(&r, 0, sizeof r);
      r.resType = 2;
      r.res.linear.devPtr = buf;
      r.res.linear.format = f;
      r.res.linear.numChannels = (unsigned)ch;
      r.res.linear.sizeInBytes = (size_t)(10 * e);
      uint64_t t = tex_object(&r, 1, 0, (unsigned)lf[k][2]);
      char tag[64], kernel[16];
      snprintf(tag, sizeof tag, "%sx%d read=%s", fmt_name(f), ch, lf[k][2] ? "int" : "float");
      snprintf(kernel, sizeof kernel, "fetch_%s", kind_of(f, (unsigned)lf[k][2]));
      if (t) run(kernel, t, ci, 8, tag, 0), cuTexObjectDestroy(t);
      cuMemFree(buf);
    }
  }

  /* 7. tex2DLod on a plain array (the level does not matter) and tex2Dgather (tld4). */
  {
    void *a = make_array(U8, 4, W, H, 0, 0), *af = make_array(F32, 2, W, H, 0, 0);
    static const float cg[][2] = {{0.5f, 0.5f}, {1.0f, 1.0f}, {2.3f, 1.7f}, {0.2f, 3.9f}, {4.9f, 0.1f}, {-1.0f, 5.0f}};
    float c[24 * 4];
    int n = 0;
    for (int comp = 0; comp < 4; comp++)
      for (int i = 0; i < 6; i++, n++)
        c[4 * n] = cg[i][0], c[4 * n + 1] = cg[i][1], c[4 * n + 2] = 0, c[4 * n + 3] = (float)comp;
    for (int addr = 0; addr < 4; addr++) {
      char tag[64];
      uint64_t t;
      snprintf(tag, sizeof tag, "u8x4 float addr=%s", addr_name[addr]);
      if ((t = array_tex(a, addr, 0, 0))) run("gather_f", t, c, n, tag, 0), cuTexObjectDestroy(t);
      snprintf(tag, sizeof tag, "u8x4 int addr=%s", addr_name[addr]);
      if ((t = array_tex(a, addr, 0, READ_AS_INTEGER))) run("gather_u", t, c, n, tag, 0), cuTexObjectDestroy(t);
      snprintf(tag, sizeof tag, "f32x2 norm addr=%s", addr_name[addr]);
      float cn[24 * 4];
      for (int i = 0; i < n; i++)
        cn[4 * i] = c[4 * i] / W, cn[4 * i + 1] = c[4 * i + 1] / H, cn[4 * i + 2] = 0, cn[4 * i + 3] = c[4 * i + 3];
      if ((t = array_tex(af, addr, 1, NORMALIZED))) run("gather_f", t, cn, n, tag, 0), cuTexObjectDestroy(t);
    }
    for (int i = 0; i < n; i++) c[4 * i + 3] = (float)(i % 3) * 0.75f;
    uint64_t t;
    if ((t = array_tex(a, 1, 1, 0))) run("tex2dlod_f", t, c, 6, "u8x4 linear clamp", 0), cuTexObjectDestroy(t);
    cuArrayDestroy(a);
    cuArrayDestroy(af);
  }

  /* 8. Cube maps (4x4 faces) and a cube map array (2 cubes), point and linear: each
   * face's centre, edges and corners, ties between axes; tex2DGrad (level 0); a pitched
   * 2D texture. */
  {
    static const float dirs[][3] = {{1, 0, 0},     {-1, 0, 0},   {0, 1, 0},       {0, -1, 0},  {0, 0, 1},
                                    {0, 0, -1},    {1, 0.5f, 0.25f}, {-1, -0.9f, 0.3f}, {0.2f, 1, -0.7f},
                                    {0.3f, -1, 0.99f}, {-0.4f, 0.6f, 1}, {0.1f, -0.2f, -1}, {1, 1, 0},
                                    {1, 1, 1},     {-1, 1, -1},  {0.5f, 0.5f, -0.5f}, {2, 0.2f, 1.99f}};
    float c[17 * 4 * 3];
    int n = 0;
    for (int l = 0; l < 3; l++)
      for (int i = 0; i < 17; i++, n++)
        c[4 * n] = dirs[i][0], c[4 * n + 1] = dirs[i][1], c[4 * n + 2] = dirs[i][2], c[4 * n + 3] = (float)l;
    void *cube = make_array(F32, 1, 4, 4, 6, CUBEMAP), *cubes = make_array(U8, 4, 4, 4, 12, CUBEMAP | LAYERED);
    for (int lin = 0; lin < 2; lin++) {
      uint64_t t;
      const char *tag = lin ? "linear" : "point";
      if ((t = array_tex(cube, 1, lin, 0))) run("texcube_f", t, c, 17, tag, 0), cuTexObjectDestroy(t);
      if ((t = array_tex(cubes, 1, lin, 0))) run("texcubel_f", t, c, n, tag, 0), cuTexObjectDestroy(t);
    }
    cuArrayDestroy(cube);
    cuArrayDestroy(cubes);
    void *a = make_array(F32, 1, W, H, 0, 0);
    float g[6 * 4];
    static const float cg[][3] = {{0.5f, 0.5f, 0}, {1.3f, 2.2f, 1}, {2.5f, 1.5f, 4}, {3.9f, 0.1f, 0.5f}, {4.5f, 3.5f, 2}, {1, 1, 8}};
    for (int i = 0; i < 6; i++) g[4 * i] = cg[i][0], g[4 * i + 1] = cg[i][1], g[4 * i + 2] = 0, g[4 * i + 3] = cg[i][2];
    uint64_t t;
    if ((t = array_tex(a, 1, 1, 0))) run("tex2dgrad_f", t, g, 6, "f32x1 linear clamp", 0), cuTexObjectDestroy(t);
    cuArrayDestroy(a);
    /* Pitched: 5 x 4 u16x2 elements, rows 64 bytes apart. */
    dptr buf = 0;
    check(cuMemAlloc(&buf, 64 * H), "alloc");
    unsigned char *h = texels(U16, 2, 16 * H);
    check(cuMemcpyHtoD(buf, h, 64 * H), "htod");
    free(h);
    RES_DESC r;
    memset(&r, 0, sizeof r);
    r.resType = 3;
    r.res.pitch2D.devPtr = buf;
    r.res.pitch2D.format = U16;
    r.res.pitch2D.numChannels = 2;
    r.res.pitch2D.width = W;
    r.res.pitch2D.height = H;
    r.res.pitch2D.pitchInBytes = 64;
    float p[NXS * 4];
    for (int i = 0; i < NXS; i++) p[4 * i] = XS[i], p[4 * i + 1] = 1.25f + (float)i / 8, p[4 * i + 2] = p[4 * i + 3] = 0;
    for (int lin = 0; lin < 2; lin++)
      if ((t = tex_object(&r, lin ? 3 : 1, lin, 0)))
        run("tex2d_f", t, p, NXS, lin ? "pitch2d u16x2 linear border" : "pitch2d u16x2 point clamp", 0),
            cuTexObjectDestroy(t);
    cuMemFree(buf);
  }

  /* 9. Surfaces: reads (x in bytes) in and out of range, per boundary mode, for each
   * geometry; suq; writes with out-of-range coordinates, then the array read back. */
  {
    static const int sc[][3] = {{0, 0, 0}, {4, 1, 1}, {20, 2, 2}, {24, 3, 1}, {-4, 0, 0}, {8, -1, 0}, {8, 3, 0},
                                {16, 4, 3}, {400, 1, 1}, {12, 2, -1}};
    int c[10 * 4];
    for (int i = 0; i < 10; i++) c[4 * i] = sc[i][0], c[4 * i + 1] = sc[i][1], c[4 * i + 2] = sc[i][2], c[4 * i + 3] = 0;
    void *s1 = make_array(U32, 1, 6, 0, 0, SURFACE_LDST), *s2 = make_array(U32, 1, 6, 3, 0, SURFACE_LDST);
    void *s3 = make_array(U32, 1, 6, 3, 2, SURFACE_LDST), *sl1 = make_array(U32, 1, 6, 0, 3, SURFACE_LDST | LAYERED);
    void *sl2 = make_array(U32, 1, 6, 3, 3, SURFACE_LDST | LAYERED), *s4 = make_array(U32, 4, 6, 3, 0, SURFACE_LDST);
    void *s8 = make_array(U8, 1, 8, 3, 0, SURFACE_LDST), *sv2 = make_array(U32, 2, 6, 3, 0, SURFACE_LDST);
    uint64_t h[8];
    void *arrs[8] = {s1, s2, s3, sl1, sl2, s4, s8, sv2};
    for (int i = 0; i < 8; i++) {
      RES_DESC r;
      memset(&r, 0, sizeof r);
      r.res.array.hArray = arrs[i];
      check(cuSurfObjectCreate(&h[i], &r), "cuSurfObjectCreate");
    }
    static const char *names[] = {"1d u32", "2d u32", "3d u32", "a1d u32", "a2d u32", "2d u32x4", "2d u8", "2d u32x2"};
    for (int i = 0; i < 8; i++) query("suq", h[i], 5, names[i]);
    static const char *modes[] = {"clamp", "zero"};
    for (int m = 0; m < 2; m++) {
      char k[32];
      snprintf(k, sizeof k, "surf1d_%s", modes[m]), run(k, h[0], c, 10, "", 1);
      snprintf(k, sizeof k, "surf2d_%s", modes[m]), run(k, h[1], c, 10, "", 1);
      snprintf(k, sizeof k, "surf3d_%s", modes[m]), run(k, h[2], c, 10, "", 1);
      snprintf(k, sizeof k, "surf1dl_%s", modes[m]), run(k, h[3], c, 10, "", 1);
      snprintf(k, sizeof k, "surf2dl_%s", modes[m]), run(k, h[4], c, 10, "", 1);
      int c4[10 * 4];
      for (int i = 0; i < 40; i++) c4[i] = (i % 4 == 0) ? c[i] * 4 : c[i];
      snprintf(k, sizeof k, "surf2dv4_%s", modes[m]), run(k, h[5], c4, 10, "", 1);
    }
    run("surf2d_b8", h[6], c, 10, "", 1);
    run("surf2d_b16", h[6], c, 10, "", 1);
    run("surf2d_b64", h[7], c, 10, "", 1);
    run("surf2d_v2", h[7], c, 10, "", 1);
    run("surf2d_trap", h[1], c, 3, "in range", 1);
    /* Writes: each mode over the coordinates, then the whole array. */
    for (int m = 0; m < 3; m++) {
      static const char *wm[] = {"surf2dw_clamp", "surf2dw_zero", "surf2dw_b8"};
      void *arr = m == 2 ? s8 : s2;
      uint64_t sh = m == 2 ? h[6] : h[1];
      int st;
      void *fn = fn_of(wm[m], &st);
      if (!fn) {
        printf("%s unavailable status %d\n", wm[m], st);
        continue;
      }
      /* One coordinate per launch, in order: a clamped write lands where a later one may. */
      for (int i = 0; i < 10; i++) {
        int one[4] = {c[4 * i], c[4 * i + 1], c[4 * i + 2], i + 1};
        check(cuMemcpyHtoD(dcoords, one, sizeof one), "coords");
        int n = 1;
        void *args[] = {&sh, &dcoords, &dout, &n};
        check(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL), "launch");
        check(cuCtxSynchronize(), "sync");
      }
      uint32_t back[24];
      MEMCPY3D cp;
      memset(&cp, 0, sizeof cp);
      cp.srcMemoryType = 3;
      cp.srcArray = arr;
      cp.dstMemoryType = 1;
      cp.dstHost = back;
      cp.dstPitch = m == 2 ? 8 : 24;
      cp.dstHeight = 3;
      cp.WidthInBytes = cp.dstPitch;
      cp.Height = 3;
      cp.Depth = 1;
      check(cuMemcpy3D(&cp), "readback");
      printf("%s after ->", wm[m]);
      for (int i = 0; i < (m == 2 ? 6 : 18); i++) printf(" %08x", back[i]);
      printf("\n");
    }
    /* Last: an out-of-range read in trap mode (the context is lost). */
    int ct[4] = {24, 0, 0, 0};
    run("surf2d_trap", h[1], ct, 1, "out of range", 1);
    printf("surf2d_trap out of range: no fault\n");
  }
  return 0;
}
