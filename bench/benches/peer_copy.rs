//! Peer copy bandwidth between two GPUs, through the raw `cuMemcpyPeerAsync` and through
//! `DeviceBuffer::copy_from_peer_async`, in one process, interleaved rounds, with peer
//! access on and then off.
//!
//! `cargo bench -p cudrv-bench --bench peer_copy -- [--mib N] [--rounds N]` on a machine
//! with two GPUs.

use std::time::Instant;

use cudrv::{Context, DeviceBuffer, Stream};

fn arg(name: &str, default: usize) -> usize {
    std::env::args().skip_while(|a| a != name).nth(1).and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), cudrv::Error> {
    let (mib, rounds, copies) = (arg("--mib", 256), arg("--rounds", 7), 10);
    let driver = cudrv::init()?;
    if driver.device_count()? < 2 {
        println!("peer_copy: needs two GPUs");
        return Ok(());
    }
    let (d0, d1) = (driver.device(0)?, driver.device(1)?);
    let (c0, c1): (Context, Context) = (d0.primary_context()?, d1.primary_context()?);
    let n = mib << 20;
    let src = DeviceBuffer::<u8>::alloc(&c0, n)?;
    let dst = DeviceBuffer::<u8>::alloc(&c1, n)?;
    src.fill(7)?;
    let stream = Stream::new(&c1, 1)?;
    let pc = driver.pc();
    println!("# peer_copy: {} MiB, {copies} copies per sample, {rounds} rounds, {} -> {}", mib, d0.name()?, d1.name()?);
    println!("| peer access | raw cuMemcpyPeerAsync | cudrv copy_from_peer_async | cudrv/raw |");
    println!("| --- | --- | --- | --- |");
    for access in [true, false] {
        if access {
            c1.enable_peer_access(&c0)?;
            c0.enable_peer_access(&c1)?;
        } else {
            c1.disable_peer_access(&c0)?;
            c0.disable_peer_access(&c1)?;
        }
        let raw = || -> Result<(), cudrv::Error> {
            for _ in 0..copies {
                // SAFETY: live allocations of `n` bytes in their contexts; a live stream.
                unsafe {
                    pc.cuMemcpyPeerAsync(dst.as_raw(), c1.as_raw(), src.as_raw(), c0.as_raw(), n, stream.as_raw())
                }?;
            }
            stream.synchronize()
        };
        let safe = || -> Result<(), cudrv::Error> {
            for _ in 0..copies {
                dst.copy_from_peer_async(&src, &stream)?;
            }
            stream.synchronize()
        };
        raw()?;
        safe()?;
        let (mut r, mut s) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            let order: [bool; 2] = if round % 2 == 0 { [true, false] } else { [false, true] };
            for is_raw in order {
                let t = Instant::now();
                if is_raw {
                    raw()?
                } else {
                    safe()?
                }
                let gbs = (n * copies) as f64 / t.elapsed().as_secs_f64() / 1e9;
                if is_raw {
                    r.push(gbs)
                } else {
                    s.push(gbs)
                }
            }
        }
        let (r, s) = (median(&mut r), median(&mut s));
        println!("| {} | {r:.1} GB/s | {s:.1} GB/s | {:.3}x |", if access { "on" } else { "off" }, s / r);
    }
    Ok(())
}
