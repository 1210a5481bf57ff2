//! Runs of integer instructions compiled to machine code (feature `native`) against the
//! interpreter: every form the code generator takes (moves, add/sub, mul.lo, mul.wide,
//! mad.lo, mad.wide, and/or/xor including predicates, shifts by a constant, integer
//! `setp` in every order) over 16-, 32- and 64-bit, signed and unsigned types, from edge
//! values in each lane (0, 1, all ones, the sign bit, values that carry out of 16 and 32
//! bits), in a loop turned 300 times so that its runs are compiled (a run is compiled
//! once a whole warp has reached it 256 times) and the turns after it run as machine code.
//! Every intermediate value is folded into a checksum per thread, so a single differing
//! bit anywhere shows.

use cudrv_ptx::{
    Access, BlockObserver, Event, Executor, Fault, GlobalMemory, HostMemory, LaunchStats, Module, Observer, Space,
};

const PTX: &str = ".version 8.0
.target sm_90
.address_size 64
.visible .entry forms(.param .u64 out, .param .u64 in, .param .u32 turns)
{
    .reg .pred %p<12>;
    .reg .b16 %rs<12>;
    .reg .b32 %r<40>;
    .reg .b64 %rd<40>;
    ld.param.u64 %rd30, [out];
    ld.param.u64 %rd31, [in];
    ld.param.u32 %r30, [turns];
    mov.u32 %r31, %tid.x;
    cvta.to.global.u64 %rd30, %rd30;
    cvta.to.global.u64 %rd31, %rd31;
    mul.wide.u32 %rd32, %r31, 8;
    add.s64 %rd33, %rd31, %rd32;
    ld.global.u64 %rd1, [%rd33];
    ld.global.u64 %rd2, [%rd33+256];
    cvt.u32.u64 %r1, %rd1;
    cvt.u32.u64 %r2, %rd2;
    cvt.u16.u64 %rs1, %rd1;
    cvt.u16.u64 %rs2, %rd2;
    mov.u64 %rd20, 0;
    mov.u32 %r20, 0;
$LOOP:
    add.u32 %r3, %r1, %r2;
    sub.s32 %r4, %r3, 7;
    mul.lo.s32 %r5, %r4, %r1;
    mad.lo.u32 %r6, %r5, -3, %r2;
    mul.wide.s32 %rd3, %r6, %r4;
    mul.wide.u32 %rd4, %r6, -1640531527;
    mad.wide.s32 %rd5, %r5, %r6, %rd3;
    mad.wide.u32 %rd6, %r5, 77, %rd4;
    and.b32 %r7, %r6, %r3;
    or.b32 %r8, %r7, 61680;
    xor.b32 %r9, %r8, %r5;
    shl.b32 %r10, %r9, 5;
    shr.u32 %r11, %r10, 3;
    shr.s32 %r12, %r9, 7;
    setp.lt.s32 %p2, %r12, %r11;
    setp.hi.u32 %p3, %r12, %r11;
    setp.ge.s32 %p4, %r12, 0;
    setp.ls.u32 %p5, %r1, %r2;
    setp.eq.u32 %p6, %r7, %r8;
    setp.ne.s32 %p7, %r4, -7;
    and.pred %p8, %p2, %p3;
    or.pred %p9, %p4, %p5;
    xor.pred %p10, %p8, %p9;
    xor.pred %p10, %p10, %p6;
    xor.pred %p10, %p10, %p7;
    add.s64 %rd7, %rd5, %rd6;
    sub.u64 %rd8, %rd7, %rd1;
    mul.lo.u64 %rd9, %rd8, %rd2;
    mad.lo.s64 %rd10, %rd9, 3, %rd8;
    shr.s64 %rd11, %rd10, 13;
    shr.u64 %rd12, %rd10, 17;
    shl.b64 %rd13, %rd11, 9;
    xor.b64 %rd14, %rd12, %rd13;
    or.b64 %rd15, %rd14, %rd1;
    and.b64 %rd16, %rd15, -4294967296;
    setp.lt.u64 %p1, %rd14, %rd16;
    setp.gt.s64 %p11, %rd14, %rd16;
    add.u16 %rs3, %rs1, %rs2;
    sub.s16 %rs4, %rs3, 300;
    mul.lo.s16 %rs5, %rs4, %rs2;
    shr.s16 %rs6, %rs5, 3;
    shr.u16 %rs7, %rs5, 5;
    shl.b16 %rs8, %rs6, 4;
    mul.wide.s16 %r13, %rs5, %rs6;
    mul.wide.u16 %r14, %rs7, %rs8;
    mad.wide.s16 %r15, %rs4, %rs6, %r13;
    setp.le.s16 %p2, %rs6, %rs7;
    setp.lo.u16 %p3, %rs6, %rs7;
    mov.b16 %rs9, %rs8;
    mov.u32 %r16, 305419896;
    mov.u64 %rd17, %rd14;
    selp.u32 %r17, 1, 0, %p10;
    selp.u32 %r18, 2, 0, %p1;
    selp.u32 %r19, 4, 0, %p11;
    selp.u32 %r21, 8, 0, %p2;
    selp.u32 %r22, 16, 0, %p3;
    add.u32 %r17, %r17, %r18;
    add.u32 %r17, %r17, %r19;
    add.u32 %r17, %r17, %r21;
    add.u32 %r17, %r17, %r22;
    mul.wide.u32 %rd18, %r17, 1;
    mul.wide.u32 %rd19, %r12, 1;
    mul.wide.u32 %rd21, %r11, 1;
    mul.wide.u32 %rd22, %r15, 1;
    mul.wide.u32 %rd23, %r14, 1;
    mul.wide.u16 %r23, %rs9, 1;
    mul.wide.u32 %rd24, %r23, 1;
    xor.b64 %rd20, %rd20, %rd17;
    mad.lo.u64 %rd20, %rd20, 1099511628211, %rd18;
    xor.b64 %rd20, %rd20, %rd19;
    mad.lo.u64 %rd20, %rd20, 1099511628211, %rd21;
    xor.b64 %rd20, %rd20, %rd22;
    mad.lo.u64 %rd20, %rd20, 1099511628211, %rd23;
    xor.b64 %rd20, %rd20, %rd24;
    xor.b64 %rd20, %rd20, %rd7;
    mad.lo.u64 %rd20, %rd20, 31, %rd9;
    add.u32 %r1, %r9, %r16;
    xor.b32 %r2, %r2, %r6;
    add.u64 %rd1, %rd1, %rd14;
    xor.b64 %rd2, %rd2, %rd10;
    add.u16 %rs1, %rs1, %rs5;
    xor.b16 %rs2, %rs2, %rs8;
    add.u32 %r20, %r20, 1;
    setp.lt.u32 %p1, %r20, %r30;
    @%p1 bra $LOOP;
    add.s64 %rd34, %rd30, %rd32;
    st.global.u64 [%rd34], %rd20;
    ret;
}
";

