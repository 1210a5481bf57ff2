//! Per-call cost of `p`, `pw` and `pc` against the raw function pointer, and whole-table
//! resolution against a plain `cuGetProcAddress` loop. A benchmark, not a test.
//!
//! `cargo bench --bench call_overhead -- [--driver stand-in|system] [--calls N] [--rounds R]`
//!
//! `system` loads the real driver (`CUDRV_LIBCUDA` or `libcuda.so.1`); `stand-in` (the
//! default) uses the in-process stand-in. The figures in docs/performance.md come from here.

use std::ffi::{c_int, c_void};
use std::hint::black_box;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::time::{Duration, Instant};

use cudrv::sys::{CUcontext, CUresult};
use cudrv::table::VARIANTS;
use cudrv::{Driver, GetProcAddress, LoadOptions};

struct Args {
    system: bool,
    calls: u32,
    rounds: usize,
}

fn args() -> Args {
    let mut a = Args { system: false, calls: 10_000_000, rounds: 11 };
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        match x.as_str() {
            "--driver" => a.system = it.next().as_deref() == Some("system"),
            "--calls" => a.calls = it.next().and_then(|v| v.parse().ok()).unwrap_or(a.calls),
            "--rounds" => a.rounds = it.next().and_then(|v| v.parse().ok()).unwrap_or(a.rounds),
            _ => {} // cargo bench passes --bench
        }
    }
    a
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Nanoseconds per call of `f` over `calls` calls (monomorphised: no dynamic dispatch).
fn per_call<F: FnMut()>(calls: u32, f: &mut F) -> f64 {
    let t = Instant::now();
    for _ in 0..calls {
        f();
    }
    t.elapsed().as_nanos() as f64 / f64::from(calls)
}

/// Runs each case in turn, `rounds` times, and prints each one's median against the first.
macro_rules! compare {
    ($title:expr, $rounds:expr, $calls:expr, $(($name:expr, $f:expr)),+ $(,)?) => {{
        let names = [$($name),+];
        let mut samples: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
        for _ in 0..$rounds {
            let mut k = 0;
            $(
                let mut f = $f;
                samples[k].push(per_call($calls, &mut f));
                k += 1;
            )+
            let _ = k;
        }
        let raw = median(samples[0].clone());
        println!("{}", $title);
        for (i, name) in names.iter().enumerate() {
            let m = median(samples[i].clone());
            println!("  {name:<28} {m:7.2} ns/call  ({:+.1}% vs raw)", (m / raw - 1.0) * 100.0);
        }
    }};
}

/// The real driver's `cuGetProcAddress_v2`, straight from the library.
fn bootstrap_v2(d: &Driver) -> GetProcAddress {
    let lib = unsafe { libloading::Library::new(d.path().expect("a library")) }.expect("reopen the driver");
    let f = unsafe { lib.get::<cudrv::GetProcAddressV2>(b"cuGetProcAddress_v2\0") }.expect("cuGetProcAddress_v2");
    let f = *f;
    std::mem::forget(lib);
    GetProcAddress::V2(f)
}

/// Resolves one variant the way a hand-written loop would: one call, pointer kept if set.
fn plain_request(gpa: GetProcAddress, i: usize, version: u32) -> *mut c_void {
    let v = &VARIANTS[i];
    let mut p = std::ptr::null_mut();
    if v.per_thread || v.version > version {
        return p;
    }
    let mut q = cudrv::ProcAddressQuery(0);
    unsafe {
        match gpa {
            GetProcAddress::V2(f) => f(v.symbol.as_ptr(), &mut p, v.version as c_int, 0, &mut q),
            GetProcAddress::V1(f) => f(v.symbol.as_ptr(), &mut p, v.version as c_int, 0),
            _ => cudrv::CUresult::CUDA_ERROR_NOT_SUPPORTED,
        };
    }
    p
}

