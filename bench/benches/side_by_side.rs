//! Raw `p` calls, cudrv's handles and cudarc 0.19, side by side in one process, in short
//! interleaved turns (`cudrv_bench::interleaved`: 50 turns per round, the order of the three
//! rotating each turn).
//!
//! `cargo bench -p cudrv-bench --bench side_by_side -- [--rounds N]` on a machine with a GPU.
//! Prints, per case, the median time per operation of each, its ratio to the raw calls,
//! and the quartiles of cudrv's ratio to the raw calls over the turns.

use std::ffi::{c_void, CStr};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaContext, PushKernelArg};
use cudrv::sys::CUfunction_attribute;
use cudrv::sys::{CUcontext, CUdeviceptr, CUevent, CUstream};
use cudrv::{
    Access, AddressRange, DeviceBuffer, DeviceSlice, Event, FunctionAttribute, LaunchConfig, Mapping, Module,
    PhysicalMemory, ShareableHandleTypes, Stream,
};
use cudrv_bench::{interleaved, median, rounds, Op};

/// Each round's calls are timed in this many interleaved turns.
const TURNS_PER_ROUND: u32 = 50;

const PTX: &str = ".version 7.0\n.target sm_50\n.address_size 64\n\
.visible .entry noop(.param .u64 noop_p, .param .u32 noop_n)\n{\n\tret;\n}\n";

struct Case<'a> {
    name: &'static str,
    per_round: u32,
    /// raw, cudrv, cudarc
    ops: [Op<'a>; 3],
}

