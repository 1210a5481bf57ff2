//! The sanitizer's corpus (docs/sanitizer.md): programs with a seeded stream-order bug
//! must be reported, programs ordered by CUDA's rules must not.
//!
//! The C programs (`tests/sanitizer/corpus.c`, one case per argument) are built with `cc`
//! against the cdylib as `libcuda.so` and run under `CUDRV_STANDIN_SANITIZE=races,init,shared`
//! (stream-order races, uninitialised reads, and inside kernels shared-memory races and
//! races between blocks): a report is a text line on stderr, a JSON line in `CUDRV_STANDIN_SANITIZE_LOG`, a
//! summary line and exit status 66. The Rust programs run in-process over cudrv's raw
//! layer on a world of their own (`StandIn::sanitize`).

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

mod common;

use common::cdylib;

const C_CORPUS: &str = include_str!("sanitizer/corpus.c");

/// Each C case and its verdict: the kind of every report, or `clean`.
const C_CASES: &[(&str, &str)] = &[
    ("kernel_then_copy_unordered", "race"),
    ("copy_then_kernel_unordered", "race"),
    ("memsets_unordered", "race"),
    ("event_recorded_too_early", "race"),
    ("nonblocking_then_sync_copy", "race"),
    ("free_async_while_used", "race"),
    ("pinned_written_then_read_unordered", "race"),
    ("graph_then_kernel_unordered", "race"),
    ("graph_nodes_unordered", "race"),
    ("graph_nodes_ordered", "clean"),
    ("kernel_reads_unwritten", "uninit"),
    ("copy_reads_half_unwritten", "uninit"),
    ("written_before_read", "clean"),
    ("host_reads_pinned_without_synchronising", "clean"),
    ("same_stream", "clean"),
    ("event_wait", "clean"),
    ("stream_synchronize", "clean"),
    ("stream_query", "clean"),
    ("event_synchronize", "clean"),
    ("event_query", "clean"),
    ("context_synchronize", "clean"),
    ("legacy_stream_implicit", "clean"),
    ("context_wait_event", "clean"),
    ("host_function_then_event", "clean"),
    ("free_async_ordered", "clean"),
    ("reads_only", "clean"),
    ("graph_then_event", "clean"),
    ("shared_without_barrier", "shared"),
    ("shared_with_barrier", "clean"),
    ("blocks_store_one_word", "block_race"),
    ("blocks_add_to_one_word", "clean"),
];

/// The corpus built once for the binary: its directory (kept) and executable.
fn corpus() -> &'static (tempfile::TempDir, PathBuf) {
    static BUILT: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("lib");
        std::fs::create_dir_all(&lib).unwrap();
        std::fs::copy(cdylib(), lib.join("libcuda.so")).unwrap();
        std::fs::copy(cdylib(), lib.join("libcuda.so.1")).unwrap();
        let source = dir.path().join("corpus.c");
        std::fs::write(&source, C_CORPUS).unwrap();
        let exe = dir.path().join("corpus");
        let out = Command::new("cc")
            .args(["-std=c99", "-Wall", "-Werror", "-o"])
            .arg(&exe)
            .arg(&source)
            .arg(format!("-L{}", lib.display()))
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .arg("-lcuda")
            .output()
            .unwrap_or_else(|e| panic!("these tests build a C program with `cc` (install gcc or clang): {e}"));
        assert!(out.status.success(), "cc failed: {}", String::from_utf8_lossy(&out.stderr));
        (dir, exe)
    })
}

