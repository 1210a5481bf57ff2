//! Checks cudrv's handles and error policy against the real driver of this machine (run on
//! a GPU machine): `cargo run --release --example handles_check`.
//!
//! Every handle kind (with real kernels, from PTX), context switches between a primary and
//! a created context, IPC between two processes, a panicking host function, and a sticky
//! error raised by a kernel that writes out of bounds (in a child process: reported, not
//! fatal). Prints what it saw; exits 1 if any check failed.

use std::ffi::CString;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cudrv::sys::CUcontext;
use cudrv::{
    Context, DeviceBuffer, Driver, Event, Graph, ImportedBuffer, IpcExport, LaunchConfig, Library, Linker, MemoryPool,
    Module, PinnedBuffer, Stream, UserObject,
};

#[path = "common/checks.rs"]
mod checks;
use checks::Checks;

const PTX: &str = r#"
.version 8.0
.target sm_90
.address_size 64

.visible .entry fill(.param .u64 out, .param .u32 value, .param .u32 n)
{
  .reg .pred %p;
  .reg .b32 %r<6>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [value];
  ld.param.u32 %r2, [n];
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %tid.x;
  mad.lo.s32 %r3, %r3, %r4, %r5;
  setp.ge.u32 %p, %r3, %r2;
  @%p bra DONE;
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r3, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r1;
DONE:
  ret;
}

.visible .entry oob(.param .u64 out)
{
  .reg .b32 %r1;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [out];
  add.s64 %rd2, %rd1, 0x7fffffff00000;
  mov.u32 %r1, 42;
  st.global.u32 [%rd2], %r1;
  ret;
}
"#;

fn ptx() -> CString {
    CString::new(PTX).unwrap()
}

fn finish(c: Checks) -> ! {
    println!("{} passed, {} failed", c.passed, c.failed);
    std::process::exit(if c.failed == 0 { 0 } else { 1 });
}

fn current(d: &Driver) -> CUcontext {
    let mut c: CUcontext = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    unsafe { d.p().cuCtxGetCurrent(&mut c) };
    c
}

fn collect_reports() -> Arc<Mutex<Vec<String>>> {
    let all: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = all.clone();
    cudrv::set_reporter(move |r| sink.lock().unwrap().push(r.to_string()));
    all
}

/// Launches `fill(out, value, n)`.
fn fill(f: &cudrv::Function, stream: &Stream, buf: &DeviceBuffer, value: u32) -> Result<(), cudrv::Error> {
    let n = (buf.len() / 4) as u32;
    // SAFETY: the arguments match fill(u64, u32, u32); the kernel writes the buffer's n words only.
    unsafe { f.builder(stream).arg(buf).arg(&value).arg(&n).launch(LaunchConfig::for_num_elems(n)) }
}

fn words(buf: &DeviceBuffer) -> Vec<u32> {
    let bytes = buf.to_vec().unwrap();
    bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("--ipc-child") => ipc_child(&args[2..]),
        Some("--sticky-child") => sticky_child(),
        _ => parent(),
    }
}

/// If the check hangs, says where every thread is blocked and exits.
fn watchdog(seconds: u64) {
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(seconds));
        eprintln!("watchdog: still running after {seconds} s; threads:");
        if let Ok(dir) = std::fs::read_dir("/proc/self/task") {
            for t in dir.flatten() {
                let p = t.path();
                let read = |f: &str| std::fs::read_to_string(p.join(f)).unwrap_or_default().trim().to_string();
                eprintln!("  {:?} {} wchan={} syscall={}", t.file_name(), read("comm"), read("wchan"), read("syscall"));
            }
        }
        std::process::exit(3);
    });
}