fn main() {
    let a = args();
    let standin = (!a.system).then(|| cudrv_standin::StandIn::new(13000).expect("stand-in 13.0"));
    let load = |opts: LoadOptions| match standin {
        Some(s) => s.load(opts),
        None => {
            let opts = match LoadOptions::from_env().ok().and_then(|o| o.path) {
                Some(path) => opts.with_path(path),
                None => opts,
            };
            // SAFETY: the system's driver, or the one CUDRV_LIBCUDA names.
            unsafe { Driver::load(opts) }
        }
    };
    let driver = load(LoadOptions::default()).expect("driver loads");
    let driver: &'static Driver = match cudrv::set_driver(driver) {
        Ok(d) => d,
        Err(_) => panic!("the global driver was already set"),
    };
    println!("driver: {} (CUDA {})", driver.source(), driver.version());
    unsafe {
        assert_eq!(driver.p().cuInit(0), CUresult::CUDA_SUCCESS);
        let mut dev = 0;
        let mut ctx: CUcontext = std::ptr::null_mut();
        assert_eq!(driver.p().cuDeviceGet(&mut dev, 0), CUresult::CUDA_SUCCESS);
        assert_eq!(driver.p().cuDevicePrimaryCtxRetain(&mut ctx, dev), CUresult::CUDA_SUCCESS);
        assert_eq!(driver.p().cuCtxSetCurrent(ctx), CUresult::CUDA_SUCCESS);
    }

    // Raw pointers for the same variants, from cuGetProcAddress directly.
    let gpa = match standin {
        Some(s) => s.get_proc_address(),
        None => bootstrap_v2(driver),
    };
    let idx = |name| cudrv::table::variant_index(name).expect("variant");
    let raw_version: unsafe extern "C" fn(*mut c_int) -> CUresult =
        unsafe { std::mem::transmute(plain_request(gpa, idx("cuDriverGetVersion_v2020"), 13000)) };
    let raw_current: unsafe extern "C" fn(*mut CUcontext) -> CUresult =
        unsafe { std::mem::transmute(plain_request(gpa, idx("cuCtxGetCurrent_v4000"), 13000)) };
    let raw_version = black_box(raw_version);
    let raw_current = black_box(raw_current);
    // The same pointers kept in memory and loaded at each call, as a C program linked to
    // libcuda calls through its GOT entry.
    static GOT_VERSION: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
    static GOT_CURRENT: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
    GOT_VERSION.store(raw_version as *mut c_void, Ordering::Relaxed);
    GOT_CURRENT.store(raw_current as *mut c_void, Ordering::Relaxed);
    let got_version = || unsafe {
        std::mem::transmute::<*mut c_void, unsafe extern "C" fn(*mut c_int) -> CUresult>(
            GOT_VERSION.load(Ordering::Relaxed),
        )
    };
    let got_current = || unsafe {
        std::mem::transmute::<*mut c_void, unsafe extern "C" fn(*mut CUcontext) -> CUresult>(
            GOT_CURRENT.load(Ordering::Relaxed),
        )
    };

    let d = black_box(driver);
    compare!(
        "cuDriverGetVersion",
        a.rounds,
        a.calls,
        ("raw pointer", || unsafe {
            let mut x = Default::default();
            black_box(raw_version(black_box(&mut x)));
        }),
        ("pointer loaded per call", || unsafe {
            let mut x = Default::default();
            black_box(got_version()(black_box(&mut x)));
        }),
        ("driver.p()", || unsafe {
            let mut x = Default::default();
            black_box(d.p().cuDriverGetVersion(black_box(&mut x)));
        }),
        ("cudrv::p (process-wide)", || unsafe {
            let mut x = Default::default();
            black_box(cudrv::p::cuDriverGetVersion(black_box(&mut x)));
        }),
        ("cudrv::pw (process-wide)", || unsafe {
            let mut x = Default::default();
            black_box(cudrv::pw::cuDriverGetVersion(black_box(&mut x)));
        }),
        ("cudrv::pc (process-wide)", || unsafe {
            let mut x = Default::default();
            let _ = black_box(cudrv::pc::cuDriverGetVersion(black_box(&mut x)));
        }),
    );
    compare!(
        "cuCtxGetCurrent",
        a.rounds,
        a.calls,
        ("raw pointer", || unsafe {
            let mut x = Default::default();
            black_box(raw_current(black_box(&mut x)));
        }),
        ("pointer loaded per call", || unsafe {
            let mut x = Default::default();
            black_box(got_current()(black_box(&mut x)));
        }),
        ("driver.p()", || unsafe {
            let mut x = Default::default();
            black_box(d.p().cuCtxGetCurrent(black_box(&mut x)));
        }),
        ("cudrv::p (process-wide)", || unsafe {
            let mut x = Default::default();
            black_box(cudrv::p::cuCtxGetCurrent(black_box(&mut x)));
        }),
        ("cudrv::pw (process-wide)", || unsafe {
            let mut x = Default::default();
            black_box(cudrv::pw::cuCtxGetCurrent(black_box(&mut x)));
        }),
        ("cudrv::pc (process-wide)", || unsafe {
            let mut x = Default::default();
            let _ = black_box(cudrv::pc::cuCtxGetCurrent(black_box(&mut x)));
        }),
    );

    // Whole-table resolution: Driver load (version query, every variant, name binding)
    // against a plain loop of cuGetProcAddress over the same requests.
    let version = driver.version_code();
    let mut plain = Vec::new();
    let mut full = Vec::new();
    for _ in 0..a.rounds.max(5) * 3 {
        let t = Instant::now();
        let mut found = 0usize;
        for i in 0..VARIANTS.len() {
            found += usize::from(!plain_request(gpa, i, version).is_null());
        }
        plain.push(t.elapsed());
        black_box(found);
        let d = load(LoadOptions::default()).expect("reload");
        full.push(d.resolve_time());
    }
    let med = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let (p, f) = (med(&mut plain), med(&mut full));
    println!("whole-table resolution ({} variants)", VARIANTS.len());
    println!("  plain cuGetProcAddress loop   {:8.1} us", p.as_secs_f64() * 1e6);
    println!(
        "  cudrv resolution              {:8.1} us  ({:.2}x the plain loop)",
        f.as_secs_f64() * 1e6,
        f.as_secs_f64() / p.as_secs_f64()
    );
}
