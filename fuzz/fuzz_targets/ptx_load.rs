//! Loads arbitrary text as a PTX module (parse, check, pre-decode) and reads everything a
//! loaded module tells its embedder. Any outcome but a panic, an abort or a hang is fine:
//! text that is not PTX the executor runs must be a `PtxError`.
#![no_main]

use cudrv_ptx::Module;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(module) = Module::load(&text) else { return };
    let _ = (module.version(), module.targets(), module.static_shared_size());
    for name in module.kernels() {
        let _ = module.kernel_params(name);
        let _ = module.kernel_info(name);
    }
    let addresses: Vec<u64> = (0..module.globals().len() as u64).map(|i| 0x1000_0000 + i * 0x1_0000).collect();
    for i in 0..module.globals().len() {
        let _ = module.global_image(i, &addresses);
    }
});