fn parent() {
    watchdog(35);
    let mut c = Checks::default();
    let reports = collect_reports();
    let d = cudrv::init().expect("a CUDA driver");
    println!("driver: {} ({:?}), CUDA {}", d.source(), d.file(), d.version());

    // Contexts: primary and created, and switching between them.
    let primary = d.device(0).unwrap().primary_context().unwrap();
    let created = c.ok(Context::new(&d.device(0).unwrap(), 0), "created a second context").unwrap();
    c.check(current(d).is_null(), "creating it left the thread with no current context");
    primary.set_current().unwrap();
    let in_created = created.run(|| Ok(current(d))).unwrap();
    c.check(
        in_created == created.as_raw() && current(d) == primary.as_raw(),
        "run() switches to the created context and back",
    );
    let s2 = Stream::new(&created, 0).unwrap();
    let b2 = DeviceBuffer::<u8>::alloc(&created, 1 << 20).unwrap();
    c.ok(b2.fill(3).and_then(|_| s2.synchronize()), "work in the created context from a thread in the primary one");
    c.check(current(d) == primary.as_raw(), "the primary context is current again (asked of the driver)");

    // Streams, events, memory, pools, pinned memory.
    let stream = Stream::new(&primary, 0).unwrap();
    let (start, end) = (Event::new(&primary, 0).unwrap(), Event::new(&primary, 0).unwrap());
    start.record(&stream).unwrap();
    let buf = DeviceBuffer::<u8>::alloc(&primary, 1 << 20).unwrap();
    let data: Vec<u8> = (0..1 << 20).map(|i: u32| (i % 251) as u8).collect();
    buf.copy_from_host(&data).unwrap();
    let mut back = vec![0u8; 1 << 20];
    buf.copy_to_host(&mut back).unwrap();
    c.check(back == data, "1 MiB round trip through cuMemAlloc'd memory");
    let a = c.ok(DeviceBuffer::<u8>::alloc_async(&stream, 1 << 20), "cuMemAllocAsync").unwrap();
    let pool = MemoryPool::new(&primary, cudrv::ShareableHandleTypes::NONE).unwrap();
    let pb = c.ok(pool.alloc_async::<u8>(&stream, 1 << 20), "cuMemAllocFromPoolAsync").unwrap();
    let pinned = c.ok(PinnedBuffer::<u8>::zeroed(&primary, 4096), "cuMemAllocHost").unwrap();
    end.record(&stream).unwrap();
    stream.synchronize().unwrap();
    c.check(end.is_complete().unwrap(), "event complete after synchronize");
    println!("  elapsed: {:?} ms", start.elapsed_ms(&end));

    // Modules, libraries, the linker, real kernels.
    let module = c.ok(Module::load_ptx(&primary, &ptx()), "cuModuleLoadData (PTX)").unwrap();
    let f = module.function("fill").unwrap();
    c.ok(fill(&f, &stream, &a, 0xabcd).and_then(|_| stream.synchronize()), "module kernel launch");
    c.check(words(&a).iter().all(|&w| w == 0xabcd), "the kernel wrote every word");
    // Launch attributes go through cuLaunchKernelEx.
    let n = (a.len() / 4) as u32;
    for (what, value, cooperative, cluster) in [
        ("cooperative launch", 0x1111u32, true, None),
        ("cluster launch (2x1x1 blocks)", 0x2222, false, Some((2, 1, 1))),
    ] {
        let mut l = f.builder(&stream);
        l.arg(&a).arg(&value).arg(&n).cooperative(cooperative);
        if let Some(dims) = cluster {
            l.cluster(dims);
        }
        // An even number of blocks, so that clusters of 2 fit.
        let config = LaunchConfig::new((n.div_ceil(256).next_multiple_of(2), 1, 1), (256, 1, 1));
        // SAFETY: the arguments match fill(u64, u32, u32); the kernel writes the buffer's n words only.
        c.ok(unsafe { l.launch(config) }.and_then(|_| stream.synchronize()), what);
        c.check(words(&a).iter().all(|&w| w == value), format!("{what}: the kernel wrote every word"));
    }
    let library = c.ok(Library::load_ptx(d, &ptx()), "cuLibraryLoadData (PTX)").unwrap();
    let kernel = library.kernel("fill").unwrap();
    drop(library);
    let (n, v) = ((pb.len() / 4) as u32, 7u32);
    // SAFETY: the arguments match fill(u64, u32, u32); the kernel writes the buffer's n words only.
    let launched = unsafe { kernel.builder(&stream).arg(&pb).arg(&v).arg(&n).launch(LaunchConfig::for_num_elems(n)) };
    c.ok(launched.and_then(|_| stream.synchronize()), "library kernel launch (library dropped, kernel keeps it)");
    c.check(words(&pb).iter().all(|&w| w == 7), "the library kernel wrote every word");
    let mut linker = Linker::new(&primary).unwrap();
    c.ok(linker.add_ptx(PTX, "fill.ptx"), "cuLinkAddData");
    let cubin = c.ok(linker.complete(), "cuLinkComplete").unwrap_or_default();
    drop(linker);
    // SAFETY: `cubin` is the complete image cuLinkComplete returned.
    let linked =
        c.ok(unsafe { Module::load_data(&primary, &cubin) }, &format!("load the linked cubin ({} bytes)", cubin.len()));
    if let Some(m) = linked {
        let g = m.function("fill").unwrap();
        c.ok(fill(&g, &stream, &buf, 9).and_then(|_| stream.synchronize()), "linked kernel launch");
        c.check(words(&buf).iter().all(|&w| w == 9), "the linked kernel wrote every word");
    }

    // Graphs with a host node and a user object; host functions.
    let dropped = Arc::new(AtomicUsize::new(0));
    struct Flag(Arc<AtomicUsize>);
    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let object = UserObject::new(d, Flag(dropped.clone())).unwrap();
    let graph = Graph::new(&primary).unwrap();
    graph.retain_user_object(&object).unwrap();
    drop(object);
    let runs = Arc::new(AtomicUsize::new(0));
    let r = runs.clone();
    graph.add_host_node(&[], move || _ = r.fetch_add(1, Ordering::SeqCst)).unwrap();
    let mut exec = graph.instantiate().unwrap();
    exec.launch(&stream).unwrap();
    exec.launch(&stream).unwrap();
    stream.synchronize().unwrap();
    c.check(runs.load(Ordering::SeqCst) == 2, "graph host node ran at each of 2 launches");
    drop((exec, graph));
    let t = Instant::now();
    while dropped.load(Ordering::SeqCst) == 0 && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(1));
    }
    c.check(dropped.load(Ordering::SeqCst) == 1, "user object destroyed once the graph was gone");
    stream.launch_host_fn(|| panic!("host function boom")).unwrap();
    stream.synchronize().unwrap();
    let got = reports.lock().unwrap().clone();
    c.check(
        got.len() == 1 && got[0].ends_with("panicked: host function boom"),
        format!("a panicking host function is reported, not fatal: {got:?}"),
    );
    reports.lock().unwrap().clear();

    // IPC between two processes.
    ipc_parent(&mut c, &primary, &stream);

    // A sticky error, in a child process.
    let out = Command::new(std::env::current_exe().unwrap()).arg("--sticky-child").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    println!("{}", text.lines().map(|l| format!("  sticky child: {l}")).collect::<Vec<_>>().join("\n"));
    c.check(
        out.status.success() && text.contains("STICKY-CHILD-OK"),
        "out-of-bounds kernel: sticky error reported, process not killed",
    );

    macro_rules! drop_each {
        ($($h:ident),*) => {$(
            println!("  dropping {}", stringify!($h));
            drop($h);
        )*};
    }
    drop_each!(pinned, pb, pool, a, buf, start, end, f, kernel, module, b2, s2, created, stream);
    let left = reports.lock().unwrap().clone();
    c.check(left.is_empty(), format!("no reports from dropping everything: {left:?}"));
    finish(c);
}

