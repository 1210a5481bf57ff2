/* The sanitizer's corpus in C (docs/sanitizer.md): small driver-API programs, one per
 * case, each with a seeded stream-order bug (verdict "race") or ordered correctly by one
 * of CUDA's mechanisms (verdict "clean"), or reading device memory never written
 * (verdict "uninit"). Built by standin/tests/sanitizer.rs with `cc`, linked with -lcuda
 * against the stand-in, and run as `corpus CASE` under CUDRV_STANDIN_SANITIZE=races,init.
 * The list of cases and verdicts is in that test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream, *CUevent, *CUgraph, *CUgraphExec, *CUgraphNode;
typedef unsigned long long CUdeviceptr;
typedef void (*CUhostFn)(void *);

CUresult cuInit(unsigned);
CUresult cuDeviceGet(CUdevice *, int);
CUresult cuCtxCreate_v2(CUcontext *, unsigned, CUdevice);
CUresult cuCtxSynchronize(void);
CUresult cuCtxWaitEvent(CUcontext, CUevent);
CUresult cuModuleLoadData(CUmodule *, const void *);
CUresult cuModuleGetFunction(CUfunction *, CUmodule, const char *);
CUresult cuMemAlloc_v2(CUdeviceptr *, size_t);
CUresult cuMemAllocAsync(CUdeviceptr *, size_t, CUstream);
CUresult cuMemFreeAsync(CUdeviceptr, CUstream);
CUresult cuMemAllocHost_v2(void **, size_t);
CUresult cuMemcpyHtoD_v2(CUdeviceptr, const void *, size_t);
CUresult cuMemcpyDtoH_v2(void *, CUdeviceptr, size_t);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr, const void *, size_t, CUstream);
CUresult cuMemcpyDtoHAsync_v2(void *, CUdeviceptr, size_t, CUstream);
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult cuMemsetD32Async(CUdeviceptr, unsigned, size_t, CUstream);
CUresult cuStreamCreate(CUstream *, unsigned);
CUresult cuStreamSynchronize(CUstream);
CUresult cuStreamQuery(CUstream);
CUresult cuStreamWaitEvent(CUstream, CUevent, unsigned);
CUresult cuEventCreate(CUevent *, unsigned);
CUresult cuEventRecord(CUevent, CUstream);
CUresult cuEventSynchronize(CUevent);
CUresult cuEventQuery(CUevent);
CUresult cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                        void **, void **);
CUresult cuLaunchHostFunc(CUstream, CUhostFn, void *);
CUresult cuStreamBeginCapture_v2(CUstream, int);
CUresult cuStreamEndCapture(CUstream, CUgraph *);
CUresult cuGraphInstantiateWithFlags(CUgraphExec *, CUgraph, unsigned long long);
CUresult cuGraphLaunch(CUgraphExec, CUstream);

#define CHECK(call)                                                      \
    do {                                                                 \
        CUresult r_ = (call);                                            \
        if (r_ != 0) {                                                   \
            fprintf(stderr, "corpus: %s failed: %d\n", #call, r_);       \
            exit(3);                                                     \
        }                                                                \
    } while (0)

/* fill(p, n, v): p[i] = v. twice(out, in, n): out[i] = 2 * in[i]. */
static const char PTX[] =
    ".version 7.0\n.target sm_50\n.address_size 64\n"
    ".visible .entry fill(.param .u64 p, .param .u32 n, .param .u32 v)\n{\n"
    ".reg .pred %p<2>;\n.reg .b32 %r<6>;\n.reg .b64 %rd<4>;\n"
    "ld.param.u64 %rd1, [p];\nld.param.u32 %r1, [n];\nld.param.u32 %r2, [v];\n"
    "mov.u32 %r3, %ctaid.x;\nmov.u32 %r4, %ntid.x;\nmov.u32 %r5, %tid.x;\n"
    "mad.lo.s32 %r3, %r3, %r4, %r5;\nsetp.ge.u32 %p1, %r3, %r1;\n@%p1 bra DONE;\n"
    "cvta.to.global.u64 %rd1, %rd1;\nmul.wide.u32 %rd2, %r3, 4;\nadd.s64 %rd3, %rd1, %rd2;\n"
    "st.global.u32 [%rd3], %r2;\nDONE:\nret;\n}\n"
    ".visible .entry twice(.param .u64 out, .param .u64 in, .param .u32 n)\n{\n"
    ".reg .pred %p<2>;\n.reg .b32 %r<7>;\n.reg .b64 %rd<6>;\n"
    "ld.param.u64 %rd1, [out];\nld.param.u64 %rd4, [in];\nld.param.u32 %r1, [n];\n"
    "mov.u32 %r3, %ctaid.x;\nmov.u32 %r4, %ntid.x;\nmov.u32 %r5, %tid.x;\n"
    "mad.lo.s32 %r3, %r3, %r4, %r5;\nsetp.ge.u32 %p1, %r3, %r1;\n@%p1 bra DONE;\n"
    "mul.wide.u32 %rd2, %r3, 4;\nadd.s64 %rd3, %rd1, %rd2;\nadd.s64 %rd5, %rd4, %rd2;\n"
    "ld.global.u32 %r6, [%rd5];\nshl.b32 %r6, %r6, 1;\nst.global.u32 [%rd3], %r6;\nDONE:\nret;\n}\n";

