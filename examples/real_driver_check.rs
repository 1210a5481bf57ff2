//! Checks cudrv against the real driver of this machine (run on a GPU machine):
//! `cargo run --release --example real_driver_check`.
//!
//! Loads the driver, resolves the whole table, checks the gating of variants newer than
//! the driver and the binding of unversioned names, and calls a handful of entries through
//! `p` and `pw`. Prints what it saw; exits 1 if any check failed.

use std::ffi::{c_char, CStr};
use std::sync::{Arc, Mutex};

use cudrv::sys::{CUcontext, CUdeviceptr, CUresult, CUstream};
use cudrv::table::{NAMES, VARIANTS};
use cudrv::{Availability, Driver, EntryKind, LoadOptions};

#[path = "common/checks.rs"]
mod checks;
use checks::Checks;

fn state_counts(d: &Driver) -> (usize, usize, usize, usize) {
    let (mut r, mut g, mut n, mut q) = (0, 0, 0, 0);
    for e in d.entries().filter(|e| matches!(e.kind, EntryKind::Variant { .. })) {
        match e.availability {
            Availability::Resolved { .. } => r += 1,
            Availability::NeedsDriver { .. } => g += 1,
            Availability::NotInDriver(_) => n += 1,
            _ => q += 1,
        }
    }
    (r, g, n, q)
}