/// Edge values, one per lane (the first 32) and a second operand per lane (the next 32).
fn inputs() -> Vec<u64> {
    let edges = [
        0u64,
        1,
        u64::MAX,
        0x8000_0000_0000_0000,
        0x7fff_ffff_ffff_ffff,
        0xffff_ffff,
        0x8000_0000,
        0x7fff_ffff,
        0xffff,
        0x8000,
        0x7fff,
        0x1_0000_0000,
        0xffff_ffff_0000_0000,
        0x0000_ffff_ffff_0000,
        2,
        3,
        7,
        0xdead_beef_cafe_f00d,
        0x0123_4567_89ab_cdef,
        300,
        0xffff_fed4,
        u64::MAX - 1,
        0x5555_5555_5555_5555,
        0xaaaa_aaaa_aaaa_aaaa,
        0x0000_0001_0000_0001,
        0x8000_8000_8000_8000,
        0x7fff_8000_7fff_8000,
        12345,
        0xffff_ffff_ffff_fff9,
        0x1_0000,
        0xfffe,
        0x9e37_79b9_7f4a_7c15,
    ];
    let mut v: Vec<u64> = edges.to_vec();
    v.extend(edges.iter().rev().map(|e| e.rotate_left(13) ^ 0x9e37_79b9));
    v
}