extern "C" {
    fn fcntl(fd: i32, cmd: i32, ...) -> i32;
}

fn ipc_parent(c: &mut Checks, ctx: &Context, stream: &Stream) {
    let Some(pool) = c.ok(MemoryPool::new(ctx, cudrv::ShareableHandleTypes::POSIX_FD), "shareable pool") else {
        return;
    };
    let buf = pool.alloc_async::<u8>(stream, 4096).unwrap();
    buf.fill(0x5a).unwrap();
    stream.synchronize().unwrap();
    let Some(fd) = c.ok(pool.export_fd(), "cuMemPoolExportToShareableHandle") else { return };
    let export = buf.export_ipc().unwrap();
    // Let the child inherit the descriptor (F_SETFD = 2: clear FD_CLOEXEC).
    // SAFETY: fcntl on a descriptor we own.
    unsafe { fcntl(fd, 2, 0) };
    let hex: String = export.0.iter().map(|b| format!("{b:02x}")).collect();
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--ipc-child", &fd.to_string(), &hex, "4096"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    println!("{}", text.lines().map(|l| format!("  ipc child: {l}")).collect::<Vec<_>>().join("\n"));
    c.check(
        out.status.success() && text.contains("IPC-CHILD-OK"),
        "another process imported the allocation and read it",
    );
}