fn main() {
    let mut c = Checks::default();
    let reports: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = reports.clone();
    cudrv::set_reporter(move |r| sink.lock().unwrap().push(r.to_string()));
    let take = || std::mem::take(&mut *reports.lock().unwrap());

    let d = match cudrv::driver() {
        Ok(d) => d,
        Err(e) => {
            println!("[FAILED] no driver: {e}");
            std::process::exit(1);
        }
    };
    let v = d.version_code();
    println!("driver: {} -> {:?}", d.source(), d.file());
    println!(
        "version: {} ({v}), bootstrap v2: {}, resolved in {:?}",
        d.version(),
        d.uses_get_proc_address_v2(),
        d.resolve_time()
    );
    let (r, g, n, q) = state_counts(d);
    println!("variants: {r} resolved, {g} gated, {n} not in driver, {q} not requested (of {})", VARIANTS.len());

    // Every variant at or below the driver's version is resolved; every newer one is gated.
    let mut missing = Vec::new();
    let mut wrongly_gated = Vec::new();
    for (i, spec) in VARIANTS.iter().enumerate() {
        let info = d.info(cudrv::table::Entry::Variant(i)).unwrap();
        match info.availability {
            Availability::NotInDriver(m) => missing.push(format!("{} ({m:?})", spec.ident)),
            Availability::NeedsDriver { version } if version <= v || version != spec.version => {
                wrongly_gated.push(spec.ident)
            }
            Availability::Resolved { .. } if spec.version > v => wrongly_gated.push(spec.ident),
            _ => {}
        }
    }
    c.check(missing.is_empty(), format!("every variant up to {} resolves (missing: {missing:?})", d.version()));
    c.check(wrongly_gated.is_empty(), format!("exactly the newer variants are gated (wrong: {wrongly_gated:?})"));
    let newer: Vec<_> = VARIANTS.iter().filter(|s| s.version > v && !s.per_thread).collect();
    for s in &newer {
        let a = d.entry(s.ident).unwrap().availability;
        println!("  {:<44} {a}", s.ident);
    }
    c.check(
        !newer.is_empty()
            && newer
                .iter()
                .all(|s| d.entry(s.ident).unwrap().availability == Availability::NeedsDriver { version: s.version }),
        format!("{} variants newer than the driver show which version they need", newer.len()),
    );

    // Unversioned names bind wherever a candidate exists at or below the driver's version.
    let mut unbound = Vec::new();
    for n in NAMES.iter() {
        let has_old = n.candidates.iter().any(|&i| VARIANTS[i].version <= v);
        let info = d.entry(n.name).unwrap();
        if has_old && !info.availability.is_resolved() {
            unbound.push(n.name);
        }
    }
    c.check(
        unbound.is_empty(),
        format!("every name with a variant up to {} is bound (unbound: {unbound:?})", d.version()),
    );
    for name in ["cuLaunchHostFunc", "cuGraphAddNode", "cuMemAlloc", "cuCtxCreate", "cuMemcpyAsync"] {
        println!("  {name:<20} -> {:?}", d.entry(name).unwrap().kind);
    }
    c.check(
        d.entry("cuLaunchHostFunc").unwrap().kind == EntryKind::Name { bound: Some("cuLaunchHostFunc_v10000") },
        "cuLaunchHostFunc binds its 3-argument variant",
    );

    // Calls through p.
    let p = d.p();
    unsafe {
        c.check(p.cuInit(0) == CUresult::CUDA_SUCCESS, "p::cuInit(0)");
        let mut ver = 0;
        c.check(
            p.cuDriverGetVersion(&mut ver) == CUresult::CUDA_SUCCESS && ver as u32 == d.driver_version_code(),
            format!("p::cuDriverGetVersion = {ver}"),
        );
        let mut count = 0;
        c.check(
            p.cuDeviceGetCount(&mut count) == CUresult::CUDA_SUCCESS && count >= 1,
            format!("p::cuDeviceGetCount = {count}"),
        );
        let mut name = [0 as c_char; 128];
        let st = p.cuDeviceGetName(name.as_mut_ptr(), 128, 0);
        let mut mem = 0usize;
        let st2 = p.cuDeviceTotalMem(&mut mem, 0);
        c.check(
            st == CUresult::CUDA_SUCCESS && st2 == CUresult::CUDA_SUCCESS,
            format!(
                "device 0: {} with {:.1} GiB",
                CStr::from_ptr(name.as_ptr()).to_string_lossy(),
                mem as f64 / (1u64 << 30) as f64
            ),
        );
        let mut ctx: CUcontext = std::ptr::null_mut();
        c.check(p.cuDevicePrimaryCtxRetain(&mut ctx, 0) == CUresult::CUDA_SUCCESS, "p::cuDevicePrimaryCtxRetain");
        c.check(p.cuCtxSetCurrent(ctx) == CUresult::CUDA_SUCCESS, "p::cuCtxSetCurrent(primary)");
        let mut cur: CUcontext = std::ptr::null_mut();
        c.check(p.cuCtxGetCurrent(&mut cur) == CUresult::CUDA_SUCCESS && cur == ctx, "p::cuCtxGetCurrent returns it");
        let mut dptr: CUdeviceptr = 0;
        c.check(
            p.cuMemAlloc(&mut dptr, 1 << 20) == CUresult::CUDA_SUCCESS && dptr != 0,
            format!("p::cuMemAlloc(1 MiB) = {dptr:#x}"),
        );
        let mut stream: CUstream = std::ptr::null_mut();
        c.check(p.cuStreamCreate(&mut stream, 0) == CUresult::CUDA_SUCCESS, "p::cuStreamCreate");
        c.check(
            p.cuMemsetD8Async(dptr, 7, 1 << 20, stream) == CUresult::CUDA_SUCCESS,
            "p::cuMemsetD8Async (unversioned, legacy stream variant)",
        );
        let mut host = vec![0u8; 16];
        c.check(
            p.cuMemcpyDtoHAsync(host.as_mut_ptr().cast(), dptr, 16, stream) == CUresult::CUDA_SUCCESS,
            "p::cuMemcpyDtoHAsync",
        );
        c.check(
            p.cuStreamSynchronize(stream) == CUresult::CUDA_SUCCESS && host.iter().all(|&b| b == 7),
            "memset then copy back gives 7s",
        );
        c.check(p.cuStreamDestroy(stream) == CUresult::CUDA_SUCCESS, "p::cuStreamDestroy");
        c.check(p.cuMemFree(dptr) == CUresult::CUDA_SUCCESS, "p::cuMemFree");
        c.check(take().is_empty(), "p reported nothing");

        // Calls through pw that fail: one report each, naming the call and the handle.
        let pw = d.pw();
        let st = pw.cuMemFree(0x7f3a00000000);
        let got = take();
        println!("  pw::cuMemFree(0x7f3a00000000) -> {} report(s): {got:?}", got.len());
        c.check(
            st != CUresult::CUDA_SUCCESS && got.len() == 1 && got[0].starts_with("cuMemFree(0x7f3a00000000) failed: "),
            "pw::cuMemFree of a bad pointer: one report naming the pointer",
        );
        let mut dev = 0;
        let st = pw.cuDeviceGet(&mut dev, 5000);
        let got = take();
        c.check(
            st == CUresult::CUDA_ERROR_INVALID_DEVICE && got.len() == 1,
            format!("pw::cuDeviceGet(_, 5000): {got:?}"),
        );
        let mut z: CUdeviceptr = 0;
        let st = pw.cuMemAlloc(&mut z, 0);
        let got = take();
        c.check(st == CUresult::CUDA_ERROR_INVALID_VALUE && got.len() == 1, format!("pw::cuMemAlloc(_, 0): {got:?}"));
        let st = pw.cuLaunchHostFunc_v13010(std::ptr::null_mut(), None, std::ptr::null_mut(), 0);
        let got = take();
        c.check(
            st == CUresult::CUDA_ERROR_NOT_FOUND && got.len() == 1 && got[0].contains("needs driver 13.1"),
            format!("pw::cuLaunchHostFunc_v13010 on a 13.0 driver: {got:?}"),
        );
        let e = d.error(cudrv::call::cuMemAlloc, CUresult(12345));
        c.check(e.name() == "unknown CUresult 12345", format!("unknown code: {e}"));
        let e = d.error(cudrv::call::cuMemAlloc, CUresult::CUDA_ERROR_ILLEGAL_ADDRESS);
        c.check(e.description() != "the driver has no description for this code", format!("driver text: {e}"));
        c.check(
            p.cuCtxSetCurrent(std::ptr::null_mut()) == CUresult::CUDA_SUCCESS
                && p.cuDevicePrimaryCtxRelease(0) == CUresult::CUDA_SUCCESS,
            "released the primary context",
        );
    }

    // The cap and the per-thread default stream option on the real driver.
    let capped = unsafe { Driver::load(LoadOptions::default().with_max_version("12.4").unwrap()) }.unwrap();
    let (cr, cg, _, _) = state_counts(&capped);
    let expect = VARIANTS.iter().filter(|s| !s.per_thread && s.version <= 12040).count();
    c.check(cr == expect, format!("capped at 12.4: {cr} resolved (header says {expect}), {cg} gated"));
    let ptds = unsafe { Driver::load(LoadOptions::default().with_per_thread_default_stream(true)) }.unwrap();
    let (pr, pg, pn, pq) = state_counts(&ptds);
    println!("per-thread: {pr} resolved, {pg} gated, {pn} missing, {pq} not requested");
    c.check(
        ptds.entry("cuMemcpyAsync").unwrap().kind == EntryKind::Name { bound: Some("cuMemcpyAsync_v7000_ptsz") }
            && pn == 0,
        "per-thread option binds cuMemcpyAsync_v7000_ptsz",
    );

    println!("{} passed, {} failed", c.passed, c.failed);
    if c.failed > 0 {
        std::process::exit(1);
    }
}
