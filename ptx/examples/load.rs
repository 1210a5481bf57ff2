//! `Module::load` time on large generated PTX (the generators of `tests/gen`): a kernel of
//! 1k, 10k and 100k labelled blocks with forward and backward conditional branches (an
//! NVRTC switch or unrolled loop), many small functions with their call sequences, many
//! registers in one long chain, and one long basic block of f32 sums.
//!
//!     cargo run --release -p cudrv-ptx --example load [-- SHAPES... SIZES...]
//!
//! SHAPES: any of labels, functions, registers, long_block (default all); SIZES (default
//! 1000 10000 100000): the number of labelled blocks, functions, registers (at most
//! 65000), f32 sums (at most 32000).
use std::time::Instant;

use cudrv_ptx::Module;

#[path = "../tests/gen/mod.rs"]
mod gen;

/// A generator of `tests/gen`: PTX text of a given size.
type Generator = fn(u32) -> String;

fn time(what: &str, n: u32, text: &str) {
    let lines = text.lines().count();
    let start = Instant::now();
    let r = Module::load(text);
    let secs = start.elapsed().as_secs_f64();
    let status = match r {
        Ok(_) => "ok".to_string(),
        Err(e) => format!("refused: {e}"),
    };
    println!(
        "{what:<16} n={n:>7}: {lines:>8} lines, {:>6.1} MB: {secs:8.3} s  ({:7.0} ns/line) {status}",
        text.len() as f64 / 1e6,
        secs * 1e9 / lines as f64
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut sizes: Vec<u32> = args.iter().filter_map(|a| a.parse().ok()).collect();
    if sizes.is_empty() {
        sizes = vec![1_000, 10_000, 100_000];
    }
    let shapes: Vec<&str> = args.iter().filter(|a| a.parse::<u32>().is_err()).map(String::as_str).collect();
    // Each shape with the largest size it takes: a function names at most 65536
    // registers (the long block names 2n + 1).
    let generators: [(&str, Generator, u32); 4] = [
        ("labels", gen::label_kernel, u32::MAX),
        ("functions", gen::many_functions, u32::MAX),
        ("registers", gen::many_registers, 65_000),
        ("long_block", gen::long_block, 32_000),
    ];
    for (what, generate, most) in generators {
        if shapes.is_empty() || shapes.contains(&what) {
            for &n in &sizes {
                time(what, n.min(most), &generate(n.min(most)));
            }
        }
    }
}