/// Runs case `name` with `env` (the sanitizer's variables unset unless given); the output
/// and the log's lines.
fn run_case(name: &str, env: &[(&str, &str)]) -> (Output, Vec<String>) {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let (dir, exe) = corpus();
    let log = dir.path().join(format!("{name}-{}.jsonl", RUNS.fetch_add(1, Ordering::Relaxed)));
    let _ = std::fs::remove_file(&log);
    let mut cmd = Command::new(exe);
    cmd.arg(name)
        .env_remove("CUDRV_STANDIN_VERSION")
        .env_remove("CUDRV_STANDIN_SANITIZE")
        .env_remove("CUDRV_STANDIN_SANITIZE_EXITCODE")
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .env("CUDRV_STANDIN_SANITIZE_LOG", &log);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let lines = std::fs::read_to_string(&log).map(|s| s.lines().map(str::to_owned).collect()).unwrap_or_default();
    (out, lines)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn every_seeded_bug_of_the_c_corpus_is_reported_and_no_correct_program_is() {
    let mut wrong = Vec::new();
    for &(name, verdict) in C_CASES {
        let (out, log) = run_case(name, &[("CUDRV_STANDIN_SANITIZE", "races,init,shared")]);
        let err = stderr(&out);
        let ran = String::from_utf8_lossy(&out.stdout).contains(&format!("corpus: {name} ran"));
        let ok = if verdict == "clean" {
            ran && out.status.success() && !err.contains("sanitizer") && log.is_empty()
        } else {
            let text = match verdict {
                "race" => "race: ",
                "shared" => "shared-memory race: ",
                "block_race" => "race between blocks: ",
                _ => "uninitialised read: ",
            };
            ran && out.status.code() == Some(66)
                && err.contains(&format!("cudrv-standin sanitizer: {text}"))
                && err.contains("report(s); exit status 66")
                && !log.is_empty()
                && log.iter().all(|l| l.starts_with(&format!("{{\"kind\":\"{verdict}\",")) && l.ends_with('}'))
        };
        if !ok {
            wrong.push(format!("{name} ({verdict}): {:?}\n{err}{}", out.status, log.join("\n")));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

/// The adversarial schedule: a program that reads pinned memory on the host while the copy
/// into it is queued sums right on the plain stand-in (the copy was done at the call) and
/// wrong under `schedule=SEED` (the copy waits), as it did on the H200; the seed is named.
#[test]
fn a_program_that_works_by_timing_fails_under_the_adversarial_schedule() {
    let name = "host_reads_pinned_without_synchronising";
    let (out, _) = run_case(name, &[]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("corpus: host sum 1024 of 1024"), "{out:?}");
    // A delay of at least 2 ms: the host has summed long before (three seeds, in case the
    // host thread itself is held up that long once).
    let wrong = (1..=3).any(|seed| {
        let (out, _) = run_case(name, &[("CUDRV_STANDIN_SANITIZE", &format!("schedule={seed}"))]);
        assert!(stderr(&out).contains(&format!("adversarial schedule, seed {seed}")), "{}", stderr(&out));
        assert!(out.status.success(), "{}", stderr(&out));
        !String::from_utf8_lossy(&out.stdout).contains("corpus: host sum 1024 of 1024")
    });
    assert!(wrong);
}

/// Every correct program of the corpus stays clean under the adversarial schedule with
/// races and init checked (`all`), and every seeded bug is still found: reported, or the
/// program fails (a free the schedule does before the kernel that still reads the memory
/// makes the kernel fault, as it would on a GPU).
#[test]
fn the_corpus_gives_the_same_verdicts_under_the_adversarial_schedule() {
    let mut wrong = Vec::new();
    for &(name, verdict) in C_CASES.iter().filter(|(n, _)| !n.starts_with("host_reads")) {
        let (out, log) = run_case(name, &[("CUDRV_STANDIN_SANITIZE", "all,schedule=7")]);
        let kinds_ok = match verdict {
            "clean" => out.status.success() && log.is_empty(),
            kind => {
                let reported =
                    out.status.code() == Some(66) && log.iter().any(|l| l.contains(&format!("\"kind\":\"{kind}\"")));
                reported || out.status.code() == Some(3)
            }
        };
        if !kinds_ok {
            wrong.push(format!("{name} ({verdict}): {:?}\n{}{}", out.status, stderr(&out), log.join("\n")));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

#[test]
fn a_report_names_both_operations_their_streams_the_bytes_and_the_allocation() {
    let (out, log) = run_case("kernel_then_copy_unordered", &[("CUDRV_STANDIN_SANITIZE", "races")]);
    let err = stderr(&out);
    let line = err.lines().find(|l| l.contains("race:")).unwrap();
    assert!(line.contains("kernel `fill` (grid 8x1x1, block 128x1x1) on stream 0x"), "{line}");
    assert!(line.contains(" writes and copy of 4096 bytes from device 0x"), "{line}");
    assert!(line.contains(" reads 4096 bytes in [0x"), "{line}");
    assert!(line.contains("of Device device allocation 0x"), "{line}");
    assert_eq!(log.len(), 1, "{log:?}");
    let json = &log[0];
    for part in ["\"access\":\"write\"", "\"access\":\"read\"", "\"bytes\":4096", "\"op\":\"kernel `fill`"] {
        assert!(json.contains(part), "{part} in {json}");
    }
}

/// Two nodes of one graph that no edge orders: one report naming the launch and both
/// nodes, though the graph is launched twice.
#[test]
fn a_race_inside_a_graph_names_its_nodes_once() {
    let (out, log) = run_case("graph_nodes_unordered", &[("CUDRV_STANDIN_SANITIZE", "races")]);
    let err = stderr(&out);
    assert_eq!(log.len(), 1, "{log:?}");
    let line = err.lines().find(|l| l.contains("race:")).unwrap();
    assert!(line.contains("race: in graph launch of exec 0x"), "{line}");
    assert!(line.contains(", node 0x") && line.contains("(memset of 4096 bytes at 0x"), "{line}");
    assert!(line.ends_with("no path of edges orders the two nodes"), "{line}");
    assert!(log[0].contains("\"graph\":\"graph launch of exec 0x"), "{}", log[0]);
}

/// With `RUST_BACKTRACE=1`, a report shows where the host issued each operation: the C
/// program's own function.
#[test]
fn a_report_shows_where_each_operation_was_issued_when_backtraces_are_asked_for() {
    let env = [("CUDRV_STANDIN_SANITIZE", "races"), ("RUST_BACKTRACE", "1")];
    let (out, _) = run_case("kernel_then_copy_unordered", &env);
    let err = stderr(&out);
    assert!(err.contains("  kernel `fill` (grid 8x1x1, block 128x1x1) issued at:\n"), "{err}");
    assert!(err.contains(" issued at:\n") && err.matches("kernel_then_copy_unordered").count() >= 2, "{err}");
    let (out, _) =
        run_case("kernel_then_copy_unordered", &[("CUDRV_STANDIN_SANITIZE", "races"), ("RUST_BACKTRACE", "0")]);
    assert!(!stderr(&out).contains("issued at"), "{}", stderr(&out));
}

#[test]
fn without_the_variable_nothing_is_checked_and_the_exit_status_can_be_chosen() {
    let (out, log) = run_case("kernel_then_copy_unordered", &[]);
    assert!(out.status.success() && log.is_empty() && !stderr(&out).contains("sanitizer"), "{}", stderr(&out));
    let env = [("CUDRV_STANDIN_SANITIZE", "races"), ("CUDRV_STANDIN_SANITIZE_EXITCODE", "9")];
    let (out, _) = run_case("memsets_unordered", &env);
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    let (out, _) = run_case("same_stream", &[("CUDRV_STANDIN_SANITIZE", "racez")]);
    assert!(out.status.success());
    assert!(stderr(&out).contains("CUDRV_STANDIN_SANITIZE=racez: unknown check `racez`; nothing is checked"));
}

/// The C corpus's `fill(p, n, v)` kernel, for the Rust programs.
const FILL_PTX: &str = concat!(
    ".version 7.0\n.target sm_50\n.address_size 64\n",
    ".visible .entry fill(.param .u64 p, .param .u32 n, .param .u32 v)\n{\n",
    ".reg .pred %p<2>;\n.reg .b32 %r<6>;\n.reg .b64 %rd<4>;\n",
    "ld.param.u64 %rd1, [p];\nld.param.u32 %r1, [n];\nld.param.u32 %r2, [v];\n",
    "mov.u32 %r3, %ctaid.x;\nmov.u32 %r4, %ntid.x;\nmov.u32 %r5, %tid.x;\n",
    "mad.lo.s32 %r3, %r3, %r4, %r5;\nsetp.ge.u32 %p1, %r3, %r1;\n@%p1 bra DONE;\n",
    "mul.wide.u32 %rd2, %r3, 4;\nadd.s64 %rd3, %rd1, %rd2;\n",
    "st.global.u32 [%rd3], %r2;\nDONE:\nret;\n}\n\0",
);

/// A Rust program over cudrv's raw layer: a world of its own with races checked, a
/// context, `fill`, two blocking streams and 1024 values of device memory; `body` gets
/// them (driver, fill, streams, memory); returns the reports.
fn rust_program(
    body: impl FnOnce(&cudrv::Driver, &dyn Fn(cudrv::sys::CUstream), [cudrv::sys::CUstream; 2], u64),
) -> Vec<cudrv_standin::SanitizerReport> {
    const CUDA_SUCCESS: cudrv::sys::CUresult = cudrv::sys::CUresult::CUDA_SUCCESS;
    let s = cudrv_standin::StandIn::isolated(13050).unwrap();
    s.sanitize("races").unwrap();
    let d = s.load(cudrv::LoadOptions::default()).unwrap();
    let p = d.p();
    let (mut ctx, mut module, mut f, mut mem) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut(), 0);
    let mut streams = [std::ptr::null_mut(); 2];
    // SAFETY: valid out-pointers, a NUL-terminated PTX image, a live context.
    unsafe {
        assert_eq!(p.cuInit(0), CUDA_SUCCESS);
        assert_eq!(p.cuCtxCreate(&mut ctx, std::ptr::null_mut(), 0, 0), CUDA_SUCCESS);
        assert_eq!(p.cuModuleLoadData(&mut module, FILL_PTX.as_ptr().cast()), CUDA_SUCCESS);
        assert_eq!(p.cuModuleGetFunction(&mut f, module, c"fill".as_ptr()), CUDA_SUCCESS);
        assert_eq!(p.cuMemAlloc(&mut mem, 4096), CUDA_SUCCESS);
        assert_eq!(p.cuMemsetD32(mem, 0, 1024), CUDA_SUCCESS);
        for s in &mut streams {
            assert_eq!(p.cuStreamCreate(s, 0), CUDA_SUCCESS);
        }
    }
    let fill = |stream| {
        let (mut ptr, mut n, mut v) = (mem, 1024u32, 5u32);
        let mut args = [(&raw mut ptr).cast(), (&raw mut n).cast(), (&raw mut v).cast::<std::ffi::c_void>()];
        // SAFETY: the kernel's three parameters, a live stream.
        let r = unsafe { p.cuLaunchKernel(f, 8, 1, 1, 128, 1, 1, 0, stream, args.as_mut_ptr(), std::ptr::null_mut()) };
        assert_eq!(r, CUDA_SUCCESS);
    };
    body(&d, &fill, streams, mem);
    // SAFETY: no arguments.
    assert_eq!(unsafe { p.cuCtxSynchronize() }, CUDA_SUCCESS);
    s.sanitizer_reports()
}

#[test]
fn a_rust_program_whose_memset_races_a_kernel_is_reported_in_its_world() {
    let reports = rust_program(|d, fill, [a, b], mem| {
        fill(a);
        // SAFETY: a live allocation of 1024 values, a live stream.
        assert_eq!(unsafe { d.p().cuMemsetD32Async(mem + 2048, 0, 512, b) }, cudrv::sys::CUresult::CUDA_SUCCESS);
    });
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert_eq!(reports[0].kind, "race");
    assert!(
        reports[0].text.contains("kernel `fill`") && reports[0].text.contains("writes 2048 bytes"),
        "{}",
        reports[0].text
    );
}

#[test]
fn an_event_orders_what_follows_its_record_and_not_later_work_of_the_recording_stream() {
    let reports = rust_program(|d, fill, [a, b], mem| {
        let mut e = std::ptr::null_mut();
        // SAFETY: a valid out-pointer, live streams and allocation.
        unsafe {
            assert_eq!(d.p().cuEventCreate(&mut e, 0), cudrv::sys::CUresult::CUDA_SUCCESS);
            fill(a);
            assert_eq!(d.p().cuEventRecord(e, a), cudrv::sys::CUresult::CUDA_SUCCESS);
            assert_eq!(d.p().cuStreamWaitEvent(b, e, 0), cudrv::sys::CUresult::CUDA_SUCCESS);
            assert_eq!(d.p().cuMemsetD32Async(mem, 0, 1024, b), cudrv::sys::CUresult::CUDA_SUCCESS);
        }
        fill(a);
    });
    // The second fill on `a` races the memset on `b` (nothing orders it after the memset).
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert!(reports[0].text.contains("memset of 4096 bytes"), "{}", reports[0].text);
}

/// An allocation imported in its own process (`cuMemPoolImportPointer`) is a second address
/// for the same bytes: what one address writes counts as written at the other, and two
/// unordered accesses through different addresses race.
#[test]
fn an_imported_allocation_and_its_exporter_are_the_same_bytes() {
    use cudrv::sys::{
        CUmemAllocationHandleType as H, CUmemAllocationType, CUmemLocationType, CUmemPoolProps, CUmemPoolPtrExportData,
        CUresult,
    };
    const CUDA_SUCCESS: CUresult = CUresult::CUDA_SUCCESS;
    let s = cudrv_standin::StandIn::isolated(13050).unwrap();
    s.sanitize("races,init").unwrap();
    let d = s.load(cudrv::LoadOptions::default()).unwrap();
    let p = d.p();
    let (mut ctx, mut pool, mut imported_pool) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
    let (mut exported, mut imported, mut fd) = (0, 0, 0i32);
    let mut streams = [std::ptr::null_mut(); 2];
    let mut data = CUmemPoolPtrExportData::default();
    let mut props = CUmemPoolProps {
        allocType: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
        handleTypes: H::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
        ..Default::default()
    };
    props.location.type_ = CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    let mut back = [0u8; 256];
    // SAFETY: valid out-pointers and properties; live handles, streams and allocations of
    // 256 bytes; the descriptor the export wrote.
    unsafe {
        assert_eq!(p.cuInit(0), CUDA_SUCCESS);
        assert_eq!(p.cuCtxCreate(&mut ctx, std::ptr::null_mut(), 0, 0), CUDA_SUCCESS);
        for s in &mut streams {
            assert_eq!(p.cuStreamCreate(s, 1), CUDA_SUCCESS);
        }
        let [a, b] = streams;
        assert_eq!(p.cuMemPoolCreate(&mut pool, &props), CUDA_SUCCESS);
        assert_eq!(p.cuMemAllocFromPoolAsync(&mut exported, 256, pool, a), CUDA_SUCCESS);
        assert_eq!(p.cuStreamSynchronize(a), CUDA_SUCCESS);
        // (A driver exports a pointer only from a pool it has exported: docs/driver-facts.md.)
        let handle = (&raw mut fd).cast();
        assert_eq!(p.cuMemPoolExportToShareableHandle(handle, pool, props.handleTypes, 0), CUDA_SUCCESS);
        assert_eq!(p.cuMemPoolExportPointer(&mut data, exported), CUDA_SUCCESS);
        let handle = fd as usize as *mut std::ffi::c_void;
        assert_eq!(
            p.cuMemPoolImportFromShareableHandle(&mut imported_pool, handle, props.handleTypes, 0),
            CUDA_SUCCESS
        );
        assert_eq!(p.cuMemPoolImportPointer(&mut imported, imported_pool, &mut data), CUDA_SUCCESS);
        assert_ne!(imported, exported);
        // Written through the import, read through the exporter, in order: nothing to report.
        assert_eq!(p.cuMemsetD8Async(imported, 7, 256, a), CUDA_SUCCESS);
        assert_eq!(p.cuStreamSynchronize(a), CUDA_SUCCESS);
        assert_eq!(p.cuMemcpyDtoH(back.as_mut_ptr().cast(), exported, 256), CUDA_SUCCESS);
        assert_eq!(back, [7; 256]);
        assert!(s.sanitizer_reports().is_empty(), "{:?}", s.sanitizer_reports());
        // Written through the import on `a`, read through the exporter on `b`, unordered.
        assert_eq!(p.cuMemsetD8Async(imported, 9, 256, a), CUDA_SUCCESS);
        assert_eq!(p.cuMemcpyDtoHAsync(back.as_mut_ptr().cast(), exported, 256, b), CUDA_SUCCESS);
        assert_eq!(p.cuCtxSynchronize(), CUDA_SUCCESS);
    }
    let reports = s.sanitizer_reports();
    assert_eq!(reports.iter().map(|r| r.kind).collect::<Vec<_>>(), ["race"], "{reports:?}");
    assert!(reports[0].text.contains("memset of 256 bytes"), "{}", reports[0].text);
}