/* Inside kernels (CUDRV_STANDIN_SANITIZE=shared, races): share_racy(out) writes s[tid] and
 * reads s[tid + 1] with no barrier between; share_synced(out) the same with bar.sync;
 * last_block(p): thread 0 of every block stores its block index to p[0] (blocks race);
 * count_blocks(p): the same with atom.global.add (no race). */
#define SHARE_BODY(SYNC)                                                                     \
    "{\n.reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n.shared .align 4 .b8 s[512];\n"                  \
    "ld.param.u64 %rd1, [out];\nmov.u32 %r2, %tid.x;\nmov.u32 %r3, %ntid.x;\n"                \
    "mov.u32 %r5, s;\nshl.b32 %r4, %r2, 2;\nadd.u32 %r6, %r5, %r4;\nst.shared.u32 [%r6], %r2;\n" \
    SYNC                                                                                      \
    "add.u32 %r7, %r2, 1;\nrem.u32 %r7, %r7, %r3;\nshl.b32 %r7, %r7, 2;\nadd.u32 %r7, %r5, %r7;\n" \
    "ld.shared.u32 %r7, [%r7];\nmul.wide.u32 %rd2, %r2, 4;\nadd.s64 %rd3, %rd1, %rd2;\n"       \
    "st.global.u32 [%rd3], %r7;\nret;\n}\n"
#define BLOCK_BODY(STORE)                                                                      \
    "{\n.reg .pred %p<2>;\n.reg .b32 %r<4>;\n.reg .b64 %rd<2>;\nld.param.u64 %rd1, [p];\n"    \
    "mov.u32 %r1, %ctaid.x;\nmov.u32 %r2, %tid.x;\nsetp.ne.u32 %p1, %r2, 0;\n@%p1 bra DONE;\n" \
    STORE "DONE:\nret;\n}\n"
static const char KERNEL_PTX[] =
    ".version 7.0\n.target sm_50\n.address_size 64\n"
    ".visible .entry share_racy(.param .u64 out)\n" SHARE_BODY("")
    ".visible .entry share_synced(.param .u64 out)\n" SHARE_BODY("bar.sync 0;\n")
    ".visible .entry last_block(.param .u64 p)\n" BLOCK_BODY("st.global.u32 [%rd1], %r1;\n")
    ".visible .entry count_blocks(.param .u64 p)\n" BLOCK_BODY("atom.global.add.u32 %r3, [%rd1], 1;\n");

#define N 1024
#define BYTES (N * sizeof(unsigned))

