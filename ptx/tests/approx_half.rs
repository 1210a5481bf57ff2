//! The 16-bit `ex2`/`tanh` approximations match the GPU's record of every input
//! (`docs/gpu-runs/h100/half-approx-2026-12-06.bin`, from scripts/probes/instructions/approx.cu:
//! 4 x 65536 u16 of `ex2.approx.f16`, `tanh.approx.f16`, `ex2.approx.ftz.bf16`,
//! `tanh.approx.bf16`).

use cudrv_ptx::approx::{half, Func};
use cudrv_ptx::float::Fmt;

#[test]
fn every_16_bit_input_gives_the_gpus_bits() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/gpu-runs/h100/half-approx-2026-12-06.bin");
    let record = std::fs::read(path).expect("the GPU's record");
    assert_eq!(record.len(), 4 * 65536 * 2);
    let forms = [(Func::Ex2, Fmt::F16), (Func::Tanh, Fmt::F16), (Func::Ex2, Fmt::Bf16), (Func::Tanh, Fmt::Bf16)];
    for (k, (f, fmt)) in forms.iter().enumerate() {
        let wrong: Vec<u16> = (0..=u16::MAX)
            .filter(|&x| {
                let at = (k * 65536 + usize::from(x)) * 2;
                half(*f, *fmt, x) != Some(u16::from_le_bytes([record[at], record[at + 1]]))
            })
            .collect();
        assert!(wrong.is_empty(), "{f:?} {fmt:?}: {} inputs differ, first {:#06x}", wrong.len(), wrong[0]);
    }
    assert_eq!(half(Func::Sin, Fmt::F16, 0), None);
}
