//! Version gating against the in-process stand-in driver, for every emulated version.

mod common;

use common::{counts, expected, Counts};
use cudrv::sys::CUresult;
use cudrv::{Availability, Driver, EntryKind, LoadOptions};
use cudrv_standin::StandIn;

const VERSIONS: [u32; 8] = [11030, 11080, 12000, 12040, 12090, 13000, 13010, 13050];

fn load(version: u32, options: LoadOptions) -> cudrv::Driver {
    StandIn::new(version).expect("version in range").load(options).expect("stand-in loads")
}

#[test]
fn resolved_and_gated_counts_follow_the_header_table() {
    for v in VERSIONS {
        let d = load(v, LoadOptions::default());
        assert_eq!(d.version_code(), v);
        assert_eq!(counts(&d), expected(v, false), "driver {v}");
        assert_eq!(d.uses_get_proc_address_v2(), v >= 12000, "bootstrap for {v}");
    }
}

#[test]
fn counts_match_the_headers_seen_in_driver_facts() {
    // driver-facts.md "Headers": the 11.8 header has 508 variants (81 per-thread, which
    // are not requested without the option), the 13.0 header 634 (97 per-thread), the
    // 13.5 header 685 with 51 newer than 13.0.
    let c = counts(&load(11080, LoadOptions::default()));
    assert_eq!(c.resolved, 508 - 81);
    let c = counts(&load(13000, LoadOptions::default()));
    assert_eq!(c.resolved, 634 - 97);
    assert_eq!(c.gated, (685 - 105) - (634 - 97));
    let c = counts(&load(13000, LoadOptions::default().with_per_thread_default_stream(true)));
    assert_eq!(c.resolved, 634, "driver-facts: all 634 variants of the 13.0 header resolve on 13.0");
    assert_eq!(c.gated, 51);
    let c = counts(&load(13050, LoadOptions::default().with_per_thread_default_stream(true)));
    assert_eq!(c, Counts { resolved: 685, gated: 0, not_in_driver: 0, not_requested: 0 });
}

#[test]
fn a_gated_call_returns_not_found_and_names_the_version_it_needs() {
    let d = load(13000, LoadOptions::default());
    let info = d.entry("cuLaunchHostFunc_v13010").unwrap();
    assert_eq!(info.availability, Availability::NeedsDriver { version: 13010 });
    assert_eq!(info.availability.to_string(), "needs driver 13.1");
    // SAFETY: the entry is gated: nothing is called, the arguments are never used.
    let status = unsafe { d.p().cuLaunchHostFunc_v13010(std::ptr::null_mut(), None, std::ptr::null_mut(), 0) };
    assert_eq!(status, CUresult::CUDA_ERROR_NOT_FOUND);
    // The unversioned name keeps cuda.h's 3-argument prototype and binds the 13.0-era variant.
    let name = d.entry("cuLaunchHostFunc").unwrap();
    assert_eq!(name.kind, EntryKind::Name { bound: Some("cuLaunchHostFunc_v10000") });
    assert!(name.availability.is_resolved());
}

#[test]
fn a_gated_error_leads_with_the_reason_and_keeps_its_code() {
    let d: &'static Driver = Box::leak(Box::new(load(13000, LoadOptions::default())));
    // SAFETY: the entry is gated: nothing is called.
    let e = unsafe { d.pc().cuLaunchHostFunc_v13010(std::ptr::null_mut(), None, std::ptr::null_mut(), 0) }.unwrap_err();
    assert_eq!(e.code(), CUresult::CUDA_ERROR_NOT_FOUND);
    assert_eq!(e.unresolved(), Some("needs driver 13.1; this driver is 13.0"));
    assert_eq!(
        e.to_string(),
        "cuLaunchHostFunc_v13010 needs driver 13.1; this driver is 13.0 (not called: CUDA_ERROR_NOT_FOUND)"
    );
    // Capped: both versions are named, and the setting that caps.
    let capped = load(13000, LoadOptions::default().with_max_version("12.4").unwrap());
    let capped: &'static Driver = Box::leak(Box::new(capped));
    // SAFETY: as above.
    let e = unsafe { capped.pc().cuLaunchHostFunc_v13010(std::ptr::null_mut(), None, std::ptr::null_mut(), 0) }
        .unwrap_err();
    assert_eq!(e.unresolved(), Some("needs driver 13.1; this driver is 13.0, capped at 12.4"));
    // A failure the driver returned has no such reason.
    let e = d.error(cudrv::call::cuMemAlloc, CUresult::CUDA_ERROR_OUT_OF_MEMORY);
    assert_eq!(e.unresolved(), None);
}

