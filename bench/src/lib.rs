//! Only benchmarks live here: `cargo bench -p cudrv-bench`.
