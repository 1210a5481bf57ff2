//! Shares device memory with other processes: this process allocates from a shareable
//! memory pool on device 0, fills the allocation and exports the pool (a file descriptor)
//! and the pointer; a child process (this program again, with `--import`) imports both and
//! checks the data, and with two devices a second child does the same on device 1 (after
//! `MemoryPool::set_access` for its device): `cargo run --example ipc`. Exits non-zero if a
//! child saw wrong data or failed.
//!
//! The pool's descriptor reaches the child as its standard input (no `fcntl` needed). A driver whose exported
//! handle is not a file descriptor of this process (the stand-in, which shares pools only
//! within one process) cannot share with a child: then the import is made here, through a
//! second pool handle, and the program says so.

use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::process::{Command, ExitCode, Stdio};

use cudrv::{Context, ImportedBuffer, IpcExport, MemoryPool, Stream};

const N: usize = 1 << 16;

fn value(i: usize) -> u32 {
    (i as u32).wrapping_mul(2654435761)
}

fn main() -> Result<ExitCode, cudrv::Error> {
    let driver = cudrv::init()?;
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, export, device] = args.as_slice() {
        if flag == "--import" {
            // A child: import on `device`, which may not be the one the memory lives on.
            let export = parse_hex(export).unwrap_or_else(|| exit("child: bad export data"));
            let device = driver.device(device.parse().unwrap_or_else(|_| exit("child: bad device")))?;
            let ctx = device.primary_context()?;
            let stream = Stream::new(&ctx, 0)?;
            // A copy of the descriptor above 2 (fd 0 would be a null handle to the driver).
            let fd = std::io::stdin().as_fd().try_clone_to_owned().unwrap_or_else(|e| exit(&format!("child: {e}")));
            let pool = MemoryPool::import_fd(&ctx, fd.as_raw_fd())?;
            if device.as_raw() != 0 {
                pool.set_access(&device, true)?; // the memory is device 0's
            }
            return Ok(exit_code(check_import(&ctx, &pool, &export, &stream, "child process")?));
        }
    }
    let ctx = driver.device(0)?.primary_context()?;
    let stream = Stream::new(&ctx, 0)?;

    let pool = MemoryPool::new(&ctx, cudrv::ShareableHandleTypes::POSIX_FD)?;
    let buffer = pool.alloc_async::<u32>(&stream, N)?;
    stream.synchronize()?;
    buffer.copy_from_host(&(0..N).map(value).collect::<Vec<u32>>())?;
    // The pool is exported first: a real driver exports a pointer only from a pool whose
    // shareable handle exists (the stand-in does not mind the order).
    let fd = pool.export_fd()?;
    let export = buffer.export_ipc()?;
    if std::fs::metadata(format!("/proc/self/fd/{fd}")).is_err() {
        println!("the exported pool handle {fd} is not a file descriptor of this process: importing in this process");
        let imported_pool = MemoryPool::import_fd(&ctx, fd)?;
        return Ok(exit_code(check_import(&ctx, &imported_pool, &export, &stream, "this process")?));
    }
    // SAFETY: the driver gave this process the descriptor (`export_fd`): it is open and ours.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let hex: String = export.0.iter().map(|b| format!("{b:02x}")).collect();
    let exe = std::env::current_exe().unwrap_or_else(|e| exit(&format!("no path to this program: {e}")));
    // One child on device 0, and one on device 1 where there is one.
    let mut all_passed = true;
    for device in 0..driver.device_count()?.min(2) {
        let fd = fd.try_clone().unwrap_or_else(|e| exit(&format!("cannot copy the descriptor: {e}")));
        let status = Command::new(&exe)
            .args(["--import", &hex, &device.to_string()])
            .stdin(Stdio::from(fd))
            .status()
            .unwrap_or_else(|e| exit(&format!("the child could not be started: {e}")));
        println!("ipc: exported {N} values to a child process on device {device}, which exited with {status}");
        all_passed &= status.success();
    }
    Ok(exit_code(all_passed))
}

fn exit_code(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Imports the allocation and checks its values; `Ok(false)` if any is wrong.
fn check_import(
    ctx: &Context,
    pool: &MemoryPool,
    export: &IpcExport,
    stream: &Stream,
    who: &str,
) -> Result<bool, cudrv::Error> {
    let imported = ImportedBuffer::import(pool, export, stream)?;
    let mut bytes = vec![0u8; N * 4];
    imported.copy_to_host(&mut bytes)?;
    let wrong = bytes.chunks_exact(4).enumerate().filter(|&(i, b)| b != value(i).to_ne_bytes()).count();
    println!(
        "{who} (device {}): imported {} bytes at {:#x}, {N} values, {wrong} wrong",
        ctx.device().as_raw(),
        imported.len(),
        imported.as_raw()
    );
    Ok(wrong == 0)
}

fn parse_hex(hex: &str) -> Option<IpcExport> {
    let mut data = [0u8; 64];
    if hex.len() != 128 {
        return None;
    }
    for (i, byte) in data.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(IpcExport(data))
}

fn exit(why: &str) -> ! {
    eprintln!("ipc: {why}");
    std::process::exit(1)
}
