//! Launches of PTX a fuzzer (or any embedder running untrusted PTX) feeds: an instruction
//! limit stops a kernel that never ends (`Module::set_instruction_limit`).

use cudrv_ptx::{Fault, HostMemory, Module};

/// A kernel that branches to itself forever.
const ENDLESS: &str = "
.version 8.0
.target sm_90
.address_size 64
.visible .entry spin()
{
$L_top:
    bra.uni $L_top;
}
";

/// A kernel that loops `n` times (a parameter) and ends.
const COUNTED: &str = "
.version 8.0
.target sm_90
.address_size 64
.visible .entry count(.param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<3>;
    ld.param.u32 %r1, [n];
    mov.u32 %r2, 0;
$L_top:
    add.s32 %r2, %r2, 1;
    setp.lt.u32 %p1, %r2, %r1;
    @%p1 bra $L_top;
    ret;
}
";

#[test]
fn an_endless_kernel_stops_at_the_limit() {
    let mut m = Module::load(ENDLESS).unwrap();
    m.set_instruction_limit(Some(10_000));
    let mem = HostMemory::new();
    // Several blocks on several host threads: the limit is the launch's, all blocks together.
    let r = m.launch_on("spin", [4, 1, 1], [64, 1, 1], 0, &[], &mem, 4);
    assert_eq!(r, Err(Fault::InstructionLimit { limit: 10_000 }));
    assert_eq!(r.unwrap_err().to_string(), "the launch needs more than 10000 warp instructions");
}

#[test]
fn a_kernel_within_the_limit_runs_to_its_end() {
    let mut m = Module::load(COUNTED).unwrap();
    let mem = HostMemory::new();
    let n = 100u32.to_le_bytes();
    let stats = m.launch_on("count", [2, 1, 1], [32, 1, 1], 0, &[&n], &mem, 1).unwrap();
    assert!(stats.warp_instructions > 200, "{stats:?}");

    // Exactly what it needs: it ends; one instruction less: it stops.
    m.set_instruction_limit(Some(stats.warp_instructions));
    assert_eq!(m.launch_on("count", [2, 1, 1], [32, 1, 1], 0, &[&n], &mem, 1), Ok(stats));
    m.set_instruction_limit(Some(stats.warp_instructions - 1));
    assert_eq!(
        m.launch_on("count", [2, 1, 1], [32, 1, 1], 0, &[&n], &mem, 1),
        Err(Fault::InstructionLimit { limit: stats.warp_instructions - 1 })
    );

    // No limit again: it runs as before.
    m.set_instruction_limit(None);
    assert_eq!(m.launch_on("count", [2, 1, 1], [32, 1, 1], 0, &[&n], &mem, 1), Ok(stats));
}
