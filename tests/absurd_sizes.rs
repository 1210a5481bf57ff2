//! Absurd sizes (issue 25, item 2: no abort, no panic from any argument): every public
//! function that takes a size or a count is called on the stand-in with 0, 1, its limit,
//! the limit + 1 and the type's largest value, and each answer is checked: `Ok`, an
//! [`Error::InvalidArgument`] whose text names the argument (and the limit, where cudrv
//! checks one), or the driver's own error (out of memory for a device allocation no device
//! has). An abort would end this test binary; a panic is caught and named.
//!
//! How the list below was made (re-run it from the repository root):
//!
//! ```text
//! # every `pub fn` in src/ (not the generated bindings) with an integer parameter,
//! # signatures joined onto one line:
//! find src -name '*.rs' -not -path '*/generated/*' -not -name sys.rs | sort | xargs perl -0777 -ne '
//!   while (/pub (?:const )?(?:unsafe )?fn (\w+)(?:<[^(]*?>)?\(([^{;]*?)\)\s*(?:->[^{;]*)?[{;]/gs) {
//!     my ($n, $p) = ($1, $2);
//!     print "$ARGV: $n\n" if $p =~ /\b(usize|u32|u64|i32|i64|isize|u16|c_int|c_uint|size_t)\b/ }'
//! # and every host allocation sized by an argument or a driver answer:
//! grep -rnE 'vec!\[|with_capacity|reserve|resize|collect|to_vec|String::with_capacity' src \
//!   --include=*.rs | grep -v src/generated
//! ```
//!
//! Each family below lists what the first command finds in its files, and whether and how
//! it is walked here (functions with no size or count, such as an attribute's `i32` value
//! or a stream priority, are listed as "not a size").
//!
//! - devices (`src/device.rs`): `Driver::device(ordinal)` walked (the driver refuses an
//!   ordinal with no device). Names and bus ids use fixed 256-byte buffers.
//! - green contexts (`green.rs`): `SmResource::split(groups, min_count)` (1 to the
//!   resource's SM count groups: cudrv refuses the rest before allocating),
//!   `SmResource::split_count(min_count)` walked; `GreenContext::new(resources)` (found by
//!   the second command: a slice, walked with 0 to 2; more than `u32::MAX` cannot be made
//!   here); `GreenContext::stream(priority)`: not a size.
//! - JIT options (`jit.rs`): `JitOptions::info_log` and `error_log` (at most
//!   `JitOptions::MAX_LOG_BYTES`, the driver's `unsigned int`) through
//!   `Module::load_ptx_with`, `Library::load_ptx_with` and `Linker::new_with`;
//!   `optimization_level`, `max_registers`, `threads_per_block` (values the driver judges)
//!   walked.
//! - modules, libraries, the linker (`module.rs`, `library.rs`, `linker.rs`; second
//!   command): texts and images are slices, walked with 0 and 1 bytes (`from_ptx`,
//!   `add_ptx`, `add_data`); `Linker::complete` copies an image the driver sizes
//!   (reserved fallibly).
//! - occupancy (`occupancy.rs`): `max_active_blocks_per_multiprocessor(block_size,
//!   dynamic_smem_bytes)`, `max_potential_block_size(dynamic_smem_bytes,
//!   block_size_limit)`, `max_potential_block_size_with` (and its closure's answer),
//!   `available_dynamic_shared_memory_per_block(blocks, block_size)`, of a `Function` and
//!   of a `Kernel` (the driver's `int`: cudrv refuses more than `i32::MAX`);
//!   `Launch::max_active_clusters` and `max_potential_cluster_size` (a config's
//!   dimensions) walked.
//! - launches (`launch.rs`, `params.rs`): the argument count of `Launch::arg` ... `launch`
//!   (0, 1, the kernel's count, one more, 40 000), `LaunchConfig::for_num_elems(n)`,
//!   `LaunchConfig::shared_mem(bytes)`, `LaunchConfig::new(grid, block)` and
//!   `Launch::cluster(dims)` (dimensions the driver judges) walked.
//! - device memory (`memory.rs`, `pool.rs`): `DeviceBuffer::alloc(len)`,
//!   `DeviceBuffer::alloc_async(len)`, `MemoryPool::alloc_async(len)` walked (limits: the
//!   device's memory, then `usize::MAX / size_of::<T>()` values);
//!   `MemoryPool::set_release_threshold(bytes)`, `trim_to(bytes)` walked;
//!   `DeviceBuffer::from_raw` and `borrowed` (unsafe: the caller vouches for the length)
//!   not walked; `MemoryPool::import_fd(fd)`: not a size.
//! - host memory (`pinned.rs`, `managed.rs`): `PinnedBuffer::zeroed(len)`,
//!   `zeroed_with(len)`, `ManagedBuffer::zeroed(len)` walked (more than the host can
//!   back: the driver's out of memory).
//! - pitched memory (`pitched.rs`): `PitchedBuffer::alloc(width, height)`,
//!   `from_rows(width, values)`, `row(y)`, `row_mut(y)` walked.
//! - views (`view.rs`): `slice(range)`, `split_at(mid)`, `chunks(size)` walked.
//! - arrays and textures (`array.rs`, `texture.rs`): `ArrayDescriptor::d1/d2/d3(width,
//!   height, depth, channels)` through `Array::new`,
//!   `TextureResource::linear/pitched(channels)` walked.
//! - 2D and 3D copies (`copy3d.rs`): `Copy2D::new(width, height)`, `Copy3D::new(width,
//!   height, depth)`, `from_host`, `to_host`, `from_device`, `to_device` (`pitch`,
//!   `rows`), `src_offset`, `dst_offset` walked (through `run`).
//! - virtual memory (`vmm.rs`): `AddressRange::reserve(size, alignment)`,
//!   `PhysicalMemory::new(size)`, `Mapping::map(offset)`, `GrowableBuffer::new(max_len)`,
//!   `with_chunk_size(max_len, chunk_size)`, `grow(new_len)` walked;
//!   `PhysicalMemory::import_fd(size)` (needs an exported handle) not walked.
//! - kernels' and contexts' settings (`attributes.rs`, `context.rs`, `stream.rs`):
//!   `set_max_dynamic_shared_size_bytes(bytes)` and `param_info(index)` of a `Function` and
//!   of a `Kernel`, `Context::set_limit(limit, value)` walked; `set_attribute(value)`,
//!   `set_preferred_shared_memory_carveout(percent)`, `Stream::with_priority(priority)`,
//!   `StreamPriorityRange::contains(priority)`: not sizes.
//! - graphs (`graph/`): `Graph::add_mem_alloc_node(bytes)` walked, and `Graph::nodes`,
//!   `edges` (sized by the driver's count; second command); the bodies of
//!   `ConditionalKind::Switch` (a count in an enum, which the first command cannot see)
//!   walked with 0 to 2 only: cudrv passes any count to the driver and copies the array
//!   of bodies the driver makes, so a count of `u32::MAX` is not walked here (the
//!   stand-in would make that many graphs) until cudrv checks it; `add_memset_node(value)`,
//!   `GraphExec::set_memset_value(value)`, `conditional_handle(default)`: values, not
//!   sizes; `CopyEnd::host(ptr, len)` (unsafe: the caller vouches) not walked.
//! - the rest: `flags::from_bits_retain`, `version::to_semver/display/require`: not sizes.