static CUcontext ctx;
static CUfunction fill_fn, twice_fn;
static CUstream a, b, nb;
static CUdeviceptr x, y;
static unsigned *pinned;

static void fill(CUdeviceptr p, unsigned v, CUstream s) {
    unsigned n = N;
    void *args[] = {&p, &n, &v};
    CHECK(cuLaunchKernel(fill_fn, N / 128, 1, 1, 128, 1, 1, 0, s, args, NULL));
}

static void twice(CUdeviceptr out, CUdeviceptr in, CUstream s) {
    unsigned n = N;
    void *args[] = {&out, &in, &n};
    CHECK(cuLaunchKernel(twice_fn, N / 128, 1, 1, 128, 1, 1, 0, s, args, NULL));
}

static void nothing(void *data) { (void)data; }

/* ---- seeded bugs ---- */

/* A kernel on stream a writes x; a copy on stream b reads it, nothing between. */
static void kernel_then_copy_unordered(void) {
    fill(x, 7, a);
    CHECK(cuMemcpyDtoHAsync_v2(pinned, x, BYTES, b));
}

/* A copy on a fills x from pinned memory; a kernel on b reads x. */
static void copy_then_kernel_unordered(void) {
    CHECK(cuMemcpyHtoDAsync_v2(x, pinned, BYTES, a));
    twice(y, x, b);
}

/* Two memsets of the same bytes on two streams. */
static void memsets_unordered(void) {
    CHECK(cuMemsetD32Async(x, 1, N, a));
    CHECK(cuMemsetD32Async(x + 512, 2, N / 2, b));
}

/* The event is recorded before the kernel it should follow. */
static void event_recorded_too_early(void) {
    CUevent e;
    CHECK(cuEventCreate(&e, 0));
    CHECK(cuEventRecord(e, a));
    fill(x, 3, a);
    CHECK(cuStreamWaitEvent(b, e, 0));
    twice(y, x, b);
}

/* A non-blocking stream's kernel, then a synchronous copy: the legacy stream does not
 * wait for non-blocking streams. */
static void nonblocking_then_sync_copy(void) {
    fill(x, 5, nb);
    CHECK(cuMemcpyDtoH_v2(pinned, x, BYTES));
}

/* A stream-ordered free on b of memory a kernel on a still reads. */
static void free_async_while_used(void) {
    CUdeviceptr z;
    CHECK(cuMemAllocAsync(&z, BYTES, a));
    fill(z, 1, a);
    CHECK(cuStreamSynchronize(a));
    twice(y, z, a);
    CHECK(cuMemFreeAsync(z, b));
}

/* Pinned host memory: a copy into it on a, a copy out of it on b. */
static void pinned_written_then_read_unordered(void) {
    CHECK(cuMemcpyDtoHAsync_v2(pinned, x, BYTES, a));
    CHECK(cuMemcpyHtoDAsync_v2(y, pinned, BYTES, b));
}

/* A graph (captured memset) launched on a writes x; a kernel on b reads it. */
static void graph_then_kernel_unordered(void) {
    CUstream c;
    CUgraph g;
    CUgraphExec e;
    CHECK(cuStreamCreate(&c, 1));
    CHECK(cuStreamBeginCapture_v2(c, 0));
    CHECK(cuMemsetD32Async(x, 9, N, c));
    CHECK(cuStreamEndCapture(c, &g));
    CHECK(cuGraphInstantiateWithFlags(&e, g, 0));
    CHECK(cuGraphLaunch(e, a));
    twice(y, x, b);
}

/* A captured fork: two memset nodes of one graph write the same bytes, no edge between
 * them (`ordered`: the second waits for the first through an event, an edge). */
