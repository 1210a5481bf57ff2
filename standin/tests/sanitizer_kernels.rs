//! The sanitizer inside kernels (docs/sanitizer.md, `shared` and `races`): shared-memory
//! races between barriers in a block, between warps and between lanes of one warp, and
//! plain global accesses of different blocks that meet; the same kernels made correct
//! (a barrier, `bar.warp.sync`, an atomic) are not reported. Each program runs in-process
//! on a world of its own (`StandIn::sanitize("all")`).

use cudrv::sys::{CUresult, CUstream};

const OK: CUresult = CUresult::CUDA_SUCCESS;

/// `reduce(in, out, mode)` over one block of 128 threads: each thread puts `in[tid]` in
/// shared memory, a barrier, then three halving steps (64, 32, 16 threads). Bit 0 of
/// `mode` puts a barrier between the first two steps (missing: a race between warps), bit
/// 1 a `bar.warp.sync` between the last two (missing: a race between lanes of warp 0).
/// `blocks(out, mode)`: thread 0 of every block writes `out[0]`, with a plain store
/// (`mode` 0: a race between blocks) or an atomic add (`mode` 1); each block also writes
/// its own `out[1 + ctaid]` (no race).
/// `overlap(out, mode)`: thread `t` of block `b` writes `out[16 b + t]`: blocks of 32 threads
/// overlap by 16 words (a race between blocks, in the middle of a warp's contiguous run).
/// `broadcast(out, mode)`: thread 0 stores a shared word that every lane then reads (no
/// synchronisation when `mode` is 0: a race; a barrier between when 1).
const PTX: &str = ".version 8.0
.target sm_90
.address_size 64
.visible .entry reduce(.param .u64 inp, .param .u64 outp, .param .u32 mode)
{
    .reg .pred %p<4>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<6>;
    .shared .align 4 .b8 s[512];
    ld.param.u64 %rd1, [inp];
    ld.param.u64 %rd2, [outp];
    ld.param.u32 %r1, [mode];
    mov.u32 %r2, %tid.x;
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mul.wide.u32 %rd3, %r2, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %r3, [%rd4];
    mov.u32 %r4, s;
    shl.b32 %r5, %r2, 2;
    add.u32 %r6, %r4, %r5;
    st.shared.u32 [%r6], %r3;
    bar.sync 0;
    setp.lt.u32 %p1, %r2, 64;
    @!%p1 bra $L1;
    ld.shared.u32 %r7, [%r6+256];
    ld.shared.u32 %r8, [%r6];
    add.u32 %r8, %r8, %r7;
    st.shared.u32 [%r6], %r8;
$L1:
    and.b32 %r9, %r1, 1;
    setp.ne.u32 %p2, %r9, 0;
    @%p2 bar.sync 0;
    setp.lt.u32 %p1, %r2, 32;
    @!%p1 bra $L2;
    ld.shared.u32 %r7, [%r6+128];
    ld.shared.u32 %r8, [%r6];
    add.u32 %r8, %r8, %r7;
    st.shared.u32 [%r6], %r8;
    and.b32 %r9, %r1, 2;
    setp.ne.u32 %p3, %r9, 0;
    @%p3 bar.warp.sync -1;
    setp.lt.u32 %p1, %r2, 16;
    @!%p1 bra $L2;
    ld.shared.u32 %r7, [%r6+64];
    ld.shared.u32 %r8, [%r6];
    add.u32 %r8, %r8, %r7;
    st.shared.u32 [%r6], %r8;
$L2:
    bar.sync 0;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra $END;
    ld.shared.u32 %r10, [s];
    st.global.u32 [%rd2], %r10;
$END:
    ret;
}
.visible .entry blocks(.param .u64 outp, .param .u32 mode)
{
    .reg .pred %p<3>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [outp];
    ld.param.u32 %r1, [mode];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.x;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra $END;
    add.u32 %r4, %r3, 1;
    mul.wide.u32 %rd2, %r4, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r3;
    setp.ne.u32 %p2, %r1, 0;
    @%p2 bra $ATOM;
    st.global.u32 [%rd1], %r3;
    bra $END;
$ATOM:
    atom.global.add.u32 %r5, [%rd1], 1;
$END:
    ret;
}
.visible .entry overlap(.param .u64 outp, .param .u32 mode)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [outp];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mad.lo.u32 %r3, %r2, 16, %r1;
    mul.wide.u32 %rd2, %r3, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r1;
    ret;
}
.visible .entry broadcast(.param .u64 outp, .param .u32 mode)
{
    .reg .pred %p<3>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<4>;
    .shared .align 4 .b8 t[4];
    ld.param.u64 %rd1, [outp];
    ld.param.u32 %r1, [mode];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, t;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra $READ;
    st.shared.u32 [%r3], %r2;
$READ:
    setp.ne.u32 %p2, %r1, 0;
    @%p2 bar.sync 0;
    ld.shared.u32 %r4, [%r3];
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r4;
    ret;
}
";