/// `kernel` of `ptx` over one block of 32 threads through `executor` under `limit`, its
/// parameters an output of `out_len` bytes (0xee), an input holding `input` if it is not
/// empty, then `more`: what the launch answered and the output's bytes.
fn launch(
    (ptx, kernel): (&str, &str),
    executor: Executor,
    limit: Option<u64>,
    (input, out_len): (&[u8], usize),
    more: &[&[u8]],
) -> (Result<LaunchStats, Fault>, Vec<u8>) {
    let mut m = Module::load(ptx).expect("the test kernel loads");
    m.set_executor(executor);
    m.set_instruction_limit(limit);
    let mut mem = HostMemory::new();
    let out = mem.alloc_from(&vec![0xee; out_len]).to_le_bytes();
    let src = (!input.is_empty()).then(|| mem.alloc_from(input).to_le_bytes());
    let params: Vec<&[u8]> =
        [&out[..]].into_iter().chain(src.as_ref().map(|s| &s[..])).chain(more.iter().copied()).collect();
    let r = m.launch_on(kernel, [1, 1, 1], [32, 1, 1], 0, &params, &mem as &dyn GlobalMemory, 1);
    let out = u64::from_le_bytes(out);
    (r, mem.bytes(out, out_len).expect("the output is readable").to_vec())
}

fn run(executor: Executor, turns: u32) -> (Vec<u8>, LaunchStats) {
    let input: Vec<u8> = inputs().iter().flat_map(|v| v.to_le_bytes()).collect();
    let (r, out) = launch((PTX, "forms"), executor, None, (&input, 32 * 8), &[&turns.to_le_bytes()]);
    (out, r.expect("the kernel runs"))
}

/// The runs compiled to machine code give the interpreter's bits in every lane, and the
/// launch the same counts.
#[test]
fn compiled_runs_give_the_interpreters_bits() {
    let m = Module::load(PTX).expect("the test kernel loads");
    let st = m.compile();
    let off = std::env::var("CUDRV_PTX_NATIVE").is_ok_and(|v| v == "0");
    if cfg!(feature = "native") && cfg!(target_arch = "x86_64") && !off {
        assert!(st.native_runs >= 4, "the loop's integer runs are compiled: {st:?}");
        assert!(st.native_instructions >= 60, "{st:?}");
    }
    for turns in [1, 300] {
        let (want, want_stats) = run(Executor::Interpreter, turns);
        let (got, got_stats) = run(Executor::Compiled, turns);
        assert_eq!(got_stats, want_stats, "counts, {turns} turns");
        for (lane, (g, w)) in got.chunks(8).zip(want.chunks(8)).enumerate() {
            assert_eq!(g, w, "lane {lane}, {turns} turns");
        }
        // The checksum moved in every lane (the loop ran and folded its values).
        assert!(want.chunks(8).all(|c| c != [0u8; 8]));
    }
}

