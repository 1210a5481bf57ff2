/* A driver-API program as a user writes one, without CUDA's headers: the prototypes are
 * declared by hand with plain C types. Built by standin/tests/exports.rs twice: with
 * -DUSE_DLOPEN it opens $CUDRV_LIBCUDA (else libcuda.so.1) and finds every function with
 * dlsym; without, it is linked with -lcuda.
 *
 *   driver_api            initialise, make a context, round-trip a buffer through device
 *                         memory, print one line "standin-c: ..." and exit 0
 *   driver_api newer      call cuCtxCreate_v4 (CUDA 12.5) on a driver emulating an older
 *                         version: print what it answered and whether it wrote the context
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef unsigned long long CUdeviceptr;

#ifdef USE_DLOPEN
#include <dlfcn.h>
#define API(ret, name, args) static ret(*name) args;
#else
#define API(ret, name, args) ret name args;
#endif
API(CUresult, cuInit, (unsigned int flags))
API(CUresult, cuDriverGetVersion, (int *version))
API(CUresult, cuDeviceGet, (CUdevice *device, int ordinal))
API(CUresult, cuCtxCreate_v2, (CUcontext *ctx, unsigned int flags, CUdevice dev))
API(CUresult, cuCtxCreate_v4, (CUcontext *ctx, void *params, unsigned int flags, CUdevice dev))
API(CUresult, cuMemAlloc_v2, (CUdeviceptr *dptr, size_t bytes))
API(CUresult, cuMemcpyHtoD_v2, (CUdeviceptr dst, const void *src, size_t bytes))
API(CUresult, cuMemcpyDtoH_v2, (void *dst, CUdeviceptr src, size_t bytes))
API(CUresult, cuMemFree_v2, (CUdeviceptr dptr))
API(CUresult, cuCtxDestroy_v2, (CUcontext ctx))

#define CHECK(call)                                                   \
    do {                                                              \
        CUresult r_ = (call);                                         \
        if (r_ != 0) {                                                \
            fprintf(stderr, "standin-c: %s failed: %d\n", #call, r_); \
            return 1;                                                 \
        }                                                             \
    } while (0)

#ifdef USE_DLOPEN
#define LOAD(name)                                                                \
    do {                                                                          \
        *(void **)&name = dlsym(lib, #name);                                      \
        if (!name) {                                                              \
            fprintf(stderr, "standin-c: %s does not export %s\n", path, #name);   \
            return 2;                                                             \
        }                                                                         \
    } while (0)
#endif

int main(int argc, char **argv) {
#ifdef USE_DLOPEN
    const char *path = getenv("CUDRV_LIBCUDA");
    if (!path) path = "libcuda.so.1";
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "standin-c: dlopen(%s): %s\n", path, dlerror());
        return 2;
    }
    LOAD(cuInit);
    LOAD(cuDriverGetVersion);
    LOAD(cuDeviceGet);
    LOAD(cuCtxCreate_v2);
    LOAD(cuCtxCreate_v4);
    LOAD(cuMemAlloc_v2);
    LOAD(cuMemcpyHtoD_v2);
    LOAD(cuMemcpyDtoH_v2);
    LOAD(cuMemFree_v2);
    LOAD(cuCtxDestroy_v2);
#endif
    int version = 0;
    CHECK(cuInit(0));
    CHECK(cuDriverGetVersion(&version));
    CUdevice dev = -1;
    CHECK(cuDeviceGet(&dev, 0));

    if (argc > 1 && strcmp(argv[1], "newer") == 0) {
        CUcontext untouched = (CUcontext)0x1234;
        CUcontext ctx = untouched;
        CUresult r = cuCtxCreate_v4(&ctx, NULL, 0, dev);
        printf("standin-c: driver %d: cuCtxCreate_v4 answered %d, context %s\n", version, r,
               ctx == untouched ? "untouched" : "written");
        return 0;
    }

    CUcontext ctx = NULL;
    CHECK(cuCtxCreate_v2(&ctx, 0, dev));
    enum { N = 4096 };
    static unsigned int host[N], back[N];
    for (unsigned int i = 0; i < N; i++) host[i] = i * 2654435761u;
    CUdeviceptr d = 0;
    CHECK(cuMemAlloc_v2(&d, sizeof host));
    CHECK(cuMemcpyHtoD_v2(d, host, sizeof host));
    CHECK(cuMemcpyDtoH_v2(back, d, sizeof back));
    CHECK(cuMemFree_v2(d));
    CHECK(cuCtxDestroy_v2(ctx));
    if (memcmp(host, back, sizeof host) != 0) {
        fprintf(stderr, "standin-c: the data did not round-trip\n");
        return 1;
    }
    printf("standin-c: driver %d: %u bytes round-tripped through device memory\n", version, (unsigned)sizeof host);
    return 0;
}