fn main() {
    let rounds = rounds(7);
    let driver = cudrv::init().expect("a CUDA driver");
    let device = driver.device(0).unwrap();
    println!(
        "# side_by_side: {} ({}), driver {}, {rounds} rounds",
        device.name().unwrap(),
        driver.source(),
        driver.version()
    );
    let ctx = device.primary_context().unwrap();
    ctx.set_current().unwrap();
    let cu = CudaContext::new(0).unwrap();
    let cu_stream = cu.new_stream().unwrap();
    // cudrv and the raw calls use a non-blocking stream too, as cudarc does.
    let stream = Stream::new(&ctx, 1).unwrap();
    let s: CUstream = stream.as_raw();
    let p = driver.p();

    let ptx = std::ffi::CString::new(PTX).unwrap();
    let module = Module::load_ptx(&ctx, &ptx).unwrap();
    let f = module.function("noop").unwrap();
    let cu_f = cu.load_module(cudarc::nvrtc::Ptx::from_src(PTX)).unwrap().load_function("noop").unwrap();
    let buf = DeviceBuffer::<u32>::alloc(&ctx, 1024).unwrap();
    let cu_buf = cu_stream.alloc_zeros::<u32>(1024).unwrap();
    let n: u32 = 1024;
    let cfg = LaunchConfig::new((1, 1, 1), (1, 1, 1));
    let cu_cfg = cudarc::driver::LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
    let raw_ptr: CUdeviceptr = buf.as_raw();
    let (copy_src, copy_dst) =
        (DeviceBuffer::<u32>::alloc(&ctx, 1024).unwrap(), DeviceBuffer::<u32>::alloc(&ctx, 1024).unwrap());
    let cu_copy_src = cu_stream.alloc_zeros::<u32>(1024).unwrap();
    let cu_copy_dst = std::cell::RefCell::new(cu_stream.alloc_zeros::<u32>(1024).unwrap());

    let cases: Vec<Case<'_>> = vec![
        Case {
            name: "cuDriverGetVersion",
            per_round: 2_000_000,
            ops: [
                Box::new(|| {
                    let mut v = 0;
                    // SAFETY: valid out-pointer.
                    black_box(unsafe { p.cuDriverGetVersion(&mut v) });
                }),
                Box::new(|| {
                    let mut v = 0;
                    // SAFETY: valid out-pointer.
                    black_box(unsafe { cudrv::p::cuDriverGetVersion(&mut v) });
                }),
                Box::new(|| {
                    let mut v = 0;
                    // SAFETY: valid out-pointer.
                    black_box(unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) });
                }),
            ],
        },
        Case {
            name: "cuCtxGetCurrent",
            per_round: 2_000_000,
            ops: [
                Box::new(|| {
                    let mut c: CUcontext = std::ptr::null_mut();
                    // SAFETY: valid out-pointer.
                    black_box(unsafe { p.cuCtxGetCurrent(&mut c) });
                }),
                Box::new(|| {
                    let mut c: CUcontext = std::ptr::null_mut();
                    // SAFETY: valid out-pointer.
                    black_box(unsafe { cudrv::p::cuCtxGetCurrent(&mut c) });
                }),
                Box::new(|| {
                    let mut c: cudarc::driver::sys::CUcontext = std::ptr::null_mut();
                    // SAFETY: valid out-pointer.
                    black_box(unsafe { cudarc::driver::sys::cuCtxGetCurrent(&mut c) });
                }),
            ],
        },
        Case {
            name: "event create+drop",
            per_round: 50_000,
            ops: [
                Box::new(|| {
                    let mut e: CUevent = std::ptr::null_mut();
                    // SAFETY: valid out-pointer; the event is destroyed once.
                    unsafe {
                        p.cuEventCreate(&mut e, 2);
                        p.cuEventDestroy(e);
                    }
                }),
                Box::new(|| drop(black_box(Event::new(&ctx, 2).unwrap()))),
                Box::new(|| drop(black_box(cu.new_event(None).unwrap()))),
            ],
        },
        Case {
            name: "stream create+drop",
            per_round: 20_000,
            ops: [
                Box::new(|| {
                    let mut st: CUstream = std::ptr::null_mut();
                    // SAFETY: valid out-pointer; the stream is destroyed once.
                    unsafe {
                        p.cuStreamCreate(&mut st, 1);
                        p.cuStreamDestroy(st);
                    }
                }),
                Box::new(|| drop(black_box(Stream::new(&ctx, 1).unwrap()))),
                Box::new(|| drop(black_box(cu.new_stream().unwrap()))),
            ],
        },
        Case {
            name: "1 MiB stream-ordered alloc+drop",
            per_round: 50_000,
            ops: [
                Box::new(|| {
                    let mut ptr: CUdeviceptr = 0;
                    // SAFETY: valid out-pointer; freed once on the same stream.
                    unsafe {
                        p.cuMemAllocAsync(&mut ptr, 1 << 20, s);
                        p.cuMemFreeAsync(ptr, s);
                    }
                }),
                Box::new(|| drop(black_box(DeviceBuffer::<u8>::alloc_async(&stream, 1 << 20).unwrap()))),
                // SAFETY: the memory is never read.
                Box::new(|| drop(black_box(unsafe { cu_stream.alloc::<u8>(1 << 20) }.unwrap()))),
            ],
        },
        Case {
            name: "kernel launch (2 arguments)",
            per_round: 20_000,
            ops: [
                Box::new(|| {
                    let (mut a, mut b) = (raw_ptr, n);
                    let mut params = [(&mut a as *mut u64).cast::<c_void>(), (&mut b as *mut u32).cast::<c_void>()];
                    // SAFETY: the parameters match noop(u64, u32).
                    unsafe {
                        p.cuLaunchKernel(f.as_raw(), 1, 1, 1, 1, 1, 1, 0, s, params.as_mut_ptr(), std::ptr::null_mut())
                    };
                }),
                Box::new(|| {
                    let mut l = f.builder(&stream);
                    l.arg(&buf).arg(&n);
                    // SAFETY: the arguments match noop(u64, u32).
                    unsafe { l.launch(cfg) }.unwrap();
                }),
                Box::new(|| {
                    let mut l = cu_stream.launch_builder(&cu_f);
                    l.arg(&cu_buf).arg(&n);
                    // SAFETY: the arguments match noop(u64, u32).
                    unsafe { l.launch(cu_cfg) }.unwrap();
                }),
            ],
        },
        Case {
            name: "function attribute get (registers: read-only, remembered)",
            per_round: 500_000,
            ops: [
                Box::new(|| {
                    let mut v = 0;
                    // SAFETY: a live function and a valid out-pointer.
                    black_box(unsafe {
                        p.cuFuncGetAttribute(&mut v, CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS, f.as_raw())
                    });
                }),
                Box::new(|| {
                    black_box(f.attribute(FunctionAttribute::NumRegs).unwrap());
                }),
                Box::new(|| {
                    black_box(cu_f.num_regs().unwrap());
                }),
            ],
        },
        Case {
            name: "function attribute get (max dynamic shared memory: settable, asked each time)",
            per_round: 500_000,
            ops: [
                Box::new(|| {
                    let mut v = 0;
                    let a = CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
                    // SAFETY: a live function and a valid out-pointer.
                    black_box(unsafe { p.cuFuncGetAttribute(&mut v, a, f.as_raw()) });
                }),
                Box::new(|| {
                    black_box(f.attribute(FunctionAttribute::MaxDynamicSharedSizeBytes).unwrap());
                }),
                Box::new(|| {
                    let a =
                        cudarc::driver::sys::CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
                    black_box(cu_f.get_attribute(a).unwrap());
                }),
            ],
        },
        Case {
            name: "function attribute set (max dynamic shared memory)",
            per_round: 500_000,
            ops: [
                Box::new(|| {
                    let a = CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
                    // SAFETY: a live function.
                    black_box(unsafe { p.cuFuncSetAttribute(f.as_raw(), a, 1024) });
                }),
                Box::new(|| f.set_max_dynamic_shared_size_bytes(1024).unwrap()),
                Box::new(|| {
                    let a =
                        cudarc::driver::sys::CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
                    cu_f.set_attribute(a, 1024).unwrap();
                }),
            ],
        },
        Case {
            name: "occupancy: max active blocks per SM",
            per_round: 200_000,
            ops: [
                Box::new(|| {
                    let mut blocks = 0;
                    // SAFETY: a live function and a valid out-pointer.
                    black_box(unsafe {
                        p.cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&mut blocks, f.as_raw(), 256, 0, 0)
                    });
                }),
                Box::new(|| {
                    black_box(f.max_active_blocks_per_multiprocessor(256, 0, 0).unwrap());
                }),
                Box::new(|| {
                    black_box(cu_f.occupancy_max_active_blocks_per_multiprocessor(256, 0, None).unwrap());
                }),
            ],
        },
        Case {
            name: "copy 4 KiB device to device, one stream",
            per_round: 20_000,
            ops: [
                Box::new(|| {
                    // SAFETY: both allocations hold 4 KiB; one stream.
                    black_box(unsafe { p.cuMemcpyDtoDAsync(copy_dst.as_raw(), copy_src.as_raw(), 4096, s) });
                }),
                Box::new(|| copy_dst.copy_from_device_async(&copy_src, &stream).unwrap()),
                Box::new(|| cu_stream.memcpy_dtod(&cu_copy_src, &mut *cu_copy_dst.borrow_mut()).unwrap()),
            ],
        },
        Case {
            name: "view of a buffer (no driver call)",
            per_round: 2_000_000,
            ops: [
                Box::new(|| {
                    black_box(black_box(raw_ptr) + 4 * 16);
                }),
                Box::new(|| {
                    black_box(buf.slice(16..512).unwrap());
                }),
                Box::new(|| {
                    black_box(cu_buf.slice(16..512));
                }),
            ],
        },
    ];
    let _keep: (&Arc<_>, &CStr) = (&cu_stream, &ptx);
    run(cases, rounds);
    stream.synchronize().unwrap();
    map_one_gib(&ctx, rounds);
}