/// `spin(out, n)`: every lane turns the same loop `n` times (a run that is the whole loop
/// body, followed by the branch back to it: the machine code takes the branch itself while
/// the whole warp does), with 16-, 32- and 64-bit arithmetic in it, and `%r9` carried from
/// turn to turn though no instruction outside the loop names it (it starts as the frame's
/// zero; the run must store it for its next turn).
const SPIN: &str = ".version 8.0
.target sm_90
.address_size 64
.visible .entry spin(.param .u64 out, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b16 %rs<4>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    mul.wide.u32 %rd5, %r2, 2654435761;
    cvt.u16.u32 %rs1, %r2;
    mov.u32 %r3, %r2;
    mov.u32 %r4, 0;
$LOOP:
    mad.lo.u32 %r3, %r3, 1664525, 1013904223;
    xor.b32 %r5, %r3, %r2;
    shr.u32 %r6, %r5, 3;
    add.u32 %r3, %r3, %r6;
    mad.wide.u32 %rd5, %r6, %r5, %rd5;
    shr.s64 %rd6, %rd5, 7;
    xor.b64 %rd5, %rd5, %rd6;
    mul.lo.s16 %rs1, %rs1, 31;
    add.u16 %rs1, %rs1, 7;
    add.u32 %r9, %r9, 3;
    xor.b32 %r10, %r9, %r3;
    add.u32 %r4, %r4, 1;
    setp.lt.u32 %p1, %r4, %r1;
    @%p1 bra $LOOP;
    cvta.to.global.u64 %rd1, %rd1;
    mul.wide.u32 %rd2, %r2, 16;
    add.s64 %rd3, %rd1, %rd2;
    mul.wide.u16 %r7, %rs1, 1;
    xor.b32 %r8, %r10, %r7;
    st.global.u32 [%rd3], %r8;
    st.global.u64 [%rd3+8], %rd5;
    ret;
}
";

fn spin(executor: Executor, n: u32, limit: Option<u64>) -> (Result<LaunchStats, Fault>, Vec<u8>) {
    launch((SPIN, "spin"), executor, limit, (&[], 32 * 16), &[&n.to_le_bytes()])
}

/// A loop whose whole body is machine code, turned by the code itself: the same registers,
/// counts and (under an instruction limit falling at any instruction of a turn, before and
/// after the run is compiled) the same fault as interpreted.
#[test]
fn a_loop_turned_by_machine_code_counts_and_computes_alike() {
    for n in [1, 2, 255, 256, 257, 1000] {
        let want = spin(Executor::Interpreter, n, None);
        assert_eq!(spin(Executor::Compiled, n, None), want, "{n} turns");
        // Every lane's two words written (bytes 4..8 of each 16 are left as they were).
        assert!(want.1.chunks(16).all(|w| w.get(..4) != Some(&[0xee; 4]) && w.get(8..) != Some(&[0xee; 8])));
    }
    // 14 instructions a turn after a prologue of 7: limits inside the 257th turn and around.
    for limit in [7, 8, 21, 22, 3600, 3605, 3606, 3607, 3610, 3612, 5000, 14006, 14007] {
        let want = spin(Executor::Interpreter, 1000, Some(limit));
        assert_eq!(spin(Executor::Compiled, 1000, Some(limit)), want, "limit {limit}");
    }
}