#[test]
fn unversioned_names_bind_what_cuda_h_binds() {
    // cuGraphAddNode: cuda.h maps it to cuGraphAddNode_v2, the v12030 ABI (with edge
    // data). v13040 (cuGraphAddNode_v3) has the same prototype but is newer, so only its
    // versioned name reaches it; v12020 has no edge data.
    let bound = |v: u32, name: &str| match load(v, LoadOptions::default()).entry(name).unwrap().kind {
        EntryKind::Name { bound } => bound,
        other => panic!("{other:?}"),
    };
    assert_eq!(bound(12020, "cuGraphAddNode"), None);
    assert_eq!(bound(12040, "cuGraphAddNode"), Some("cuGraphAddNode_v12030"));
    assert_eq!(bound(13050, "cuGraphAddNode"), Some("cuGraphAddNode_v12030"));
    assert_eq!(bound(13050, "cuGraphNodeSetParams"), Some("cuGraphNodeSetParams_v12020"));
    // cuda.h maps cuGraphInstantiate to cuGraphInstantiateWithFlags (3 arguments).
    assert_eq!(bound(13050, "cuGraphInstantiate"), Some("cuGraphInstantiateWithFlags_v11040"));
    assert_eq!(bound(11030, "cuGraphInstantiate"), None);
    assert_eq!(bound(11030, "cuDeviceGetUuid"), Some("cuDeviceGetUuid_v9020"));
    assert_eq!(bound(11080, "cuDeviceGetUuid"), Some("cuDeviceGetUuid_v11040"));
    // A name none of whose variants the driver has says which version it needs.
    let d = load(11030, LoadOptions::default());
    let info = d.entry("cuGraphAddNode").unwrap();
    assert_eq!(info.availability, Availability::NeedsDriver { version: 12030 });
    assert_eq!(info.kind, EntryKind::Name { bound: None });
    assert!(d.entry("cuNoSuchFunction").is_none());
}

#[test]
fn the_version_cap_gates_like_an_older_driver() {
    let capped = load(13050, LoadOptions::default().with_max_version("12.4").unwrap());
    assert_eq!(capped.version(), semver::Version::new(12, 4, 0));
    assert_eq!(capped.driver_version_code(), 13050);
    assert_eq!(counts(&capped), expected(12040, false));
    assert_eq!(counts(&capped), counts(&load(12040, LoadOptions::default())));
    assert_eq!(
        capped.entry("cuMemcpyBatchAsync_v12080").unwrap().availability,
        Availability::NeedsDriver { version: 12080 }
    );
    assert!(capped.require(">=12.4").is_ok());
    assert_eq!(
        capped.require(">=12.8").unwrap_err().to_string(),
        "this program needs CUDA driver >=12.8; the driver is 12.4"
    );
    // A cap above the driver changes nothing.
    let above = load(12000, LoadOptions::default().with_max_version("13.5").unwrap());
    assert_eq!(above.version_code(), 12000);
    assert!(LoadOptions::default().with_max_version("twelve").is_err());
}

#[test]
fn per_thread_default_stream_binds_the_ptds_variants() {
    let legacy = load(13000, LoadOptions::default());
    let ptds = load(13000, LoadOptions::default().with_per_thread_default_stream(true));
    assert_eq!(legacy.entry("cuMemcpyAsync_v7000_ptsz").unwrap().availability, Availability::NotRequested);
    assert_eq!(ptds.entry("cuMemcpyAsync_v7000_ptsz").unwrap().availability, Availability::Resolved { version: 7000 });
    assert_eq!(legacy.entry("cuMemcpyAsync").unwrap().kind, EntryKind::Name { bound: Some("cuMemcpyAsync_v4000") });
    assert_eq!(ptds.entry("cuMemcpyAsync").unwrap().kind, EntryKind::Name { bound: Some("cuMemcpyAsync_v7000_ptsz") });
    // Names without per-thread variants are bound as before.
    assert_eq!(ptds.entry("cuMemAlloc").unwrap().kind, EntryKind::Name { bound: Some("cuMemAlloc_v3020") });
    assert_eq!(counts(&ptds), expected(13000, true));
}

#[test]
fn calls_reach_the_driver_through_p() {
    let d = load(12040, LoadOptions::default());
    let mut version = 0;
    // SAFETY: valid out-pointers throughout.
    unsafe {
        assert_eq!(d.p().cuDriverGetVersion(&mut version), CUresult::CUDA_SUCCESS);
        assert_eq!(version, 12040);
        assert_eq!(d.p().cuInit(0), CUresult::CUDA_SUCCESS);
        let mut count = 0;
        assert_eq!(d.p().cuDeviceGetCount(&mut count), CUresult::CUDA_SUCCESS);
        assert_eq!(count, 1);
        let mut bytes = 0usize;
        assert_eq!(d.p().cuDeviceTotalMem(&mut bytes, 0), CUresult::CUDA_SUCCESS);
        assert_eq!(bytes, cudrv_standin::DEVICE_TOTAL_MEM);
    }
}

#[test]
fn too_old_drivers_are_refused() {
    let err = StandIn::new(11020).unwrap().load(LoadOptions::default()).err().unwrap();
    assert_eq!(err, cudrv::LoadError::TooOld { path: "in-process driver".into(), found: "11.2".into() });
    assert_eq!(err.to_string(), "in-process driver: CUDA driver 11.2 is older than 11.3, the oldest cudrv supports");
}