/// Maps 1 GiB in 2 MiB chunks with access set, then unmaps and frees it all: the raw calls
/// against cudrv's `AddressRange`/`PhysicalMemory`/`Mapping` (cudarc has no virtual memory
/// management), interleaved rounds.
fn map_one_gib(ctx: &cudrv::Context, rounds: usize) {
    const CHUNK: usize = 2 << 20;
    const CHUNKS: usize = 512;
    let p = ctx.driver().p();
    let dev = ctx.device();
    let location = cudrv::sys::CUmemLocation {
        type_: cudrv::sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
        __bindgen_anon_1: cudrv::sys::CUmemLocation_st__bindgen_ty_1 { id: dev.as_raw() },
    };
    let prop = cudrv::sys::CUmemAllocationProp {
        type_: cudrv::sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
        location,
        ..Default::default()
    };
    let access = cudrv::sys::CUmemAccessDesc {
        location,
        flags: cudrv::sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    };
    let raw = || {
        let t = Instant::now();
        let mut va: CUdeviceptr = 0;
        // SAFETY: valid out-pointers and properties; everything made is released below, in
        // the order the driver requires.
        unsafe {
            assert_eq!(p.cuMemAddressReserve(&mut va, CHUNK * CHUNKS, 0, 0, 0), cudrv::sys::CUresult::CUDA_SUCCESS);
            let mut handles = Vec::with_capacity(CHUNKS);
            for i in 0..CHUNKS {
                let mut h = 0;
                p.cuMemCreate(&mut h, CHUNK, &prop, 0);
                let at = va + (i * CHUNK) as u64;
                p.cuMemMap(at, CHUNK, 0, h, 0);
                p.cuMemSetAccess(at, CHUNK, &access, 1);
                handles.push(h);
            }
            for (i, h) in handles.into_iter().enumerate() {
                p.cuMemUnmap(va + (i * CHUNK) as u64, CHUNK);
                p.cuMemRelease(h);
            }
            p.cuMemAddressFree(va, CHUNK * CHUNKS);
        }
        t.elapsed().as_secs_f64() * 1e3
    };
    let cudrv = || {
        let t = Instant::now();
        let range = AddressRange::reserve(ctx, CHUNK * CHUNKS, 0).unwrap();
        let mut maps = Vec::with_capacity(CHUNKS);
        for i in 0..CHUNKS {
            let memory = PhysicalMemory::new(&ctx.device(), CHUNK, ShareableHandleTypes::NONE).unwrap();
            let m = Mapping::map(&range, i * CHUNK, &memory).unwrap();
            m.set_access(&[(&dev, Access::ReadWrite)]).unwrap();
            maps.push(m);
        }
        drop(maps);
        drop(range);
        t.elapsed().as_secs_f64() * 1e3
    };
    let (mut r, mut c) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        if round % 2 == 0 {
            r.push(raw());
            c.push(cudrv());
        } else {
            c.push(cudrv());
            r.push(raw());
        }
    }
    let (mr, mc) = (median(&mut r), median(&mut c));
    println!(
        "| map 1 GiB in 2 MiB chunks with access, then free | {mr:.2} ms | {mc:.2} ms | - | {:.3}x | - | - |",
        mc / mr
    );
}

