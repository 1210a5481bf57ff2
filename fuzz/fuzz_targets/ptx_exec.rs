//! Loads fuzzed PTX and runs up to three of its kernels on small buffers, bounded: a few
//! blocks of up to 256 threads, at most `LIMIT` warp instructions a launch. The input is
//! 16 bytes of launch settings, then the PTX text. A fault is an answer; a panic, an
//! abort, a hang or an allocation beyond the fuzzer's limit is a finding.
#![no_main]

use cudrv_fuzz::Input;
use cudrv_ptx::{GlobalMemory, HostMemory, Module};
use libfuzzer_sys::fuzz_target;

/// Warp instructions a launch may issue.
const LIMIT: u64 = 100_000;
/// The largest module global allocated (bigger ones: the input is skipped).
const MAX_GLOBAL: u64 = 1 << 20;
/// The largest parameter filled in (bigger ones: the kernel is skipped).
const MAX_PARAM: u64 = 4096;
/// Bytes of each buffer the kernels get.
const BUFFER: usize = 1024;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let settings: [u8; 16] = input.array();
    let text = String::from_utf8_lossy(input.rest());
    let Ok(mut module) = Module::load(&text) else { return };
    module.set_instruction_limit(Some(LIMIT));
    let mut memory = HostMemory::new();
    memory.capture_printf();
    let mut addresses = Vec::new();
    for g in module.globals() {
        if g.size > MAX_GLOBAL {
            return;
        }
        addresses.push(memory.alloc(g.size as usize));
    }
    for (i, &a) in addresses.iter().enumerate() {
        if let Some(image) = module.global_image(i, &addresses) {
            let _ = memory.write(a, &image);
        }
    }
    if module.bind_globals(&addresses).is_err() {
        return;
    }
    let pattern: Vec<u8> = (0..BUFFER).map(|i| settings[i % 16].wrapping_add(i as u8)).collect();
    let buffers = [memory.alloc_from(&pattern), memory.alloc(BUFFER)];
    let kernels: Vec<String> = module.kernels().into_iter().take(3).map(str::to_string).collect();
    for kernel in kernels {
        let Some(params) = module.kernel_params(&kernel) else { continue };
        if params.iter().any(|p| p.size > MAX_PARAM) {
            continue;
        }
        let values: Vec<Vec<u8>> = params
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let choice = settings[8 + i % 8];
                let mut bytes = vec![0u8; p.size as usize];
                match (p.size, choice % 4) {
                    // A buffer (the first or the second), possibly at an offset.
                    (8, 0 | 1) => {
                        let offset = u64::from(choice >> 4) * 4;
                        bytes.copy_from_slice(&(buffers[usize::from(choice % 2)] + offset).to_le_bytes());
                    }
                    // A small number (a count, an index).
                    (_, 2) => {
                        if let Some(b) = bytes.first_mut() {
                            *b = choice >> 2;
                        }
                    }
                    // Raw bytes.
                    _ => {
                        for (j, b) in bytes.iter_mut().enumerate() {
                            *b = settings[(i + j) % 16];
                        }
                    }
                }
                bytes
            })
            .collect();
        let refs: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
        let grid = [1 + u32::from(settings[0] % 3), 1 + u32::from(settings[1] % 2), 1];
        let block = [1 + u32::from(settings[2] % 64), 1 + u32::from(settings[3] % 4), 1];
        let dynamic_smem = u32::from(settings[4]) * 64;
        let _ = module.launch_on(&kernel, grid, block, dynamic_smem, &refs, &memory, 1);
    }
});