/// `floats(out, in, bad, n)`: each lane stores two floats from `in` into shared memory;
/// after a barrier, a loop of `n` turns loads four of the block's floats (at offsets from
/// registers the loop does not write; `bad` moves one load past the end of shared memory
/// from the 300th turn when it is not 0) and folds them with f32 add, sub, mul and fma,
/// then a 16-bit and an 8-bit signed load.
const FLOATS: &str = ".version 8.0
.target sm_90
.address_size 64
.visible .entry floats(.param .u64 out, .param .u64 in, .param .u32 bad, .param .u32 n)
{
    .reg .pred %p<3>;
    .reg .f32 %f<16>;
    .reg .b16 %rs<3>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<16>;
    .shared .align 4 .b8 s[256];
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [in];
    ld.param.u32 %r1, [bad];
    ld.param.u32 %r2, [n];
    mov.u32 %r3, %tid.x;
    cvta.to.global.u64 %rd2, %rd2;
    mul.wide.u32 %rd3, %r3, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.f32 %f1, [%rd4];
    ld.global.f32 %f2, [%rd4+128];
    mov.u64 %rd5, s;
    add.s64 %rd6, %rd5, %rd3;
    st.shared.f32 [%rd6], %f1;
    st.shared.f32 [%rd6+128], %f2;
    bar.sync 0;
    xor.b32 %r4, %r3, 5;
    mul.wide.u32 %rd7, %r4, 4;
    add.s64 %rd8, %rd5, %rd7;
    mov.f32 %f3, 0f3F800000;
    mov.f32 %f4, 0f00000000;
    mov.u32 %r5, 0;
    mov.u64 %rd9, 0;
$LOOP:
    setp.ge.u32 %p2, %r5, 300;
    selp.u64 %rd9, 4096, 0, %p2;
    mul.wide.u32 %rd13, %r1, 1;
    mul.lo.u64 %rd9, %rd9, %rd13;
    add.s64 %rd14, %rd8, %rd9;
    ld.shared.f32 %f11, [%rd14];
    add.rn.f32 %f3, %f3, %f11;
    ld.shared.f32 %f5, [%rd8];
    ld.shared.f32 %f6, [%rd6+128];
    ld.shared.f32 %f7, [%rd8+128];
    fma.rn.f32 %f3, %f5, %f6, %f3;
    mul.rn.f32 %f8, %f3, %f7;
    sub.rn.f32 %f9, %f8, %f5;
    add.rn.f32 %f4, %f4, %f9;
    mul.f32 %f10, %f4, 0f3F000000;
    fma.rn.f32 %f4, %f10, %f6, %f7;
    ld.shared.s16 %rs1, [%rd6+2];
    ld.shared.s8 %rs2, [%rd8+3];
    add.s16 %rs1, %rs1, %rs2;
    mul.wide.s16 %r6, %rs1, 3;
    add.u32 %r7, %r7, %r6;
    add.u32 %r5, %r5, 1;
    setp.lt.u32 %p1, %r5, %r2;
    @%p1 bra $LOOP;
    cvta.to.global.u64 %rd1, %rd1;
    mul.wide.u32 %rd10, %r3, 16;
    add.s64 %rd11, %rd1, %rd10;
    st.global.f32 [%rd11], %f3;
    st.global.f32 [%rd11+4], %f4;
    st.global.u32 [%rd11+8], %r7;
    ret;
}
";

fn floats(executor: Executor, bad: u32, n: u32) -> (Result<LaunchStats, Fault>, Vec<u8>) {
    let specials = [
        0.0f32,
        -0.0,
        1.0,
        -1.5,
        f32::MIN_POSITIVE,
        1e-45,
        -1e-40,
        f32::MAX,
        -f32::MAX,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7fa0_0001),
        0.1,
        3.0e38,
        1.0 + f32::EPSILON,
        -7.25,
        1e-20,
        65504.0,
        0.5,
        2.0,
        -0.75,
        1e10,
        1e-10,
        3.0,
        -3.0,
        0.3333,
        100.0,
        -100.0,
        7.0,
        0.001,
    ];
    let input: Vec<u8> = specials.iter().chain(specials.iter().rev()).flat_map(|v| v.to_le_bytes()).collect();
    launch((FLOATS, "floats"), executor, None, (&input, 32 * 16), &[&bad.to_le_bytes(), &n.to_le_bytes()])
}

/// f32 arithmetic and shared loads in machine code: the same bits as interpreted from
/// special values (NaNs made canonical, infinities, subnormals, signed zeros), and a load
/// out of shared memory faulting at the same instruction (the turn's addresses are checked
/// before it runs, and the steps take over).
#[test]
fn floats_and_shared_loads_in_machine_code_agree() {
    let m = Module::load(FLOATS).expect("the test kernel loads");
    let st = m.compile();
    let off = std::env::var("CUDRV_PTX_NATIVE").is_ok_and(|v| v == "0");
    if cfg!(feature = "native") && cfg!(target_arch = "x86_64") && !off {
        assert!(st.native_instructions >= 14, "the loop's loads and arithmetic are compiled: {st:?}");
    }
    for n in [1, 257, 400] {
        let want = floats(Executor::Interpreter, 0, n);
        assert!(want.0.is_ok(), "{:?}", want.0);
        assert_eq!(floats(Executor::Compiled, 0, n), want, "{n} turns");
    }
    // From the 300th turn a load reads 4 KiB past its address: out of shared memory.
    let want = floats(Executor::Interpreter, 1, 400);
    assert!(matches!(want.0, Err(Fault::IllegalAddress { .. })), "{:?}", want.0);
    assert_eq!(floats(Executor::Compiled, 1, 400), want);
}