static void graph_of_two_memsets(int ordered) {
    CUstream c, d;
    CUevent fork, join, between;
    CUgraph g;
    CUgraphExec e;
    CHECK(cuStreamCreate(&c, 1));
    CHECK(cuStreamCreate(&d, 1));
    CHECK(cuEventCreate(&fork, 0));
    CHECK(cuEventCreate(&join, 0));
    CHECK(cuEventCreate(&between, 0));
    CHECK(cuStreamBeginCapture_v2(c, 0));
    CHECK(cuEventRecord(fork, c));
    CHECK(cuStreamWaitEvent(d, fork, 0));
    CHECK(cuMemsetD32Async(x, 1, N, c));
    if (ordered) {
        CHECK(cuEventRecord(between, c));
        CHECK(cuStreamWaitEvent(d, between, 0));
    }
    CHECK(cuMemsetD32Async(x, 2, N, d));
    CHECK(cuEventRecord(join, d));
    CHECK(cuStreamWaitEvent(c, join, 0));
    CHECK(cuStreamEndCapture(c, &g));
    CHECK(cuGraphInstantiateWithFlags(&e, g, 0));
    CHECK(cuGraphLaunch(e, a));
    CHECK(cuGraphLaunch(e, a));
}

static void graph_nodes_unordered(void) { graph_of_two_memsets(0); }
static void graph_nodes_ordered(void) { graph_of_two_memsets(1); }

/* A kernel reads memory nothing wrote since it was allocated. */
static CUmodule kernels;

static void run_kernel(const char *name, unsigned blocks) {
    CUfunction f;
    void *args[] = {&x};
    if (!kernels) CHECK(cuModuleLoadData(&kernels, KERNEL_PTX));
    CHECK(cuModuleGetFunction(&f, kernels, name));
    CHECK(cuLaunchKernel(f, blocks, 1, 1, 128, 1, 1, 0, a, args, NULL));
    CHECK(cuStreamSynchronize(a));
}

static void shared_without_barrier(void) { run_kernel("share_racy", 1); }
static void shared_with_barrier(void) { run_kernel("share_synced", 1); }
static void blocks_store_one_word(void) { run_kernel("last_block", 4); }
static void blocks_add_to_one_word(void) { run_kernel("count_blocks", 4); }

static void kernel_reads_unwritten(void) {
    CUdeviceptr z;
    CHECK(cuMemAlloc_v2(&z, BYTES));
    twice(y, z, a);
}

/* Half of an allocation written, all of it copied out. */
static void copy_reads_half_unwritten(void) {
    CUdeviceptr z;
    CHECK(cuMemAlloc_v2(&z, BYTES));
    CHECK(cuMemsetD32Async(z, 0, N / 2, a));
    CHECK(cuMemcpyDtoHAsync_v2(pinned, z, BYTES, a));
}

/* The host sums pinned memory a queued copy has not filled yet (issue 28's H200 program):
 * prints the sum, which is right only if the copy happened to be done. */
static void host_reads_pinned_without_synchronising(void) {
    unsigned long long sum = 0;
    fill(x, 1, 0);
    CHECK(cuCtxSynchronize());
    memset(pinned, 0, BYTES);
    CHECK(cuMemcpyDtoHAsync_v2(pinned, x, BYTES, a));
    for (int i = 0; i < N; i++) sum += pinned[i];
    printf("corpus: host sum %llu of %d\n", sum, N);
}

/* ---- correct programs ---- */

/* Written by a memset, a kernel and a copy before each read. */
static void written_before_read(void) {
    CUdeviceptr z, u, v;
    CHECK(cuMemAlloc_v2(&z, BYTES));
    CHECK(cuMemAlloc_v2(&u, BYTES));
    CHECK(cuMemAlloc_v2(&v, BYTES));
    CHECK(cuMemsetD32Async(z, 1, N, a));
    twice(u, z, a);
    CHECK(cuMemcpyDtoDAsync_v2(v, u, BYTES, a));
    fill(z, 2, a);
    twice(u, v, a);
    CHECK(cuMemcpyDtoHAsync_v2(pinned, u, BYTES, a));
}