/// The PTX line (1-based) of the first line of `PTX` that contains `text` after `after`.
fn line_of(text: &str, after: &str) -> u32 {
    let start = PTX.lines().position(|l| l.contains(after)).unwrap();
    let i = PTX.lines().enumerate().skip(start).find(|(_, l)| l.contains(text)).unwrap().0;
    i as u32 + 1
}

/// Runs `kernel` with `mode` (grid `grid`, block `block`) on a sanitized world of its own;
/// the reports.
fn run(kernel: &str, grid: u32, block: u32, mode: u32) -> Vec<cudrv_standin::SanitizerReport> {
    run_input(kernel, grid, block, mode, true).0
}

/// As [`run`], `in` written first only if `write_input`; also the address of `in`.
fn run_input(
    kernel: &str,
    grid: u32,
    block: u32,
    mode: u32,
    write_input: bool,
) -> (Vec<cudrv_standin::SanitizerReport>, u64) {
    let s = cudrv_standin::StandIn::isolated(13050).unwrap();
    s.sanitize("all").unwrap();
    let d = s.load(cudrv::LoadOptions::default()).unwrap();
    let p = d.p();
    let (mut ctx, mut module, mut f, mut inp, mut out) =
        (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut(), 0, 0);
    let text = format!("{PTX}\0");
    let values: Vec<u32> = (0..128).collect();
    // SAFETY: valid out-pointers, a NUL-terminated PTX image, live allocations of the
    // sizes given, the kernel's parameters.
    unsafe {
        assert_eq!(p.cuInit(0), OK);
        assert_eq!(p.cuCtxCreate(&mut ctx, std::ptr::null_mut(), 0, 0), OK);
        assert_eq!(p.cuModuleLoadData(&mut module, text.as_ptr().cast()), OK);
        let name = std::ffi::CString::new(kernel).unwrap();
        assert_eq!(p.cuModuleGetFunction(&mut f, module, name.as_ptr()), OK);
        assert_eq!(p.cuMemAlloc(&mut inp, 512), OK);
        assert_eq!(p.cuMemAlloc(&mut out, 512), OK);
        if write_input {
            assert_eq!(p.cuMemcpyHtoD(inp, values.as_ptr().cast(), 512), OK);
        }
        let mut m = mode;
        let mut a = [(&raw mut inp).cast(), (&raw mut out).cast(), (&raw mut m).cast::<std::ffi::c_void>()];
        let args = if kernel == "reduce" { &mut a[..] } else { &mut a[1..] };
        let null: CUstream = std::ptr::null_mut();
        assert_eq!(p.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, null, args.as_mut_ptr(), std::ptr::null_mut()), OK);
        assert_eq!(p.cuCtxSynchronize(), OK);
    }
    (s.sanitizer_reports(), inp)
}

#[test]
fn a_reduction_missing_its_barrier_races_between_warps_and_names_threads_lines_and_offset() {
    let reports = run("reduce", 1, 128, 2);
    assert_eq!(reports.len(), 1, "{reports:?}");
    let r = &reports[0];
    assert_eq!(r.kind, "shared");
    // Warp 1's first step writes s[32..64]; warp 0's second step reads it.
    let write = line_of("st.shared.u32 [%r6], %r8;", "@!%p1 bra $L1;");
    let read = line_of("ld.shared.u32 %r7, [%r6+128];", "");
    assert!(r.text.contains("kernel `reduce` (grid (1,1,1), block (128,1,1))"), "{}", r.text);
    assert!(r.text.contains(&format!("read at PTX line {read}")), "{}", r.text);
    assert!(r.text.contains(&format!("write at PTX line {write}")), "{}", r.text);
    assert!(r.text.contains("of block (0,0,0)"), "{}", r.text);
    // The byte: thread t of warp 0 reads offset 4 * (t + 32), written by thread t + 32.
    let offset = r.json.split("\"offset\":\"").nth(1).unwrap().split('"').next().unwrap();
    let offset = u64::from_str_radix(offset.trim_start_matches("0x"), 16).unwrap();
    assert!((128..256).contains(&offset), "{offset:#x}");
    let t = (offset / 4) as u32;
    assert!(r.text.contains(&format!("thread ({t},0,0)")), "{}", r.text);
    assert!(r.text.contains(&format!("thread ({},0,0)", t - 32)), "{}", r.text);
    assert!(r.json.starts_with("{\"kind\":\"shared\",\"kernel\":\"reduce\""), "{}", r.json);
}