/// `mem(out, in, n, mode)`: a loop turned `n` times whose body loads global memory of every
/// size (signed and not, an f32 among them) at a base fixed for the loop and at one it
/// computes (the same, but for the second loop of modes 2 and 3), folds it, and
/// stores three fields of a 16-byte record per lane; then the loop again (its runs compiled
/// by now). `mode` 1 reads the records instead of the input (lane `i` reads bytes lane
/// `i / 2` stores: lane after lane would read what instruction after instruction reads
/// later, so the steps must take the run); 2 moves lane 17's computed base 1 MiB away
/// (outside every allocation) for the second loop; 3 moves lane 5's by 2 bytes (misaligned
/// for most of the loads at it).
const MEM: &str = ".version 8.0
.target sm_90
.address_size 64
.visible .entry mem(.param .u64 out, .param .u64 in, .param .u32 n, .param .u32 mode)
{
    .reg .pred %p<4>;
    .reg .b16 %rs<8>;
    .reg .b32 %r<16>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<16>;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [in];
    ld.param.u32 %r1, [n];
    ld.param.u32 %r2, [mode];
    mov.u32 %r3, %tid.x;
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    setp.eq.u32 %p2, %r2, 1;
    selp.b64 %rd2, %rd1, %rd2, %p2;
    setp.eq.u32 %p2, %r2, 2;
    setp.eq.u32 %p3, %r3, 17;
    and.pred %p2, %p2, %p3;
    selp.b64 %rd3, 1048576, 0, %p2;
    setp.eq.u32 %p2, %r2, 3;
    setp.eq.u32 %p3, %r3, 5;
    and.pred %p2, %p2, %p3;
    selp.b64 %rd4, 2, 0, %p2;
    add.s64 %rd3, %rd3, %rd4;
    mul.wide.u32 %rd5, %r3, 8;
    add.s64 %rd6, %rd2, %rd5;
    mul.wide.u32 %rd7, %r3, 16;
    add.s64 %rd8, %rd1, %rd7;
    mov.u32 %r4, 0;
    mov.u64 %rd13, 0;
$LOOP:
    add.s64 %rd11, %rd6, %rd13;
    ld.global.u8 %rs1, [%rd6];
    ld.global.s8 %rs2, [%rd6+1];
    ld.global.s16 %rs3, [%rd11+2];
    ld.global.u32 %r5, [%rd11+4];
    ld.global.s64 %rd9, [%rd11];
    ld.global.f32 %f1, [%rd11+4];
    add.u16 %rs4, %rs1, %rs2;
    mul.wide.s16 %r6, %rs3, %rs4;
    add.u32 %r10, %r10, %r6;
    xor.b32 %r10, %r10, %r5;
    add.s64 %rd10, %rd10, %rd9;
    mul.lo.u64 %rd10, %rd10, 1099511628211;
    fma.rn.f32 %f2, %f1, 0f3F000001, %f2;
    st.global.u32 [%rd8], %r10;
    st.global.f32 [%rd8+4], %f2;
    st.global.u64 [%rd8+8], %rd10;
    add.u32 %r4, %r4, 1;
    setp.lt.u32 %p1, %r4, %r1;
    @%p1 bra $LOOP;
    setp.ne.u32 %p2, %r11, 0;
    @%p2 bra $DONE;
    mov.u32 %r11, 1;
    mov.u64 %rd13, %rd3;
    mov.u32 %r4, 0;
    bra.uni $LOOP;
$DONE:
    ret;
}
";

/// `mem`'s input: a sign bit set in a different byte of each lane's word.
fn mem_input() -> Vec<u8> {
    (0u64..32).flat_map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (0x80 << (8 * (i % 8)))).to_le_bytes()).collect()
}