static void same_stream(void) {
    CHECK(cuMemcpyHtoDAsync_v2(x, pinned, BYTES, a));
    twice(y, x, a);
    CHECK(cuMemcpyDtoHAsync_v2(pinned, y, BYTES, a));
    CHECK(cuStreamSynchronize(a));
}

static void event_wait(void) {
    CUevent e;
    CHECK(cuEventCreate(&e, 0));
    fill(x, 3, a);
    CHECK(cuEventRecord(e, a));
    CHECK(cuStreamWaitEvent(b, e, 0));
    twice(y, x, b);
    CHECK(cuMemcpyDtoHAsync_v2(pinned, y, BYTES, b));
    CHECK(cuStreamSynchronize(b));
}

static void stream_synchronize(void) {
    fill(x, 3, a);
    CHECK(cuStreamSynchronize(a));
    twice(y, x, b);
    CHECK(cuStreamSynchronize(b));
}

static void stream_query(void) {
    fill(x, 3, a);
    while (cuStreamQuery(a) != 0) {
    }
    twice(y, x, b);
    CHECK(cuStreamSynchronize(b));
}

static void event_synchronize(void) {
    CUevent e;
    CHECK(cuEventCreate(&e, 0));
    fill(x, 3, a);
    CHECK(cuEventRecord(e, a));
    CHECK(cuEventSynchronize(e));
    twice(y, x, b);
    CHECK(cuCtxSynchronize());
}

static void event_query(void) {
    CUevent e;
    CHECK(cuEventCreate(&e, 0));
    fill(x, 3, a);
    CHECK(cuEventRecord(e, a));
    while (cuEventQuery(e) != 0) {
    }
    twice(y, x, b);
    CHECK(cuCtxSynchronize());
}

static void context_synchronize(void) {
    fill(x, 3, a);
    fill(y, 4, nb);
    CHECK(cuCtxSynchronize());
    twice(x, y, b);
    CHECK(cuCtxSynchronize());
}

/* Blocking streams and the legacy stream order each other. */
static void legacy_stream_implicit(void) {
    fill(x, 3, a);
    CHECK(cuMemcpyDtoH_v2(pinned, x, BYTES));
    fill(y, 4, b);
    twice(x, y, 0);
    twice(y, x, a);
    CHECK(cuCtxSynchronize());
}

static void context_wait_event(void) {
    CUevent e;
    CHECK(cuEventCreate(&e, 0));
    fill(x, 3, nb);
    CHECK(cuEventRecord(e, nb));
    CHECK(cuCtxWaitEvent(ctx, e));
    twice(y, x, 0);
    CHECK(cuCtxSynchronize());
}

static void host_function_then_event(void) {
    CUevent e;
    CHECK(cuEventCreate(&e, 0));
    fill(x, 3, a);
    CHECK(cuLaunchHostFunc(a, nothing, NULL));
    CHECK(cuEventRecord(e, a));
    CHECK(cuStreamWaitEvent(b, e, 0));
    twice(y, x, b);
    CHECK(cuCtxSynchronize());
}

static void free_async_ordered(void) {
    CUdeviceptr z;
    CHECK(cuMemAllocAsync(&z, BYTES, a));
    fill(z, 1, a);
    twice(y, z, a);
    CHECK(cuMemFreeAsync(z, a));
    /* The pool gives the same range back; b's use after a synchronisation is fine. */
    CHECK(cuStreamSynchronize(a));
    CHECK(cuMemAllocAsync(&z, BYTES, b));
    fill(z, 2, b);
    CHECK(cuMemFreeAsync(z, b));
    CHECK(cuStreamSynchronize(b));
}

static void reads_only(void) {
    CHECK(cuMemcpyHtoD_v2(x, pinned, BYTES));
    twice(y, x, a);
    CHECK(cuMemcpyDtoHAsync_v2(pinned, x, BYTES, b));
    CHECK(cuCtxSynchronize());
}