mod common;

use std::fmt::Debug;
use std::panic::{catch_unwind, AssertUnwindSafe};

use common::{fake_ptx, standin_driver};
use cudrv::sys::CUresult;
use cudrv::{
    AddressRange, Array, ArrayDescriptor, ArrayFormat, Context, Copy2D, Copy3D, DeviceBuffer, DeviceSlice, Error,
    Graph, GreenContext, GrowableBuffer, JitOptions, LaunchConfig, Library, Limit, Linker, ManagedAttach, Mapping,
    MemoryPool, Module, PhysicalMemory, PinnedBuffer, PitchedBuffer, ShareableHandleTypes, SmResource, Stream,
    TextureResource,
};

const VECTOR_ADD: &str = include_str!("../examples/kernels/vector_add.ptx");

/// A 2D or 3D copy that reaches past the end of one of its ends.
const EXTENT: &str = "extent: the copy reaches past the end of its 64 bytes";

fn context() -> Context {
    common::capture_reports();
    standin_driver().device(0).unwrap().primary_context().unwrap()
}

/// What a call should answer.
#[derive(Clone, Copy, Debug)]
enum Want {
    /// `Ok`.
    Ok,
    /// An `InvalidArgument` whose text has this (the argument's name, its limit).
    Refused(&'static str),
    /// The driver's error with this code.
    Driver(CUresult),
    /// `Ok`, or the driver's error with this code (a limit the host may or may not back).
    OkOr(CUresult),
    /// `Ok`, or an `InvalidArgument` with this text (a size within the limit that this
    /// host may not be able to allocate).
    OkOrRefused(&'static str),
}

/// The checks of one family: each call's answer against what it should be; every
/// mismatch is kept, and all are shown at the end.
#[derive(Default)]
struct Walk {
    wrong: Vec<String>,
    calls: usize,
}

impl Walk {
    /// Runs `call` (named `name`), catching a panic, and checks its answer.
    fn check<T, E: Into<Error>>(&mut self, name: &str, want: Want, call: impl FnOnce() -> Result<T, E>) {
        self.calls += 1;
        let answer = match catch_unwind(AssertUnwindSafe(|| call().map(drop).map_err(Into::into))) {
            Ok(answer) => answer,
            Err(panic) => {
                let text = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                self.wrong.push(format!("{name}: PANICKED: {text}"));
                return;
            }
        };
        let right = match (&want, &answer) {
            (Want::Ok | Want::OkOr(_) | Want::OkOrRefused(_), Ok(())) => true,
            (Want::Refused(text) | Want::OkOrRefused(text), Err(Error::InvalidArgument(e))) => {
                e.to_string().contains(text)
            }
            (Want::Driver(code) | Want::OkOr(code), Err(e)) => e.code() == Some(*code),
            _ => false,
        };
        if !right {
            self.wrong.push(format!("{name}: wanted {want:?}, got {answer:?}"));
        }
    }

    /// Fails with every mismatch.
    fn done(self) {
        assert!(self.calls > 0);
        assert!(self.wrong.is_empty(), "{} of {} calls answered wrong:\n{}", self.wrong.len(), self.calls, {
            self.wrong.join("\n")
        });
    }
}

use CUresult as R;
use Want::{Driver, OkOr, Refused};

#[test]
fn devices() {
    let d = standin_driver();
    let count = d.device_count().unwrap();
    let mut w = Walk::default();
    let invalid = Driver(R::CUDA_ERROR_INVALID_DEVICE);
    for (ordinal, want) in [(0, Want::Ok), (count - 1, Want::Ok), (count, invalid), (usize::MAX, invalid)] {
        w.check(&format!("Driver::device({ordinal})"), want, || d.device(ordinal));
    }
    w.done();
}

#[test]
fn green_contexts() {
    let ctx = context();
    let device = standin_driver().device(0).unwrap();
    let all = SmResource::of_device(&device).unwrap();
    let sms = all.sm_count();
    assert!(sms > 8, "{sms}");
    let mut w = Walk::default();
    for (groups, want) in [
        (0, Refused("groups 0")),
        (1, Want::Ok),
        (sms, Want::Ok),
        (sms + 1, Refused(&*format!("groups {}: a split of {sms} SMs makes 1 to {sms} groups", sms + 1).leak())),
        (u32::MAX, Refused("groups 4294967295")),
    ] {
        w.check(&format!("SmResource::split(groups {groups})"), want, || all.split(&device, groups, 8));
    }
    let none_fits = Driver(R::CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
    for (min_count, want) in
        [(0, Want::Ok), (1, Want::Ok), (sms, Want::Ok), (sms + 1, none_fits), (u32::MAX, none_fits)]
    {
        w.check(&format!("SmResource::split(min_count {min_count})"), want, || all.split(&device, 2, min_count));
        w.check(&format!("SmResource::split_count({min_count})"), want, || all.split_count(&device, min_count));
    }
    let split = all.split(&device, 2, 8).unwrap();
    assert_eq!(split.groups.len(), 2);
    w.check("GreenContext::new(0 resources)", Refused("no resource"), || GreenContext::new(&device, &[]));
    w.check("GreenContext::new(1 resource)", Want::Ok, || GreenContext::new(&device, &split.groups[..1]));
    w.check("GreenContext::new(2 resources)", Want::Ok, || GreenContext::new(&device, &split.groups));
    drop(ctx);
    w.done();
}

#[test]
fn jit_logs_and_options() {
    let ctx = context();
    let d = standin_driver();
    let ptx = fake_ptx(&["k"]);
    let limit = JitOptions::MAX_LOG_BYTES;
    assert_eq!(limit, u32::MAX as usize);
    let mut w = Walk::default();
    for (bytes, ok) in [(0, true), (1, true), (limit, true), (limit + 1, false), (usize::MAX, false)] {
        for log in ["info_log", "error_log"] {
            let options = match log {
                "info_log" => JitOptions::new().info_log(bytes).error_log(0),
                _ => JitOptions::new().error_log(bytes).info_log(0),
            };
            let name = format!("JitOptions::{log}");
            let want = if bytes == limit {
                // 4 GiB, allocated zeroed: fresh pages, touched only where the stand-in
                // writes, so this is quick; a host that cannot reserve it says so.
                Want::OkOrRefused(format!("{name} {bytes} bytes cannot be allocated").leak())
            } else if ok {
                Want::Ok
            } else {
                Refused(&*format!("{name} {bytes} bytes: the driver takes at most 4294967295").leak())
            };
            w.check(&format!("Module::load_ptx_with({log} {bytes})"), want, || {
                Module::load_ptx_with(&ctx, &ptx, &options)
            });
            w.check(&format!("Library::load_ptx_with({log} {bytes})"), want, || {
                Library::load_ptx_with(d, &ptx, &options)
            });
            w.check(&format!("Linker::new_with({log} {bytes})"), want, || Linker::new_with(&ctx, &options));
        }
    }
    // The other options are values the driver judges (the stand-in reads and ignores them).
    for v in [0, 1, u32::MAX] {
        let options = JitOptions::new().optimization_level(v).max_registers(v).threads_per_block(v);
        w.check(&format!("Module::load_ptx_with(level, registers, threads {v})"), Want::Ok, || {
            Module::load_ptx_with(&ctx, &ptx, &options)
        });
    }
    w.done();
}

#[test]
fn module_texts_and_images() {
    let ctx = context();
    let d = standin_driver();
    let mut w = Walk::default();
    let bad = Driver(R::CUDA_ERROR_INVALID_IMAGE);
    for text in ["", "x"] {
        w.check(&format!("Module::from_ptx({} bytes)", text.len()), bad, || Module::from_ptx(&ctx, text));
        // The stand-in loads a library of text it does not know as one with no kernels.
        let library = OkOr(R::CUDA_ERROR_INVALID_IMAGE);
        w.check(&format!("Library::from_ptx({} bytes)", text.len()), library, || Library::from_ptx(d, text));
        let mut linker = Linker::new(&ctx).unwrap();
        w.check(&format!("Linker::add_ptx({} bytes)", text.len()), bad, || linker.add_ptx(text, "t.ptx"));
    }
    let mut linker = Linker::new(&ctx).unwrap();
    // SAFETY: an empty image: the driver reads none of it (the stand-in refuses it).
    w.check("Linker::add_data(0 bytes)", Driver(R::CUDA_ERROR_INVALID_VALUE), || unsafe {
        linker.add_data(cudrv::sys::CUjitInputType::CU_JIT_INPUT_PTX, &[], "none")
    });
    w.done();
}

#[test]
fn occupancy() {
    let ctx = context();
    let module = Module::from_ptx(&ctx, VECTOR_ADD).unwrap();
    let f = module.function("vector_add").unwrap();
    let lib = Library::from_ptx(standin_driver(), VECTOR_ADD).unwrap();
    let k = lib.kernel("vector_add").unwrap();
    let mut w = Walk::default();
    let int = i32::MAX as u32;
    let over = |name: &'static str| Refused(name);
    for (v, big) in [(0, false), (1, false), (int, false), (int + 1, true), (u32::MAX, true)] {
        let want = |ok: Want, name| if big { over(name) } else { ok };
        // Block sizes the device has not: the driver's answer, never a refusal by cudrv. As
        // on the H200 (docs/gpu-runs/h200/occupancy_block_size.txt): a block of 0 is
        // INVALID_VALUE, one above 1024 threads fits 0 times.
        let block = want(if v == 0 { Driver(R::CUDA_ERROR_INVALID_VALUE) } else { Want::Ok }, "block size");
        w.check(&format!("Function::max_active_blocks_per_multiprocessor({v})"), block, || {
            f.max_active_blocks_per_multiprocessor(v, 0, 0)
        });
        w.check(&format!("Kernel::max_active_blocks_per_multiprocessor({v})"), block, || {
            k.max_active_blocks_per_multiprocessor(&ctx, v, 0, 0)
        });
        // A limit of 0 is none; any other is capped at the device's 1024 (the H200).
        let limit = want(Want::Ok, "block size limit");
        w.check(&format!("Function::max_potential_block_size(limit {v})"), limit, || {
            f.max_potential_block_size(0, v, 0)
        });
        w.check(&format!("Kernel::max_potential_block_size(limit {v})"), limit, || {
            k.max_potential_block_size(&ctx, 0, v, 0)
        });
        w.check(&format!("Function::max_potential_block_size_with(limit {v})"), limit, || {
            f.max_potential_block_size_with(|_| 0, v, 0)
        });
        w.check(&format!("Kernel::max_potential_block_size_with(limit {v})"), limit, || {
            k.max_potential_block_size_with(&ctx, |_| 0, v, 0)
        });
        let blocks = want(OkOr(R::CUDA_ERROR_INVALID_VALUE), "block count");
        w.check(&format!("Function::available_dynamic_shared_memory_per_block(blocks {v})"), blocks, || {
            f.available_dynamic_shared_memory_per_block(v, 128)
        });
        w.check(&format!("Kernel::available_dynamic_shared_memory_per_block(blocks {v})"), blocks, || {
            k.available_dynamic_shared_memory_per_block(&ctx, v, 128)
        });
        let size = want(OkOr(R::CUDA_ERROR_INVALID_VALUE), "block size");
        w.check(&format!("Function::available_dynamic_shared_memory_per_block(block size {v})"), size, || {
            f.available_dynamic_shared_memory_per_block(1, v)
        });
    }
    // Dynamic shared memory is the driver's `size_t`: any value goes to it.
    for bytes in [0, 1, usize::MAX] {
        let want = OkOr(R::CUDA_ERROR_INVALID_VALUE);
        w.check(&format!("Function::max_active_blocks_per_multiprocessor(smem {bytes})"), want, || {
            f.max_active_blocks_per_multiprocessor(128, bytes, 0)
        });
        w.check(&format!("Function::max_potential_block_size(smem {bytes})"), want, || {
            f.max_potential_block_size(bytes, 0, 0)
        });
        w.check(&format!("Function::max_potential_block_size_with(closure {bytes})"), want, || {
            f.max_potential_block_size_with(|_| bytes, 0, 0)
        });
    }
    let stream = Stream::new(&ctx, 0).unwrap();
    for v in [0, 1, u32::MAX] {
        let config = LaunchConfig::new((v, 1, 1), (v, 1, 1)).shared_mem(v);
        let want = OkOr(R::CUDA_ERROR_INVALID_VALUE);
        let launch = f.builder(&stream);
        w.check(&format!("Launch::max_active_clusters(dims {v})"), want, || launch.max_active_clusters(config));
        w.check(&format!("Launch::max_potential_cluster_size(dims {v})"), want, || {
            launch.max_potential_cluster_size(config)
        });
    }
    w.done();
}

#[test]
fn launches() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let module = Module::from_ptx(&ctx, VECTOR_ADD).unwrap();
    let f = module.function("vector_add").unwrap();
    let a = DeviceBuffer::from_slice(&ctx, &[1.0f32; 4]).unwrap();
    let n = 4i32;
    let config = LaunchConfig::for_num_elems(4);
    let mut w = Walk::default();
    // The kernel takes 4 parameters: any other count is refused before the launch.
    for count in [0usize, 1, 4, 5, 40_000] {
        let want = match count {
            4 => Want::Ok,
            _ => Refused(&*format!("expected 4 parameters, got {count}").leak()),
        };
        let mut launch = f.builder(&stream);
        for i in 0..count {
            match i {
                3 => launch.arg(&n),
                _ => launch.arg(&a),
            };
        }
        // SAFETY: refused before the launch, except the right count (a, a, a, n: the
        // kernel adds `a` to itself, 4 values).
        w.check(&format!("Launch::launch({count} arguments)"), want, || unsafe { launch.launch(config) });
    }
    stream.synchronize().unwrap();
    // Configurations: pure arithmetic, for every size.
    for n in [0, 1, 256, 257, u32::MAX] {
        let c = LaunchConfig::for_num_elems(n);
        assert!(c.grid.0 as u64 * c.block.0 as u64 >= n as u64 && c.block.0 <= 256, "{n}: {c:?}");
    }
    assert_eq!(LaunchConfig::for_num_elems(0).shared_mem(u32::MAX).shared_mem_bytes, u32::MAX);
    // Dimensions the device has not: the driver's error, nothing launched (the kernel's
    // values are checked unchanged below).
    let fake = Module::load_ptx(&ctx, &fake_ptx(&["nothing"])).unwrap().function("nothing").unwrap();
    for (grid, block) in [((u32::MAX, 1, 1), (1, 1, 1)), ((1, u32::MAX, 1), (1, 1, 1)), ((1, 1, 1), (u32::MAX, 1, 1))] {
        let config = LaunchConfig::new(grid, block);
        let mut launch = fake.builder(&stream);
        // SAFETY: the fake kernel takes no parameters and touches nothing.
        w.check(
            &format!("Launch::launch(grid {grid:?}, block {block:?})"),
            Driver(R::CUDA_ERROR_INVALID_VALUE),
            || unsafe { launch.launch(config) },
        );
    }
    for dims in [(0, 0, 0), (u32::MAX, u32::MAX, u32::MAX)] {
        let mut launch = fake.builder(&stream);
        launch.cluster(dims);
        // SAFETY: as above.
        w.check(&format!("Launch::cluster({dims:?})"), Driver(R::CUDA_ERROR_INVALID_CLUSTER_SIZE), || unsafe {
            launch.launch(LaunchConfig::new((1, 1, 1), (1, 1, 1)))
        });
    }
    stream.synchronize().unwrap();
    assert_eq!(a.to_vec().unwrap(), [2.0; 4], "the one right launch ran, once");
    w.done();
}

#[test]
fn device_memory() {
    // A world of its own: an allocation of all the device's memory (which the stand-in
    // makes where the host lets it reserve that much) leaves the other tests' alone.
    let world = cudrv_standin::StandIn::isolated(cudrv::table::HEADER_VERSION).unwrap();
    let d: &'static cudrv::Driver = Box::leak(Box::new(world.load(Default::default()).unwrap()));
    d.init().unwrap();
    let ctx = d.device(0).unwrap().primary_context().unwrap();
    let stream = Stream::new(&ctx, 0).unwrap();
    let pool = MemoryPool::new(&ctx, cudrv::ShareableHandleTypes::NONE).unwrap();
    let total = d.device(0).unwrap().total_memory().unwrap();
    let oom = Driver(R::CUDA_ERROR_OUT_OF_MEMORY);
    // Values of 8 bytes: past `usize::MAX / 8` the byte count overflows.
    let most = usize::MAX / 8;
    let cases = [
        (0, Want::Ok),
        (1, Want::Ok),
        (total / 8, OkOr(R::CUDA_ERROR_OUT_OF_MEMORY)),
        (total / 8 + 1, oom),
        (most, oom),
        (most + 1, Refused("values of 8 bytes overflow usize")),
        (usize::MAX, Refused("18446744073709551615 values of 8 bytes overflow usize")),
    ];
    let mut w = Walk::default();
    for (len, want) in cases {
        w.check(&format!("DeviceBuffer::alloc({len})"), want, || DeviceBuffer::<u64>::alloc(&ctx, len));
        w.check(&format!("DeviceBuffer::alloc_async({len})"), want, || DeviceBuffer::<u64>::alloc_async(&stream, len));
        w.check(&format!("MemoryPool::alloc_async({len})"), want, || pool.alloc_async::<u64>(&stream, len));
    }
    stream.synchronize().unwrap();
    for bytes in [0, 1, u64::MAX] {
        w.check(&format!("MemoryPool::set_release_threshold({bytes})"), Want::Ok, || pool.set_release_threshold(bytes));
    }
    for bytes in [0, 1, usize::MAX] {
        w.check(&format!("MemoryPool::trim_to({bytes})"), Want::Ok, || pool.trim_to(bytes));
    }
    w.done();
}

#[test]
fn host_memory() {
    let ctx = context();
    let oom = Driver(R::CUDA_ERROR_OUT_OF_MEMORY);
    let most = usize::MAX / 8;
    // 2^62 bytes: more than any host backs (the limit is the host's memory).
    let cases = [
        (0, Want::Ok),
        (1, Want::Ok),
        (1 << 59, oom),
        (most, oom),
        (most + 1, Refused("values of 8 bytes overflow")),
        (usize::MAX, Refused("18446744073709551615 values of 8 bytes overflow")),
    ];
    let mut w = Walk::default();
    for (len, want) in cases {
        w.check(&format!("PinnedBuffer::zeroed({len})"), want, || PinnedBuffer::<u64>::zeroed(&ctx, len));
        w.check(&format!("PinnedBuffer::zeroed_with({len})"), want, || PinnedBuffer::<u64>::zeroed_with(&ctx, len, 0));
        w.check(&format!("ManagedBuffer::zeroed({len})"), want, || {
            cudrv::ManagedBuffer::<u64>::zeroed(&ctx, len, ManagedAttach::Global)
        });
    }
    w.done();
}

#[test]
fn pitched_memory_and_views() {
    let ctx = context();
    let mut w = Walk::default();
    for (width, height, want) in [
        (0, 0, Want::Ok),
        (1, 1, Want::Ok),
        (1 << 20, 1 << 20, OkOr(R::CUDA_ERROR_OUT_OF_MEMORY)),
        (usize::MAX, 1, Refused("width: 18446744073709551615 values of 8 bytes overflow usize")),
        // The driver computes the rows' bytes.
        (1, usize::MAX, Driver(R::CUDA_ERROR_OUT_OF_MEMORY)),
        (usize::MAX, usize::MAX, Refused("width: 18446744073709551615 values of 8 bytes overflow usize")),
    ] {
        w.check(&format!("PitchedBuffer::alloc({width}, {height})"), want, || {
            PitchedBuffer::<u64>::alloc(&ctx, width, height)
        });
    }
    let rows = |width: usize| Refused(format!("4 values are not whole rows of {width}").leak());
    for (width, want) in [(0, rows(0)), (1, Want::Ok), (4, Want::Ok), (5, rows(5)), (usize::MAX, rows(usize::MAX))] {
        w.check(&format!("PitchedBuffer::from_rows(width {width})"), want, || {
            PitchedBuffer::from_rows(&ctx, width, &[1u64, 2, 3, 4])
        });
    }
    let mut p = PitchedBuffer::<u64>::alloc(&ctx, 4, 3).unwrap();
    for (y, want) in [
        (0, Want::Ok),
        (1, Want::Ok),
        (2, Want::Ok),
        (3, Refused("row 3 is past the last of 3 rows")),
        (usize::MAX, Refused("row 18446744073709551615 is past")),
    ] {
        w.check(&format!("PitchedBuffer::row({y})"), want, || p.row(y).map(drop));
        w.check(&format!("PitchedBuffer::row_mut({y})"), want, || p.row_mut(y).map(drop));
    }
    let buffer = DeviceBuffer::<u64>::alloc(&ctx, 8).unwrap();
    let view = buffer.as_view();
    // A view of 8 values: its limit is 8.
    for n in [0, 1, 8, 9, usize::MAX] {
        let (range, split) = match n {
            0..=8 => (Want::Ok, Want::Ok),
            _ => (
                Refused("is out of bounds of 8 values"),
                Refused(format!("split point {n} is past the end of 8 values").leak()),
            ),
        };
        w.check(&format!("DeviceView::slice(..{n})"), range, || view.slice(..n).map(drop));
        w.check(&format!("DeviceView::slice({n}..)"), range, || view.slice(n..).map(drop));
        w.check(&format!("DeviceView::split_at({n})"), split, || view.split_at(n).map(drop));
    }
    for (size, want) in
        [(0, Refused("a chunk size of 0 values")), (1, Want::Ok), (8, Want::Ok), (9, Want::Ok), (usize::MAX, Want::Ok)]
    {
        w.check(&format!("DeviceView::chunks({size})"), want, || view.chunks(size).map(|c| c.count()));
    }
    w.done();
}

#[test]
fn arrays_textures_and_copies() {
    let ctx = context();
    let mut w = Walk::default();
    let f32x1 = |width, height, depth| ArrayDescriptor::d3(width, height, depth, ArrayFormat::F32, 1);
    // Extents are the driver's to judge (its limits, then its memory); channels are 1, 2
    // or 4 (cudrv checks).
    let oom = Driver(R::CUDA_ERROR_OUT_OF_MEMORY);
    let channels = |n: u32| Refused(format!("channels: {n} (an element has 1, 2 or 4 channels)").leak());
    for (desc, want) in [
        (ArrayDescriptor::d1(0, ArrayFormat::F32, 1), Refused("width: an array needs at least one element")),
        (ArrayDescriptor::d1(1, ArrayFormat::F32, 1), Want::Ok),
        (ArrayDescriptor::d1(usize::MAX, ArrayFormat::F32, 1), oom),
        (ArrayDescriptor::d2(1, usize::MAX, ArrayFormat::F32, 1), oom),
        (f32x1(1, 1, usize::MAX), oom),
        (f32x1(usize::MAX, usize::MAX, usize::MAX), oom),
        (ArrayDescriptor::d1(1, ArrayFormat::F32, 0), channels(0)),
        (ArrayDescriptor::d1(1, ArrayFormat::F32, 4), Want::Ok),
        (ArrayDescriptor::d1(1, ArrayFormat::F32, 5), channels(5)),
        (ArrayDescriptor::d1(1, ArrayFormat::F32, u32::MAX), channels(u32::MAX)),
    ] {
        w.check(&format!("Array::new({desc:?})"), want, || Array::new(&ctx, desc));
    }
    // Texture channels: 1, 2 or 4, each of the format, making up one value of the memory.
    let buffer = DeviceBuffer::<f32>::alloc(&ctx, 16).unwrap();
    let quads = DeviceBuffer::<[f32; 4]>::alloc(&ctx, 4).unwrap();
    let texture = Refused("TextureResource::linear: invalid argument: channels");
    for (n, want) in [(0, texture), (1, Want::Ok), (4, Want::Ok), (5, texture), (u32::MAX, texture)] {
        w.check(&format!("TextureResource::linear(channels {n})"), want, || match n {
            4 => TextureResource::linear(&quads, ArrayFormat::F32, n),
            _ => TextureResource::linear(&buffer, ArrayFormat::F32, n),
        });
    }
    let pitched = PitchedBuffer::<f32>::alloc(&ctx, 4, 4).unwrap();
    let texture = Refused("TextureResource::pitched: invalid argument: channels");
    for (n, want) in [(0, texture), (1, Want::Ok), (5, texture), (u32::MAX, texture)] {
        w.check(&format!("TextureResource::pitched(channels {n})"), want, || {
            TextureResource::pitched(&pitched, ArrayFormat::F32, n)
        });
    }
    // A copy of up to 4 x 4 values between a host slice and a device buffer of 16.
    let host = [0u32; 16];
    let mut dev = DeviceBuffer::<u32>::zeroed(&ctx, 16).unwrap();
    for (width, height, want) in [
        (0, 0, Want::Ok),
        (1, 1, Want::Ok),
        (4, 4, Want::Ok),
        (5, 4, Refused("source pitch: 16 bytes is less than x offset + width (20 bytes)")),
        (4, 5, Refused(EXTENT)),
        (usize::MAX, 1, Refused("width: 18446744073709551615 x 4 overflows usize")),
        (1, usize::MAX, Refused(EXTENT)),
    ] {
        w.check(&format!("Copy2D::new({width}, {height})"), want, || {
            Copy2D::new(width, height).src_host(&host, 4).dst_device(&mut dev, 4).run()
        });
    }
    for (pitch, want) in [
        (0, Refused("source pitch: 0 bytes is less than")),
        (4, Want::Ok),
        (5, Refused(EXTENT)),
        (usize::MAX, Refused("source pitch: 18446744073709551615 x 4 overflows usize")),
    ] {
        w.check(&format!("Copy2D::src_host(pitch {pitch})"), want, || {
            Copy2D::new(4, 4).src_host(&host, pitch).dst_device(&mut dev, 4).run()
        });
    }
    for (x, y, want) in [
        (0, 0, Want::Ok),
        (1, 1, Refused("pitch: 16 bytes is less than x offset + width (20 bytes)")),
        (usize::MAX, 0, Refused("x offset: 18446744073709551615 x 4 overflows usize")),
        (0, usize::MAX, Refused("y offset overflows")),
    ] {
        w.check(&format!("Copy2D::src_offset({x}, {y})"), want, || {
            Copy2D::new(4, 4).src_host(&host, 4).dst_device(&mut dev, 4).src_offset(x, y).run()
        });
        w.check(&format!("Copy2D::dst_offset({x}, {y})"), want, || {
            Copy2D::new(4, 4).src_host(&host, 4).dst_device(&mut dev, 4).dst_offset(x, y).run()
        });
    }
    for (width, height, depth, want) in [
        (0, 0, 0, Want::Ok),
        (1, 1, 1, Want::Ok),
        (2, 2, 4, Want::Ok),
        (2, 2, 5, Refused(EXTENT)),
        (usize::MAX, 1, 1, Refused("width: 18446744073709551615 x 4 overflows usize")),
        (
            1,
            usize::MAX,
            usize::MAX,
            Refused("height: 18446744073709551615 rows (y offset + height) past its 2 rows per slice"),
        ),
    ] {
        w.check(&format!("Copy3D::new({width}, {height}, {depth})"), want, || {
            Copy3D::new(width, height, depth).src_host(&host, 2, 2).dst_device(&mut dev, 2, 2).run()
        });
    }
    let src = DeviceBuffer::<u32>::zeroed(&ctx, 16).unwrap();
    let mut back = [0u32; 16];
    for (pitch, want) in [
        (0, Refused("pitch: 0 bytes is less than")),
        (4, Want::Ok),
        (5, Refused(EXTENT)),
        (usize::MAX, Refused("pitch: 18446744073709551615 x 4 overflows usize")),
    ] {
        w.check(&format!("Copy2D::dst_host(pitch {pitch})"), want, || {
            Copy2D::new(4, 4).src_device(&src, 4).dst_host(&mut back, pitch).run()
        });
        w.check(&format!("Copy2D::src_device(pitch {pitch})"), want, || {
            Copy2D::new(4, 4).src_device(&src, pitch).dst_device(&mut dev, 4).run()
        });
    }
    // 2 slices of `rows` rows of pitch 2 in 16 values: at most 6 rows apart.
    for (rows, want) in [
        (0, Refused("past its 0 rows per slice")),
        (2, Want::Ok),
        (6, Want::Ok),
        (7, Refused(EXTENT)),
        (usize::MAX, Refused(EXTENT)),
    ] {
        w.check(&format!("Copy3D::src_host(rows {rows})"), want, || {
            Copy3D::new(2, 2, 2).src_host(&host, 2, rows).dst_device(&mut dev, 2, 2).run()
        });
        w.check(&format!("Copy3D::dst_host(rows {rows})"), want, || {
            Copy3D::new(2, 2, 2).src_device(&src, 2, 2).dst_host(&mut back, 2, rows).run()
        });
        w.check(&format!("Copy3D::src_device(rows {rows})"), want, || {
            Copy3D::new(2, 2, 2).src_device(&src, 2, rows).dst_device(&mut dev, 2, 2).run()
        });
        w.check(&format!("Copy3D::dst_device(rows {rows})"), want, || {
            Copy3D::new(2, 2, 2).src_device(&src, 2, 2).dst_device(&mut dev, 2, rows).run()
        });
    }
    for (pitch, want) in [
        (0, Refused("pitch: 0 bytes is less than")),
        (2, Want::Ok),
        (usize::MAX, Refused("pitch: 18446744073709551615 x 4 overflows usize")),
    ] {
        w.check(&format!("Copy3D::src_host(pitch {pitch})"), want, || {
            Copy3D::new(2, 2, 2).src_host(&host, pitch, 2).dst_device(&mut dev, 2, 2).run()
        });
        w.check(&format!("Copy3D::dst_device(pitch {pitch})"), want, || {
            Copy3D::new(2, 2, 2).src_host(&host, 2, 2).dst_device(&mut dev, pitch, 2).run()
        });
    }
    for (x, want) in [(0, Want::Ok), (usize::MAX, Refused("x offset: 18446744073709551615 x 4 overflows usize"))] {
        w.check(&format!("Copy3D::src_offset({x}, {x}, {x})"), want, || {
            Copy3D::new(2, 2, 2).src_host(&host, 2, 2).dst_device(&mut dev, 2, 2).src_offset(x, x, x).run()
        });
        w.check(&format!("Copy3D::dst_offset({x}, {x}, {x})"), want, || {
            Copy3D::new(2, 2, 2).src_host(&host, 2, 2).dst_device(&mut dev, 2, 2).dst_offset(x, x, x).run()
        });
    }
    w.done();
}

#[test]
fn virtual_memory() {
    let ctx = context();
    let g = PhysicalMemory::granularity(&ctx.device(), ShareableHandleTypes::NONE, false).unwrap();
    let invalid = Driver(R::CUDA_ERROR_INVALID_VALUE);
    let mut w = Walk::default();
    for (size, want) in [(0, invalid), (1, invalid), (g, Want::Ok), (g + 1, invalid), (usize::MAX, invalid)] {
        w.check(&format!("AddressRange::reserve({size})"), want, || AddressRange::reserve(&ctx, size, 0));
        w.check(&format!("PhysicalMemory::new({size})"), want, || {
            PhysicalMemory::new(&ctx.device(), size, ShareableHandleTypes::NONE)
        });
    }
    let huge = usize::MAX - g + 1;
    w.check("PhysicalMemory::new(the largest multiple)", Driver(R::CUDA_ERROR_OUT_OF_MEMORY), || {
        PhysicalMemory::new(&ctx.device(), huge, ShareableHandleTypes::NONE)
    });
    // The stand-in takes any alignment it can meet; a GPU's driver judges it.
    let some = OkOr(R::CUDA_ERROR_INVALID_VALUE);
    for (alignment, want) in [(0, Want::Ok), (1, some), (g, Want::Ok), (usize::MAX, invalid)] {
        w.check(&format!("AddressRange::reserve(alignment {alignment})"), want, || {
            AddressRange::reserve(&ctx, g, alignment)
        });
    }
    let range = AddressRange::reserve(&ctx, 2 * g, 0).unwrap();
    let memory = PhysicalMemory::new(&ctx.device(), g, ShareableHandleTypes::NONE).unwrap();
    for (offset, want) in
        [(0, Want::Ok), (g, Want::Ok), (g + 1, Refused("do not fit")), (usize::MAX, Refused("do not fit"))]
    {
        w.check(&format!("Mapping::map(offset {offset})"), want, || Mapping::map(&range, offset, &memory));
    }
    // The limit: the most values whose bytes, rounded up to whole chunks of the
    // recommended granularity, fit in usize; one more overflows.
    let chunk = PhysicalMemory::granularity(&ctx.device(), ShareableHandleTypes::NONE, true).unwrap();
    let most = usize::MAX / chunk * chunk / 8;
    for (max_len, want) in [
        (0, Want::Ok),
        (1, Want::Ok),
        (most, OkOr(R::CUDA_ERROR_OUT_OF_MEMORY)),
        (most + 1, Refused("overflow usize")),
        (usize::MAX, Refused("overflow usize")),
    ] {
        w.check(&format!("GrowableBuffer::new({max_len})"), want, || GrowableBuffer::<u64>::new(&ctx, max_len));
    }
    for (chunk, want) in
        [(0, Refused("chunk size of 0")), (g, Want::Ok), (usize::MAX, OkOr(R::CUDA_ERROR_INVALID_VALUE))]
    {
        w.check(&format!("GrowableBuffer::with_chunk_size({chunk})"), want, || {
            GrowableBuffer::<u64>::with_chunk_size(&ctx, 16, chunk)
        });
    }
    let mut growable = GrowableBuffer::<u64>::with_chunk_size(&ctx, 2 * g / 8, g).unwrap();
    let max = growable.max_len();
    for (len, want) in
        [(0, Want::Ok), (1, Want::Ok), (max, Want::Ok), (max + 1, Refused("exceed")), (usize::MAX, Refused("exceed"))]
    {
        w.check(&format!("GrowableBuffer::grow({len})"), want, || growable.grow(len));
    }
    assert_eq!(growable.len(), max);
    w.done();
}

#[test]
fn settings_and_graphs() {
    let ctx = context();
    let module = Module::from_ptx(&ctx, VECTOR_ADD).unwrap();
    let f = module.function("vector_add").unwrap();
    let lib = Library::from_ptx(standin_driver(), VECTOR_ADD).unwrap();
    let k = lib.kernel("vector_add").unwrap();
    let invalid = Driver(R::CUDA_ERROR_INVALID_VALUE);
    let mut w = Walk::default();
    let device = standin_driver().device(0).unwrap();
    for (bytes, want) in [(0, Want::Ok), (1, Want::Ok), (usize::MAX, invalid)] {
        w.check(&format!("Function::set_max_dynamic_shared_size_bytes({bytes})"), want, || {
            f.set_max_dynamic_shared_size_bytes(bytes)
        });
        w.check(&format!("Kernel::set_max_dynamic_shared_size_bytes({bytes})"), want, || {
            k.set_max_dynamic_shared_size_bytes(bytes, &device)
        });
    }
    for (index, want) in [(0, Want::Ok), (3, Want::Ok), (4, invalid), (usize::MAX, invalid)] {
        w.check(&format!("Function::param_info({index})"), want, || f.param_info(index));
        w.check(&format!("Kernel::param_info({index})"), want, || k.param_info(&ctx, index));
    }
    for (limit, value, want) in [
        (Limit::StackSize, 0, Want::Ok),
        (Limit::StackSize, 1024, Want::Ok),
        // The driver's limits (the stand-in takes any value and allocates nothing).
        (Limit::StackSize, usize::MAX, OkOr(R::CUDA_ERROR_INVALID_VALUE)),
        (Limit::PrintfFifoSize, usize::MAX, OkOr(R::CUDA_ERROR_INVALID_VALUE)),
        (Limit::MallocHeapSize, usize::MAX, OkOr(R::CUDA_ERROR_INVALID_VALUE)),
    ] {
        w.check(&format!("Context::set_limit({limit:?}, {value})"), want, || ctx.set_limit(limit, value));
    }
    // Restore what the walk may have changed in the shared primary context.
    ctx.set_limit(Limit::StackSize, 1024).unwrap();
    let graph = Graph::new(&ctx).unwrap();
    // As on the H200 (`graph_memory.alloc_node_zero_size`, `alloc_node_huge`): 0 bytes are
    // refused, more than the device has is out of memory (no host allocation on the way).
    let huge = Driver(R::CUDA_ERROR_OUT_OF_MEMORY);
    for (bytes, want) in [(0, invalid), (1, Want::Ok), (usize::MAX, huge)] {
        w.check(&format!("Graph::add_mem_alloc_node({bytes})"), want, || graph.add_mem_alloc_node(&[], bytes));
    }
    let condition = graph.conditional_handle(None).unwrap();
    for (bodies, want) in [(0, invalid), (1, Want::Ok), (2, Want::Ok)] {
        let kind = cudrv::ConditionalKind::Switch { bodies };
        w.check(&format!("Graph::add_conditional_node(Switch {{ bodies: {bodies} }})"), want, || {
            graph
                .add_conditional_node(&[], condition, kind)
                .map(|(_, graphs)| assert_eq!(graphs.len(), bodies as usize))
        });
    }
    w.check("Graph::nodes", Want::Ok, || graph.nodes());
    w.check("Graph::edges", Want::Ok, || graph.edges());
    w.done();
}
