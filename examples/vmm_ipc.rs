//! Virtual memory shared between two processes by file descriptor: the parent creates
//! physical memory exportable as a POSIX file descriptor, maps it, gives its device
//! access and fills it; it exports the descriptor and passes it, with the size, over a
//! Unix socket (`cudrv::send_fd`) to a child process (this program again, with `child`).
//! The child imports the memory, maps it in its own address range, checks every value,
//! writes new ones and answers; the parent checks that it sees the child's values:
//! `cargo run --example vmm_ipc`. Exits non-zero on a wrong result.

use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::process::Command;

use cudrv::{
    Access, AddressRange, Context, DeviceSlice, DeviceSliceMut, Mapping, PhysicalMemory, ShareableHandleTypes,
};

/// The value the parent writes at index `i`, and the one the child writes over it.
fn parent_value(i: usize) -> u32 {
    (i as u32).wrapping_mul(3).wrapping_add(1)
}
fn child_value(i: usize) -> u32 {
    parent_value(i) ^ 0xdead_beef
}

fn to_bytes(values: impl Iterator<Item = u32>) -> Vec<u8> {
    values.flat_map(u32::to_le_bytes).collect()
}

/// How many of the mapping's values differ from `expected(i)`.
fn wrong(map: &Mapping, expected: fn(usize) -> u32) -> cudrv::Result<usize> {
    let bytes = map.to_vec()?;
    let values = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
    Ok(values.enumerate().filter(|&(i, v)| v != expected(i)).count())
}

/// All of `memory` mapped into a range of its own, with read-write access for `ctx`'s device.
fn map_all(ctx: &Context, memory: &PhysicalMemory) -> cudrv::Result<Mapping> {
    let range = AddressRange::reserve(ctx, memory.size(), 0)?;
    let map = Mapping::map(&range, 0, memory)?;
    map.set_access(&[(&ctx.device(), Access::ReadWrite)])?;
    Ok(map)
}

fn parent(ctx: &Context) -> Result<usize, Box<dyn std::error::Error>> {
    let size = PhysicalMemory::granularity(&ctx.device(), ShareableHandleTypes::POSIX_FD, false)?;
    let memory = PhysicalMemory::new(&ctx.device(), size, ShareableHandleTypes::POSIX_FD)?;
    let mut map = map_all(ctx, &memory)?;
    map.copy_from_host(&to_bytes((0..size / 4).map(parent_value)))?;
    println!("parent: {size} bytes mapped at {:#x} and filled", map.as_raw());

    let path = std::env::temp_dir().join(format!("cudrv-vmm-ipc-{}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path)?;
    let mut child = Command::new(std::env::current_exe()?).arg("child").arg(&path).spawn()?;
    let (mut socket, _) = listener.accept()?;
    let _ = std::fs::remove_file(&path);
    let fd = memory.export_fd()?;
    cudrv::send_fd(&socket, fd.as_fd(), &(size as u64).to_le_bytes())?;
    drop(fd);
    let mut answer = [0u8; 1];
    socket.read_exact(&mut answer)?;
    let status = child.wait()?;
    println!("child answered {:?} and exited with {status}", answer[0] as char);

    let mut failures = usize::from(answer != *b"y") + usize::from(!status.success());
    let wrong = wrong(&map, child_value)?;
    println!("parent: {} values written by the child, {wrong} wrong", size / 4);
    failures += usize::from(wrong != 0);
    Ok(failures)
}

fn child(ctx: &Context, path: &str) -> Result<bool, Box<dyn std::error::Error>> {
    let mut socket = UnixStream::connect(path)?;
    let mut payload = [0u8; 8];
    let (fd, n) = cudrv::recv_fd(&socket, &mut payload)?;
    let size = usize::try_from(u64::from_le_bytes(payload))?;
    let memory = PhysicalMemory::import_fd(&ctx.device(), &fd, size)?;
    let mut map = map_all(ctx, &memory)?;
    let wrong = wrong(&map, parent_value)?;
    println!(
        "child: imported {size} bytes ({n} bytes of payload), mapped at {:#x}: {wrong} values wrong",
        map.as_raw()
    );
    map.copy_from_host(&to_bytes((0..size / 4).map(child_value)))?;
    let ok = wrong == 0;
    socket.write_all(if ok { b"y" } else { b"n" })?;
    Ok(ok)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let driver = cudrv::init()?;
    let ctx = driver.device(0)?.primary_context()?;
    let args: Vec<String> = std::env::args().collect();
    if let [_, role, path] = args.as_slice() {
        if role == "child" {
            let ok = child(&ctx, path)?;
            drop(ctx);
            std::process::exit(if ok { 0 } else { 1 });
        }
    }
    let failures = parent(&ctx)?;
    if failures != 0 {
        println!("vmm_ipc: {failures} checks failed");
        std::process::exit(1);
    }
    println!("vmm_ipc: shared between two processes, every value verified, 0 wrong");
    Ok(())
}