fn ipc_child(args: &[String]) {
    let d = cudrv::init().unwrap();
    let fd: i32 = args[0].parse().unwrap();
    let mut data = [0u8; 64];
    for (i, b) in data.iter_mut().enumerate() {
        *b = u8::from_str_radix(&args[1][2 * i..2 * i + 2], 16).unwrap();
    }
    let len: usize = args[2].parse().unwrap();
    let ctx = d.device(0).unwrap().primary_context().unwrap();
    let stream = Stream::new(&ctx, 0).unwrap();
    let pool = MemoryPool::import_fd(&ctx, fd).unwrap();
    let a = ImportedBuffer::import(&pool, &IpcExport(data), &stream).unwrap();
    let b = ImportedBuffer::import(&pool, &IpcExport(data), &stream).unwrap();
    assert_eq!(a.as_raw(), b.as_raw(), "the second import is the cached one");
    assert!(a.len() >= len, "the driver's size of the mapping: {}", a.len());
    let mut bytes = vec![0u8; len];
    a.copy_to_host(&mut bytes).unwrap();
    assert!(bytes.iter().all(|&x| x == 0x5a), "read what the parent wrote");
    drop(a);
    b.copy_to_host(&mut bytes).unwrap();
    drop(b);
    stream.synchronize().unwrap();
    println!("imported {len} bytes at one address, read 0x5a back twice");
    println!("IPC-CHILD-OK");
}

fn sticky_child() {
    let reports = collect_reports();
    let d = cudrv::init().unwrap();
    let ctx = d.device(0).unwrap().primary_context().unwrap();
    let stream = Stream::new(&ctx, 0).unwrap();
    let buf = DeviceBuffer::<u8>::alloc(&ctx, 4096).unwrap();
    let module = Module::load_ptx(&ctx, &ptx()).unwrap();
    let oob = module.function("oob").unwrap();
    // SAFETY: the argument matches oob(u64); the fault it causes is what is checked.
    let launched = unsafe { oob.builder(&stream).arg(&buf).launch(LaunchConfig::new((1, 1, 1), (1, 1, 1))) };
    println!("launch: {launched:?}");
    let e = stream.synchronize().expect_err("the kernel faults");
    println!("synchronize: {e}");
    println!("is_sticky: {}", e.is_sticky());
    assert!(e.is_sticky(), "{e}");
    // Later work fails with the same error, and dropping everything reports, not crashes.
    let again = DeviceBuffer::<u8>::alloc(&ctx, 64).err();
    println!("allocating afterwards: {again:?}");
    drop((oob, module, buf, stream, ctx));
    for r in reports.lock().unwrap().iter() {
        println!("report: {r}");
    }
    println!("STICKY-CHILD-OK");
}
