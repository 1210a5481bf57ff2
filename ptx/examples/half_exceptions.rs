//! Writes `ptx/src/approx_half.bin`, the inputs where the GPU's 16-bit `ex2`/`tanh` differ
//! from `cudrv_ptx::approx::half_model`, from the GPU's record of every input:
//!
//! `cargo run -p cudrv-ptx --example half_exceptions -- docs/gpu-runs/h100/half-approx-2026-12-06.bin ptx/src/approx_half.bin`
//!
//! The record (scripts/probes/instructions/approx.cu) is 4 x 65536 little-endian u16:
//! `ex2.approx.f16`, `tanh.approx.f16`, `ex2.approx.ftz.bf16`, `tanh.approx.bf16` of each
//! input bit pattern.

use cudrv_ptx::approx::{half_model, Func};
use cudrv_ptx::float::Fmt;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(input), Some(output)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: half_exceptions RECORD.bin OUT.bin");
        std::process::exit(2);
    };
    let record = std::fs::read(input).expect("the record");
    let forms = [(Func::Ex2, Fmt::F16), (Func::Tanh, Fmt::F16), (Func::Ex2, Fmt::Bf16), (Func::Tanh, Fmt::Bf16)];
    let mut out = Vec::new();
    for (k, (f, fmt)) in forms.iter().enumerate() {
        let mut pairs = Vec::new();
        for x in 0..=u16::MAX {
            let at = (k * 65536 + usize::from(x)) * 2;
            let gpu = u16::from_le_bytes([record[at], record[at + 1]]);
            if gpu != half_model(*f, *fmt, x) {
                pairs.extend_from_slice(&x.to_le_bytes());
                pairs.extend_from_slice(&gpu.to_le_bytes());
            }
        }
        println!("{f:?} {fmt:?}: {} exceptions", pairs.len() / 4);
        out.extend_from_slice(&((pairs.len() / 4) as u32).to_le_bytes());
        out.extend_from_slice(&pairs);
    }
    std::fs::write(output, out).expect("written");
}
