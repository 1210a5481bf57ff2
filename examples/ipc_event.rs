//! An event shared between two processes: this process queues work (`scale_f32`, then a
//! host function that holds the stream until the child is ready), records an event made
//! with `INTERPROCESS | DISABLE_TIMING` after it and exports its handle
//! (`Event::export_ipc`, `cuIpcGetEventHandle`); a child process (this program again, with
//! `--child HANDLE`) opens it (`Event::open_ipc`, `cuIpcOpenEventHandle`), checks that it is
//! still pending, says so, and waits for it, once through a stream of its own
//! (`Stream::wait_event`) and once directly; then it checks it is complete. The parent
//! releases its stream when the child says it waits, and checks the work's result and the
//! child's verdict: `cargo run --example ipc_event`. Exits non-zero if either check fails.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, ExitCode, Stdio};
use std::sync::mpsc;

use cudrv::{DeviceBuffer, Event, EventFlags, IpcEventHandle, LaunchConfig, Module, Stream, StreamFlags};

const N: usize = 1 << 16;

fn main() -> Result<ExitCode, cudrv::Error> {
    let driver = cudrv::init()?;
    let ctx = driver.device(0)?.primary_context()?;
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, hex] = args.as_slice() {
        if flag == "--child" {
            let handle = IpcEventHandle::from_hex(hex).unwrap_or_else(|| exit("child: bad handle"));
            let event = Event::open_ipc(&ctx, &handle)?;
            let pending = !event.is_complete()?;
            // Tell the parent we are about to wait (it then lets its stream run).
            println!("waiting (pending: {pending})");
            let _ = std::io::stdout().flush();
            let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
            stream.wait_event(&event)?;
            stream.synchronize()?;
            event.synchronize()?;
            let complete = event.is_complete()?;
            println!("child: pending before: {pending}, complete after the waits: {complete}");
            return Ok(exit_code(pending && complete));
        }
    }

    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let module = Module::from_ptx(&ctx, include_str!("kernels/scale_f32.ptx"))?;
    let f = module.function("scale_f32")?;
    let host: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let x = DeviceBuffer::from_slice(&ctx, &host)?;
    let (scale, n) = (2.0f32, N as i32);
    let mut launch = f.builder(&stream);
    launch.arg(&x).arg(&scale).arg(&n);
    // SAFETY: the arguments match scale_f32(float*, float, int).
    unsafe { launch.launch(LaunchConfig::for_num_elems(N as u32)) }?;
    // Hold the stream until the child is waiting, so that it sees the event pending.
    let (release, gate) = mpsc::channel::<()>();
    stream.launch_host_fn(move || {
        let _ = gate.recv();
    })?;
    let event = Event::new(&ctx, EventFlags::INTERPROCESS | EventFlags::DISABLE_TIMING)?;
    event.record(&stream)?;
    let handle = event.export_ipc()?;

    let exe = std::env::current_exe().unwrap_or_else(|e| exit(&format!("no path to this program: {e}")));
    let mut child = Command::new(exe)
        .args(["--child", &handle.to_hex()])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| exit(&format!("the child could not be started: {e}")));
    let mut lines = BufReader::new(child.stdout.take().unwrap_or_else(|| exit("no pipe from the child"))).lines();
    let mut child_ok = false;
    match lines.next() {
        Some(Ok(line)) => println!("child says: {line}"),
        _ => println!("the child said nothing before waiting"),
    }
    // Let the stream run: the kernel's result is then recorded, and the child's waits end.
    let _ = release.send(());
    for line in lines.map_while(Result::ok) {
        println!("child says: {line}");
        child_ok |= line.contains("pending before: true, complete after the waits: true");
    }
    let status = child.wait().unwrap_or_else(|e| exit(&format!("waiting for the child: {e}")));
    stream.synchronize()?;
    let out = x.to_vec()?;
    let wrong = out.iter().enumerate().filter(|&(i, &v)| v != 2.0 * i as f32).count();
    println!("ipc_event: the child waited for the event ({status}); {N} values, {wrong} wrong");
    Ok(exit_code(wrong == 0 && status.success() && child_ok))
}

fn exit_code(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn exit(why: &str) -> ! {
    eprintln!("ipc_event: {why}");
    std::process::exit(1)
}