fn run(mut cases: Vec<Case<'_>>, rounds: usize) {
    println!("| case | raw | cudrv | cudarc | cudrv/raw | cudarc/raw | cudrv/raw per turn (p25 / p50 / p75) |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for case in &mut cases {
        // Launches and copies in batches of 200, each followed by an untimed synchronise.
        let (batch, mut settle): (u32, Box<dyn FnMut()>) =
            if case.name.starts_with("kernel launch") || case.name.starts_with("copy") {
                (
                    200,
                    Box::new(|| {
                        // SAFETY: no arguments.
                        unsafe { cudrv::p::cuCtxSynchronize() };
                    }),
                )
            } else {
                (u32::MAX, Box::new(|| {}))
            };
        let turns = u32::try_from(rounds).unwrap_or(u32::MAX).saturating_mul(TURNS_PER_ROUND);
        let t = interleaved(&mut case.ops, case.per_round / TURNS_PER_ROUND, turns, batch, &mut *settle);
        let m: Vec<f64> = (0..3).map(|i| t.median(i)).collect();
        let unit = if case.per_round <= 100 { 1000.0 } else { 1.0 };
        let fmt = |ns: f64| if unit > 1.0 { format!("{:.1} µs", ns / unit) } else { format!("{ns:.1} ns") };
        let [lo, mid, hi] = t.ratio_quartiles(1, 0);
        println!(
            "| {} | {} | {} | {} | {:.3}x | {:.3}x | {lo:.3} / {mid:.3} / {hi:.3} |",
            case.name,
            fmt(m[0]),
            fmt(m[1]),
            fmt(m[2]),
            m[1] / m[0],
            m[2] / m[0]
        );
    }
}
