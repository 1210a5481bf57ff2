//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::thread::ThreadId;

use cudrv::table::VARIANTS;
use cudrv::{Availability, Driver, EntryKind};

/// Counts of variant states in a loaded driver.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub resolved: usize,
    pub gated: usize,
    pub not_in_driver: usize,
    pub not_requested: usize,
}

pub fn counts(d: &Driver) -> Counts {
    let mut c = Counts::default();
    for e in d.entries().filter(|e| matches!(e.kind, EntryKind::Variant { .. })) {
        match e.availability {
            Availability::Resolved { .. } => c.resolved += 1,
            Availability::NeedsDriver { .. } => c.gated += 1,
            Availability::NotInDriver(_) => c.not_in_driver += 1,
            Availability::NotRequested => c.not_requested += 1,
            Availability::NoDriver => panic!("variant without a state"),
        }
    }
    c
}

/// What the header table says a driver of `version` has, with or without the per-thread
/// default stream variants.
pub fn expected(version: u32, per_thread: bool) -> Counts {
    let mut c = Counts::default();
    for v in VARIANTS.iter() {
        if v.per_thread && !per_thread {
            c.not_requested += 1;
        } else if v.version <= version {
            c.resolved += 1;
        } else {
            c.gated += 1;
        }
    }
    c
}

/// The stand-in's cdylib, copied to a fresh folder as `libcuda.so.1`.
pub fn standin_libcuda(tag: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    let candidates = [
        std::env::var_os("CUDRV_STANDIN_LIB").map(PathBuf::from),
        Some(deps.join("libcudrv_standin.so")),
        deps.parent().map(|p| p.join("libcudrv_standin.so")),
    ];
    let built =
        candidates.into_iter().flatten().find(|p| p.exists()).expect("the stand-in cdylib is built with the tests");
    let dir = std::env::temp_dir().join(format!("cudrv-test-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let target = dir.join("libcuda.so.1");
    std::fs::copy(&built, &target).unwrap();
    target
}

/// A reporter that keeps every report, with the thread it came from, so that parallel
/// tests each read only their own.
pub fn capture_reports() -> &'static Mutex<Vec<(ThreadId, String)>> {
    static REPORTS: OnceLock<&'static Mutex<Vec<(ThreadId, String)>>> = OnceLock::new();
    REPORTS.get_or_init(|| {
        let store: &'static Mutex<Vec<(ThreadId, String)>> = Box::leak(Box::new(Mutex::new(Vec::new())));
        cudrv::set_reporter(move |r| store.lock().unwrap().push((std::thread::current().id(), r.to_string())));
        store
    })
}

/// Reports made on this thread so far, taken out of the store.
pub fn my_reports() -> Vec<String> {
    let me = std::thread::current().id();
    let mut all = capture_reports().lock().unwrap();
    let (mine, rest): (Vec<_>, Vec<_>) = all.drain(..).partition(|(t, _)| *t == me);
    *all = rest;
    mine.into_iter().map(|(_, m)| m).collect()
}