static void graph_then_event(void) {
    CUstream c;
    CUgraph g;
    CUgraphExec ge;
    CUevent e;
    CHECK(cuStreamCreate(&c, 1));
    CHECK(cuEventCreate(&e, 0));
    CHECK(cuStreamBeginCapture_v2(c, 0));
    CHECK(cuMemsetD32Async(x, 9, N, c));
    CHECK(cuStreamEndCapture(c, &g));
    CHECK(cuGraphInstantiateWithFlags(&ge, g, 0));
    CHECK(cuGraphLaunch(ge, a));
    CHECK(cuEventRecord(e, a));
    CHECK(cuStreamWaitEvent(b, e, 0));
    twice(y, x, b);
    CHECK(cuCtxSynchronize());
}

static const struct {
    const char *name;
    void (*run)(void);
} CASES[] = {
    {"kernel_then_copy_unordered", kernel_then_copy_unordered},
    {"copy_then_kernel_unordered", copy_then_kernel_unordered},
    {"memsets_unordered", memsets_unordered},
    {"event_recorded_too_early", event_recorded_too_early},
    {"nonblocking_then_sync_copy", nonblocking_then_sync_copy},
    {"free_async_while_used", free_async_while_used},
    {"pinned_written_then_read_unordered", pinned_written_then_read_unordered},
    {"graph_then_kernel_unordered", graph_then_kernel_unordered},
    {"graph_nodes_unordered", graph_nodes_unordered},
    {"graph_nodes_ordered", graph_nodes_ordered},
    {"kernel_reads_unwritten", kernel_reads_unwritten},
    {"copy_reads_half_unwritten", copy_reads_half_unwritten},
    {"written_before_read", written_before_read},
    {"host_reads_pinned_without_synchronising", host_reads_pinned_without_synchronising},
    {"same_stream", same_stream},
    {"event_wait", event_wait},
    {"stream_synchronize", stream_synchronize},
    {"stream_query", stream_query},
    {"event_synchronize", event_synchronize},
    {"event_query", event_query},
    {"context_synchronize", context_synchronize},
    {"legacy_stream_implicit", legacy_stream_implicit},
    {"context_wait_event", context_wait_event},
    {"host_function_then_event", host_function_then_event},
    {"free_async_ordered", free_async_ordered},
    {"reads_only", reads_only},
    {"graph_then_event", graph_then_event},
    {"shared_without_barrier", shared_without_barrier},
    {"shared_with_barrier", shared_with_barrier},
    {"blocks_store_one_word", blocks_store_one_word},
    {"blocks_add_to_one_word", blocks_add_to_one_word},
};

int main(int argc, char **argv) {
    CUdevice dev;
    CUmodule mod;
    if (argc != 2) {
        fprintf(stderr, "usage: corpus CASE\n");
        return 2;
    }
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuCtxCreate_v2(&ctx, 0, dev));
    CHECK(cuModuleLoadData(&mod, PTX));
    CHECK(cuModuleGetFunction(&fill_fn, mod, "fill"));
    CHECK(cuModuleGetFunction(&twice_fn, mod, "twice"));
    CHECK(cuMemAlloc_v2(&x, BYTES));
    CHECK(cuMemAlloc_v2(&y, BYTES));
    CHECK(cuMemAllocHost_v2((void **)&pinned, BYTES));
    memset(pinned, 0, BYTES);
    CHECK(cuStreamCreate(&a, 0));
    CHECK(cuStreamCreate(&b, 0));
    CHECK(cuStreamCreate(&nb, 1));
    /* Everything starts written and known to the host. */
    CHECK(cuMemcpyHtoD_v2(x, pinned, BYTES));
    CHECK(cuMemcpyHtoD_v2(y, pinned, BYTES));
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        if (strcmp(CASES[i].name, argv[1]) == 0) {
            CASES[i].run();
            CHECK(cuCtxSynchronize());
            printf("corpus: %s ran\n", argv[1]);
            return 0;
        }
    }
    fprintf(stderr, "corpus: no case %s\n", argv[1]);
    return 2;
}