#[test]
fn lanes_of_one_warp_race_without_bar_warp_sync() {
    let reports = run("reduce", 1, 128, 1);
    assert_eq!(reports.len(), 1, "{reports:?}");
    let r = &reports[0];
    assert_eq!(r.kind, "shared");
    let read = line_of("ld.shared.u32 %r7, [%r6+64];", "");
    assert!(r.text.contains(&format!("read at PTX line {read}")), "{}", r.text);
    // Lanes 16..32 of warp 0 wrote in the step before; lanes 0..16 read.
    let offset = r.json.split("\"offset\":\"").nth(1).unwrap().split('"').next().unwrap();
    let offset = u64::from_str_radix(offset.trim_start_matches("0x"), 16).unwrap();
    assert!((64..128).contains(&offset), "{offset:#x}");
}

#[test]
fn both_missing_synchronisations_are_reported_and_the_fixed_reduction_is_clean() {
    let reports = run("reduce", 1, 128, 0);
    assert_eq!(reports.len(), 2, "{reports:?}");
    assert!(reports.iter().all(|r| r.kind == "shared"));
    let clean = run("reduce", 1, 128, 3);
    assert!(clean.is_empty(), "{clean:?}");
}

#[test]
fn plain_stores_of_different_blocks_to_one_word_race_and_atomics_do_not() {
    let reports = run("blocks", 4, 32, 0);
    assert_eq!(reports.len(), 1, "{reports:?}");
    let r = &reports[0];
    assert_eq!(r.kind, "block_race");
    let line = line_of("st.global.u32 [%rd1], %r3;", "");
    assert_eq!(r.text.matches(&format!("write at PTX line {line}")).count(), 2, "{}", r.text);
    assert!(r.text.contains("thread (0,0,0) of block (0,0,0)"), "{}", r.text);
    assert!(r.text.contains("kernel `blocks` (grid (4,1,1), block (32,1,1))"), "{}", r.text);
    let clean = run("blocks", 4, 32, 1);
    assert!(clean.is_empty(), "{clean:?}");
}

#[test]
fn a_read_of_memory_never_written_names_the_thread_the_block_the_line_and_the_address() {
    let (reports, inp) = run_input("reduce", 1, 128, 3, false);
    assert_eq!(reports.len(), 1, "{reports:?}");
    let r = &reports[0];
    assert_eq!(r.kind, "uninit");
    let line = line_of("ld.global.u32 %r3, [%rd4];", "");
    assert!(
        r.text.contains(&format!(
            "thread (0,0,0) of block (0,0,0) (read at PTX line {line}) reads device address {inp:#x}"
        )),
        "{}",
        r.text
    );
    assert!(r.text.contains("kernel `reduce`") && r.text.contains("(512 such bytes read in all)"), "{}", r.text);
    assert!(r.json.starts_with("{\"kind\":\"uninit\",\"kernel\":\"reduce\""), "{}", r.json);
}

#[test]
fn a_race_inside_warps_contiguous_stores_names_the_threads_that_touched_the_word() {
    // The stores of a warp are checked as one run; the report still names, for the first
    // word both blocks wrote (out[16]), the thread of each block that wrote it.
    let reports = run("overlap", 2, 32, 0);
    assert_eq!(reports.len(), 1, "{reports:?}");
    let r = &reports[0];
    assert_eq!(r.kind, "block_race");
    let line = line_of("st.global.u32 [%rd3], %r1;", "overlap");
    assert!(r.text.contains(&format!("thread (16,0,0) of block (0,0,0) (write at PTX line {line})")), "{}", r.text);
    assert!(r.text.contains(&format!("thread (0,0,0) of block (1,0,0) (write at PTX line {line})")), "{}", r.text);
    let apart = run("overlap", 1, 32, 0);
    assert!(apart.is_empty(), "{apart:?}");
}

#[test]
fn lanes_reading_one_shared_word_race_with_its_writer_even_when_the_writer_reads_first() {
    // Lane 0 (the writer, ordered with itself) is the first of the lanes reading the word:
    // the other lanes' reads still race with its write.
    let reports = run("broadcast", 1, 32, 0);
    assert_eq!(reports.len(), 1, "{reports:?}");
    let r = &reports[0];
    assert_eq!(r.kind, "shared");
    let write = line_of("st.shared.u32 [%r3], %r2;", "broadcast");
    let read = line_of("ld.shared.u32 %r4, [%r3];", "broadcast");
    assert!(r.text.contains(&format!("thread (0,0,0) of block (0,0,0) (write at PTX line {write})")), "{}", r.text);
    assert!(r.text.contains(&format!("(read at PTX line {read})")), "{}", r.text);
    assert!(!r.text.contains("thread (0,0,0) of block (0,0,0) (read"), "{}", r.text);
    let clean = run("broadcast", 1, 32, 1);
    assert!(clean.is_empty(), "{clean:?}");
}