fn mem(executor: Executor, n: u32, mode: u32) -> (Result<LaunchStats, Fault>, Vec<u8>) {
    launch((MEM, "mem"), executor, None, (&mem_input(), 32 * 16), &[&n.to_le_bytes(), &mode.to_le_bytes()])
}

/// Global loads and stores in machine code: the same bits as interpreted for every size
/// and sign; records whose lanes' stores the loads of other lanes read taken step by step;
/// a lane outside every allocation and a misaligned lane faulting as interpreted (each
/// warp's addresses are checked before its code runs, and the steps take over).
#[test]
fn global_loads_and_stores_in_machine_code_agree() {
    let m = Module::load(MEM).expect("the test kernel loads");
    let st = m.compile();
    let off = std::env::var("CUDRV_PTX_NATIVE").is_ok_and(|v| v == "0");
    if cfg!(feature = "native") && cfg!(target_arch = "x86_64") && !off {
        assert!(st.native_instructions >= 16, "the loop's loads, arithmetic and stores are compiled: {st:?}");
    }
    for mode in [0, 1] {
        for n in [1, 300] {
            let want = mem(Executor::Interpreter, n, mode);
            assert!(want.0.is_ok(), "{:?}", want.0);
            assert_eq!(mem(Executor::Compiled, n, mode), want, "{n} turns, mode {mode}");
        }
    }
    for (mode, lane_addr) in [(2u32, 1u64 << 20), (3, 2)] {
        let want = mem(Executor::Interpreter, 300, mode);
        let Err(Fault::IllegalAddress { addr, .. } | Fault::MisalignedAddress { addr, .. }) = want.0 else {
            panic!("mode {mode}: {:?}", want.0)
        };
        assert!(addr % (1 << 20) >= lane_addr % (1 << 20), "mode {mode}: {addr:#x}");
        assert_eq!(mem(Executor::Compiled, 300, mode), want, "mode {mode}");
    }
}

/// Counts the global accesses of a launch, thread by thread.
struct Counting(std::sync::atomic::AtomicU64);

struct CountingBlock<'a>(&'a std::sync::atomic::AtomicU64);

impl Observer for Counting {
    fn block(&self, _ctaid: [u32; 3]) -> Box<dyn BlockObserver + '_> {
        Box::new(CountingBlock(&self.0))
    }
}

impl BlockObserver for CountingBlock<'_> {
    fn access(&mut self, a: &Access) {
        if a.space == Space::Global {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
    fn event(&mut self, _e: Event) {}
    fn finish(&mut self) {}
}

/// Under an observer (the stand-in's sanitizer), runs that touch memory are taken step by
/// step, so that the observer sees every access, even once they are compiled and a warp
/// reaches them from a branch back: the observer counts each thread's 9 accesses a turn,
/// through both executors, and the output is the unobserved one.
#[test]
fn an_observer_sees_every_access_of_a_compiled_run() {
    let n = 300u32;
    let want = mem(Executor::Interpreter, n, 0);
    for executor in [Executor::Interpreter, Executor::Compiled] {
        let mut m = Module::load(MEM).expect("the test kernel loads");
        m.set_executor(executor);
        let mut memory = HostMemory::new();
        let out = memory.alloc_from(&[0xee; 32 * 16]);
        let src = memory.alloc_from(&mem_input());
        let params = [&out.to_le_bytes()[..], &src.to_le_bytes(), &n.to_le_bytes(), &0u32.to_le_bytes()];
        let seen = Counting(Default::default());
        let r = m.launch_observed("mem", [1, 1, 1], [32, 1, 1], 0, &params, &[], &memory, 1, Some(&seen));
        assert_eq!(r, want.0, "{executor:?}");
        assert_eq!(seen.0.into_inner(), 2 * u64::from(n) * 32 * 9, "{executor:?}");
        assert_eq!(memory.bytes(out, 32 * 16), Some(want.1.clone()), "{executor:?}");
    }
}
