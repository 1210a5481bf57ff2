//! Calls the stand-in driver's entry points (through cudrv's raw table, as a C program
//! calls the exported symbols) in a sequence the input decides, with random scalars and
//! handles that are live, destroyed, null or garbage. Out-pointers are valid or null; a
//! pointer the driver reads or writes as the caller's memory (a copy's host side, a name,
//! an image, a struct of parameters) is always a valid buffer of ours, as large as the
//! call says. Kernels launched are the fixed ones below (PTX without loops, fake images):
//! fuzzed images are loaded and queried, never run. Any status is an answer; a panic, an
//! abort, a hang or an allocation beyond the fuzzer's limit is a finding.
#![no_main]

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::ptr::{null, null_mut};
use std::sync::OnceLock;

use cudrv::sys::*;
use cudrv::Driver;
use cudrv_fuzz::Input;
use cudrv_standin::StandIn;
use libfuzzer_sys::fuzz_target;

/// The versions emulated, one isolated world each (the input's first byte picks one).
const VERSIONS: [u32; 4] = [11030, 12000, 12040, 13050];
/// Calls made for one input, at most.
const MAX_CALLS: usize = 64;
/// Host memory of ours that copies may read and write (`HOST` bytes).
const HOST: usize = 64 * 1024;
/// Small sizes: allocations and copies up to this many bytes (and boundary values).
const SMALL: usize = 64 * 1024;

/// A kernel without loops: `x[i] += 1` for the threads below `n`.
const PTX_ADD: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
.visible .entry add_one(.param .u64 x, .param .u32 n)\n{\n\
.reg .pred %p<2>;\n.reg .b32 %r<5>;\n.reg .b64 %rd<4>;\n\
ld.param.u64 %rd1, [x];\nld.param.u32 %r1, [n];\nmov.u32 %r2, %tid.x;\n\
setp.ge.u32 %p1, %r2, %r1;\n@%p1 bra $L_end;\ncvta.to.global.u64 %rd2, %rd1;\n\
mul.wide.u32 %rd3, %r2, 4;\nadd.s64 %rd2, %rd2, %rd3;\nld.global.u32 %r3, [%rd2];\n\
add.s32 %r4, %r3, 1;\nst.global.u32 [%rd2], %r4;\n$L_end:\nret;\n}\n\0";

/// Each emulated version's world and a driver over it.
fn worlds() -> &'static [(StandIn, Driver)] {
    static WORLDS: OnceLock<Vec<(StandIn, Driver)>> = OnceLock::new();
    WORLDS.get_or_init(|| {
        VERSIONS
            .iter()
            .filter_map(|&v| {
                let s = StandIn::isolated(v)?;
                Some((s, s.load(Default::default()).ok()?))
            })
            .collect()
    })
}

/// A host function that does nothing.
unsafe extern "C" fn nothing(_: *mut c_void) {}

/// The handles made so far (raw values; destroyed ones stay, to be used again).
#[derive(Default)]
struct Pools {
    contexts: Vec<u64>,
    streams: Vec<u64>,
    events: Vec<u64>,
    memory: Vec<u64>,
    host: Vec<u64>,
    modules: Vec<u64>,
    /// Functions of the fixed images (launchable).
    kernels: Vec<u64>,
    /// Functions of any image (fuzzed ones too).
    functions: Vec<u64>,
    graphs: Vec<u64>,
    nodes: Vec<u64>,
    execs: Vec<u64>,
    arrays: Vec<u64>,
    libraries: Vec<u64>,
    pools: Vec<u64>,
    physical: Vec<u64>,
    reserved: Vec<u64>,
}

/// One input's run: its decoder, its handles and our buffers.
struct Run<'a> {
    input: Input<'a>,
    pools: Pools,
    /// Host memory copies read and write.
    host: Vec<u8>,
    /// Parameter bytes for launches and their pointers (every pointer to `params`).
    params: Vec<u8>,
    param_pointers: Vec<*mut c_void>,
}

impl Run<'_> {
    /// A handle: mostly one from `pool`, else null or a garbage value.
    fn pick(&mut self, pool: fn(&Pools) -> &Vec<u64>) -> u64 {
        match self.input.u8() % 8 {
            0 => 0,
            1 => self.input.u64(),
            n => {
                let p = pool(&self.pools);
                p.get(usize::from(n) * 37 % p.len().max(1)).copied().unwrap_or(0)
            }
        }
    }

    /// A stream: one of ours, a default stream, null or garbage.
    fn stream(&mut self) -> CUstream {
        match self.input.u8() % 8 {
            0 => 1 as CUstream,
            1 => 2 as CUstream,
            _ => self.pick(|p| &p.streams) as CUstream,
        }
    }

    /// A device ordinal: mostly 0 or 1, sometimes out of range.
    fn device(&mut self) -> CUdevice {
        match self.input.u8() % 8 {
            0 => -1,
            1 => c_int::MAX,
            2 => 8,
            n => c_int::from(n % 2),
        }
    }

    /// A device address: one of ours (possibly at an offset), null or garbage.
    fn address(&mut self) -> CUdeviceptr {
        let base = self.pick(|p| &p.memory);
        match self.input.u8() % 4 {
            0 => base.wrapping_add(u64::from(self.input.u8())),
            _ => base,
        }
    }

    /// `slot`, or null one time in eight.
    fn out<T>(&mut self, slot: &mut T) -> *mut T {
        if self.input.u8() & 7 == 0 {
            null_mut()
        } else {
            slot
        }
    }

    /// A NUL-terminated name: a known one or fuzzed text.
    fn name(&mut self) -> Vec<u8> {
        let known: [&str; 5] = ["add_one", "k", "fault", "counter", "cuMemAlloc"];
        let mut name = match self.input.u8() % 4 {
            0 => {
                let len = self.input.below(16);
                (0..len).map(|_| self.input.u8()).filter(|&b| b != 0).collect()
            }
            _ => known.get(self.input.below(known.len())).map_or(vec![], |k| k.as_bytes().to_vec()),
        };
        name.push(0);
        name
    }

    /// A module image: the fixed PTX, a fake image, or fuzzed bytes (NUL-terminated and
    /// padded); whether its kernels may run.
    fn image(&mut self) -> (Vec<u8>, bool) {
        match self.input.u8() % 4 {
            0 => (PTX_ADD.as_bytes().to_vec(), true),
            1 => {
                let mut image = cudrv_standin::fake_image(&["k", "fault"]);
                image.push(0);
                (image, true)
            }
            _ => {
                let len = usize::from(self.input.u8()) * 4;
                let mut image: Vec<u8> = (0..len).map(|_| self.input.u8()).collect();
                image.extend([0u8; 4096]);
                (image, false)
            }
        }
    }

    /// A grid or block dimension: small, or beyond the limits (refused without running).
    fn dim(&mut self, small: u32) -> c_uint {
        match self.input.u8() % 8 {
            0 => 0,
            1 => c_uint::MAX,
            2 => 1 << 31,
            3 => 65536,
            n => 1 + u32::from(n) % small,
        }
    }

    /// One call, chosen by the next byte. Returns the status (ignored: any is fine).
    unsafe fn call(&mut self, p: cudrv::P<'_>) -> CUresult {
        let op = self.input.u8();
        let mut word = 0u64;
        let mut int: c_int = 0;
        let mut size = 0usize;
        let mut handle: *mut c_void = null_mut();
        match op % 64 {
            0 => p.cuInit(self.input.u32() % 3),
            1 => p.cuDeviceGet(self.out(&mut int), self.device()),
            2 => p.cuDeviceGetCount(self.out(&mut int)),
            3 => {
                let mut name = [0 as c_char; 256];
                let len = (self.input.u32() as i32) % 257;
                let name_ptr = if self.input.u8() & 7 == 0 { null_mut() } else { name.as_mut_ptr() };
                p.cuDeviceGetName(name_ptr, len, self.device())
            }
            4 => {
                let attribute = CUdevice_attribute(self.input.u32() % 160);
                p.cuDeviceGetAttribute(self.out(&mut int), attribute, self.device())
            }
            5 => p.cuDeviceTotalMem(self.out(&mut size), self.device()),
            6 => {
                let r = p.cuCtxCreate(self.out(&mut handle).cast(), null_mut(), self.input.u32() % 64, self.device());
                self.pools.contexts.push(handle as u64);
                r
            }
            7 => p.cuCtxDestroy(self.pick(|p| &p.contexts) as CUcontext),
            8 => p.cuCtxSetCurrent(self.pick(|p| &p.contexts) as CUcontext),
            9 => p.cuCtxPushCurrent(self.pick(|p| &p.contexts) as CUcontext),
            10 => p.cuCtxPopCurrent(self.out(&mut handle).cast()),
            11 => {
                let r = p.cuDevicePrimaryCtxRetain(self.out(&mut handle).cast(), self.device());
                self.pools.contexts.push(handle as u64);
                r
            }
            12 => p.cuDevicePrimaryCtxRelease(self.device()),
            13 => p.cuDevicePrimaryCtxReset(self.device()),
            14 => p.cuCtxSynchronize(),
            15 => {
                let r = p.cuStreamCreate(self.out(&mut handle).cast(), self.input.u32() % 4);
                self.pools.streams.push(handle as u64);
                r
            }
            16 => p.cuStreamDestroy(self.stream()),
            17 => p.cuStreamSynchronize(self.stream()),
            18 => p.cuStreamQuery(self.stream()),
            19 => {
                let r = p.cuEventCreate(self.out(&mut handle).cast(), self.input.u32() % 16);
                self.pools.events.push(handle as u64);
                r
            }
            20 => p.cuEventRecord(self.pick(|p| &p.events) as CUevent, self.stream()),
            21 => p.cuEventSynchronize(self.pick(|p| &p.events) as CUevent),
            22 => p.cuEventDestroy(self.pick(|p| &p.events) as CUevent),
            23 => {
                let mut ms = 0f32;
                let (a, b) = (self.pick(|p| &p.events), self.pick(|p| &p.events));
                p.cuEventElapsedTime(self.out(&mut ms), a as CUevent, b as CUevent)
            }
            24 => p.cuStreamWaitEvent(self.stream(), self.pick(|p| &p.events) as CUevent, self.input.u32() % 4),
            25 => {
                let r = p.cuMemAlloc(self.out(&mut word), self.input.size(SMALL));
                self.pools.memory.push(word);
                r
            }
            26 => p.cuMemFree(self.address()),
            27 => {
                let n = self.input.below(HOST + 1);
                p.cuMemcpyHtoD(self.address(), self.host.as_ptr().cast(), n)
            }
            28 => {
                let n = self.input.below(HOST + 1);
                p.cuMemcpyDtoH(self.host.as_mut_ptr().cast(), self.address(), n)
            }
            29 => p.cuMemcpyDtoD(self.address(), self.address(), self.input.size(SMALL)),
            30 => p.cuMemsetD8(self.address(), self.input.u8(), self.input.size(SMALL)),
            31 => p.cuMemsetD32(self.address(), self.input.u32(), self.input.size(SMALL)),
            32 => {
                let n = self.input.below(HOST + 1);
                p.cuMemcpyHtoDAsync(self.address(), self.host.as_ptr().cast(), n, self.stream())
            }
            33 => p.cuMemsetD8Async(self.address(), self.input.u8(), self.input.size(SMALL), self.stream()),
            34 => {
                let mut total = 0usize;
                p.cuMemGetInfo(self.out(&mut size), self.out(&mut total))
            }
            35 => p.cuMemGetAddressRange(self.out(&mut word), self.out(&mut size), self.address()),
            36 => {
                let mut data = [0u64; 8];
                let attribute = CUpointer_attribute(self.input.u32() % 24);
                p.cuPointerGetAttribute(self.out(&mut data).cast(), attribute, self.address())
            }
            37 => {
                let (image, runs) = self.image();
                let r = p.cuModuleLoadData(self.out(&mut handle).cast(), image.as_ptr().cast());
                self.pools.modules.push(handle as u64);
                if runs {
                    // Its functions may run: remembered as such below.
                    self.pools.modules.push(handle as u64 | 1);
                }
                r
            }
            38 => {
                let module = self.pick(|p| &p.modules);
                let name = self.name();
                let r = p.cuModuleGetFunction(
                    self.out(&mut handle).cast(),
                    (module & !1) as CUmodule,
                    name.as_ptr().cast(),
                );
                self.pools.functions.push(handle as u64);
                if module & 1 == 1 {
                    self.pools.kernels.push(handle as u64);
                }
                r
            }
            39 => p.cuModuleUnload((self.pick(|p| &p.modules) & !1) as CUmodule),
            40 => self.launch(p),
            41 => {
                let attribute = CUfunction_attribute(self.input.u32() % 16);
                p.cuFuncGetAttribute(self.out(&mut int), attribute, self.pick(|p| &p.functions) as CUfunction)
            }
            42 => {
                let attribute = CUfunction_attribute(self.input.u32() % 16);
                p.cuFuncSetAttribute(self.pick(|p| &p.functions) as CUfunction, attribute, self.input.u32() as c_int)
            }
            43 => {
                let mut text: *const c_char = null();
                let status = CUresult(self.input.u32() % 1000);
                if op & 64 == 0 {
                    p.cuGetErrorName(status, self.out(&mut text))
                } else {
                    p.cuGetErrorString(status, self.out(&mut text))
                }
            }
            44 => p.cuDriverGetVersion(self.out(&mut int)),
            45 => {
                let name = self.name();
                let mut status = CUdriverProcAddressQueryResult(0);
                let version = self.input.u32() as c_int % 20000;
                p.cuGetProcAddress(
                    name.as_ptr().cast(),
                    self.out(&mut handle),
                    version,
                    self.input.u64() % 4,
                    self.out(&mut status),
                )
            }
            46 => {
                let r = p.cuGraphCreate(self.out(&mut handle).cast(), self.input.u32() % 2);
                self.pools.graphs.push(handle as u64);
                r
            }
            47 => p.cuGraphDestroy(self.pick(|p| &p.graphs) as CUgraph),
            48 | 49 => {
                let graph = self.pick(|p| &p.graphs) as CUgraph;
                let deps: Vec<CUgraphNode> =
                    (0..self.input.below(4)).map(|_| self.pick(|p| &p.nodes) as CUgraphNode).collect();
                // A null list with a count one time in eight.
                let (list, count) = match self.input.u8() % 8 {
                    0 => (null(), usize::from(self.input.u8() % 3)),
                    _ => (deps.as_ptr(), deps.len()),
                };
                let r = if op % 64 == 48 {
                    p.cuGraphAddEmptyNode(self.out(&mut handle).cast(), graph, list, count)
                } else {
                    let params = CUDA_MEMSET_NODE_PARAMS {
                        dst: self.address(),
                        pitch: self.input.size(SMALL),
                        value: self.input.u32(),
                        elementSize: self.input.u32() % 8,
                        width: self.input.size(SMALL),
                        height: self.input.size(4),
                    };
                    let params_ptr = if self.input.u8() & 7 == 0 { null() } else { &params as *const _ };
                    let context = self.pick(|p| &p.contexts) as CUcontext;
                    p.cuGraphAddMemsetNode(self.out(&mut handle).cast(), graph, list, count, params_ptr, context)
                };
                self.pools.nodes.push(handle as u64);
                r
            }
            50 => {
                let r = p.cuGraphInstantiate(
                    self.out(&mut handle).cast(),
                    self.pick(|p| &p.graphs) as CUgraph,
                    self.input.u64() % 16,
                );
                self.pools.execs.push(handle as u64);
                r
            }
            51 => p.cuGraphLaunch(self.pick(|p| &p.execs) as CUgraphExec, self.stream()),
            52 => p.cuGraphExecDestroy(self.pick(|p| &p.execs) as CUgraphExec),
            53 => match op & 192 {
                0 => p.cuStreamBeginCapture(self.stream(), CUstreamCaptureMode(self.input.u32() % 4)),
                64 => {
                    let r = p.cuStreamEndCapture(self.stream(), self.out(&mut handle).cast());
                    self.pools.graphs.push(handle as u64);
                    r
                }
                _ => {
                    let mut status = CUstreamCaptureStatus(0);
                    p.cuStreamIsCapturing(self.stream(), self.out(&mut status))
                }
            },
            54 => {
                let r = p.cuMemAllocAsync(self.out(&mut word), self.input.size(SMALL), self.stream());
                self.pools.memory.push(word);
                r
            }
            55 => p.cuMemFreeAsync(self.address(), self.stream()),
            56 => {
                let r = p.cuMemHostAlloc(self.out(&mut handle), self.input.size(SMALL), self.input.u32() % 16);
                self.pools.host.push(handle as u64);
                r
            }
            57 => p.cuMemFreeHost(self.pick(|p| &p.host) as *mut c_void),
            58 => {
                let r = p.cuMemAllocPitch(
                    self.out(&mut word),
                    self.out(&mut size),
                    self.input.size(4096),
                    self.input.size(64),
                    self.input.u32() % 20,
                );
                self.pools.memory.push(word);
                r
            }
            59 => {
                let descriptor = CUDA_ARRAY_DESCRIPTOR {
                    Width: self.input.size(256),
                    Height: self.input.size(64),
                    Format: CUarray_format(self.input.u32() % 40),
                    NumChannels: self.input.u32() % 6,
                };
                let descriptor_ptr = if self.input.u8() & 7 == 0 { null() } else { &descriptor as *const _ };
                let r = p.cuArrayCreate(self.out(&mut handle).cast(), descriptor_ptr);
                self.pools.arrays.push(handle as u64);
                r
            }
            60 => p.cuArrayDestroy(self.pick(|p| &p.arrays) as CUarray),
            61 => match op & 192 {
                0 => p.cuCtxGetCurrent(self.out(&mut handle).cast()),
                64 => p.cuCtxGetDevice(self.out(&mut int)),
                128 => p.cuCtxGetLimit(self.out(&mut size), CUlimit(self.input.u32() % 12)),
                _ => p.cuCtxSetLimit(CUlimit(self.input.u32() % 12), self.input.size(SMALL)),
            },
            62 => self.more(p, op),
            _ => self.vmm(p, op),
        }
    }

    /// Streams, occupancy, globals, host functions, pools and libraries.
    unsafe fn more(&mut self, p: cudrv::P<'_>, op: u8) -> CUresult {
        let mut word = 0u64;
        let mut int: c_int = 0;
        let mut size = 0usize;
        let mut handle: *mut c_void = null_mut();
        match op >> 6 {
            0 => match self.input.u8() % 3 {
                0 => p.cuStreamGetPriority(self.stream(), self.out(&mut int)),
                1 => {
                    let mut flags: c_uint = 0;
                    p.cuStreamGetFlags(self.stream(), self.out(&mut flags))
                }
                _ => p.cuLaunchHostFunc(self.stream(), if op & 1 == 0 { Some(nothing) } else { None }, null_mut()),
            },
            1 => p.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                self.out(&mut int),
                self.pick(|p| &p.functions) as CUfunction,
                self.input.u32() as c_int,
                self.input.size(SMALL),
            ),
            2 => {
                let name = self.name();
                let module = (self.pick(|p| &p.modules) & !1) as CUmodule;
                let r = p.cuModuleGetGlobal(self.out(&mut word), self.out(&mut size), module, name.as_ptr().cast());
                self.pools.memory.push(word);
                r
            }
            _ => match self.input.u8() % 6 {
                0 => {
                    let r = p.cuDeviceGetDefaultMemPool(self.out(&mut handle).cast(), self.device());
                    self.pools.pools.push(handle as u64);
                    r
                }
                1 | 2 => {
                    let mut value = [self.input.u64(), 0];
                    let pool = self.pick(|p| &p.pools) as CUmemoryPool;
                    let attribute = CUmemPool_attribute(self.input.u32() % 12);
                    let value_ptr = self.out(&mut value).cast();
                    if op & 1 == 0 {
                        p.cuMemPoolSetAttribute(pool, attribute, value_ptr)
                    } else {
                        p.cuMemPoolGetAttribute(pool, attribute, value_ptr)
                    }
                }
                3 => {
                    let (image, _) = self.image();
                    let r = p.cuLibraryLoadData(
                        self.out(&mut handle).cast(),
                        image.as_ptr().cast(),
                        null_mut(),
                        null_mut(),
                        0,
                        null_mut(),
                        null_mut(),
                        0,
                    );
                    self.pools.libraries.push(handle as u64);
                    r
                }
                4 => {
                    let name = self.name();
                    let library = self.pick(|p| &p.libraries) as CUlibrary;
                    p.cuLibraryGetKernel(self.out(&mut handle).cast(), library, name.as_ptr().cast())
                }
                _ => p.cuLibraryUnload(self.pick(|p| &p.libraries) as CUlibrary),
            },
        }
    }

    /// Virtual memory management.
    unsafe fn vmm(&mut self, p: cudrv::P<'_>, op: u8) -> CUresult {
        let mut word = 0u64;
        match op >> 6 {
            0 => {
                let r = p.cuMemAddressReserve(
                    self.out(&mut word),
                    self.input.size(1 << 24),
                    self.input.size(1 << 21),
                    if op & 1 == 0 { 0 } else { self.address() },
                    0,
                );
                self.pools.reserved.push(word);
                self.pools.memory.push(word);
                r
            }
            1 => {
                let mut bytes = [0u8; std::mem::size_of::<CUmemAllocationProp>()];
                for b in bytes.iter_mut().take(16) {
                    *b = self.input.u8() % 4;
                }
                // SAFETY (of the fuzz target): every field is an integer, a union of
                // integers or a pointer, and the pointer is set null below.
                let mut prop: CUmemAllocationProp = std::ptr::read_unaligned(bytes.as_ptr().cast());
                prop.win32HandleMetaData = null_mut();
                let prop_ptr = if self.input.u8() & 7 == 0 { null() } else { &prop as *const _ };
                let r = p.cuMemCreate(self.out(&mut word), self.input.size(1 << 22), prop_ptr, 0);
                self.pools.physical.push(word);
                r
            }
            2 => match self.input.u8() % 3 {
                0 => p.cuMemRelease(self.pick(|p| &p.physical)),
                1 => p.cuMemMap(
                    self.pick(|p| &p.reserved),
                    self.input.size(1 << 22),
                    self.input.size(1 << 21),
                    self.pick(|p| &p.physical),
                    0,
                ),
                _ => p.cuMemUnmap(self.pick(|p| &p.reserved), self.input.size(1 << 22)),
            },
            _ => {
                let mut descriptor: CUmemAccessDesc = std::mem::zeroed();
                descriptor.location.type_ = CUmemLocationType(self.input.u32() % 4);
                descriptor.location.__bindgen_anon_1.id = self.device();
                descriptor.flags = CUmemAccess_flags(self.input.u32() % 4);
                let count = usize::from(self.input.u8() % 2);
                let ptr = self.pick(|p| &p.reserved);
                p.cuMemSetAccess(ptr, self.input.size(1 << 22), &descriptor, count)
            }
        }
    }

    /// `cuLaunchKernel` of a fixed image's function (or a null or garbage handle): small
    /// grids, or dimensions beyond the limits; parameters through `kernelParams` or
    /// `extra`, each pointing into our parameter buffer.
    unsafe fn launch(&mut self, p: cudrv::P<'_>) -> CUresult {
        let f = self.pick(|p| &p.kernels) as CUfunction;
        let grid = [self.dim(3), self.dim(2), self.dim(2)];
        let block = [self.dim(64), self.dim(4), self.dim(2)];
        let shared = match self.input.u8() % 4 {
            0 => self.input.u32(),
            _ => 0,
        };
        // The first parameter is an address, the second a small count.
        let address = self.address().to_le_bytes();
        let count = u32::from(self.input.u8()).to_le_bytes();
        if let Some(d) = self.params.get_mut(..12) {
            d.copy_from_slice(&[address.as_slice(), count.as_slice()].concat());
        }
        let stream = self.stream();
        let mut buffer_size = self.input.below(64);
        let mut extra: [*mut c_void; 5] = [
            std::ptr::without_provenance_mut(CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT as usize),
            self.params.as_mut_ptr().cast(),
            std::ptr::without_provenance_mut(CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT as usize),
            (&mut buffer_size as *mut usize).cast(),
            null_mut(),
        ];
        let (params, extra) = match self.input.u8() % 4 {
            0 => (null_mut(), extra.as_mut_ptr()),
            1 => (null_mut(), null_mut()),
            _ => (self.param_pointers.as_mut_ptr(), null_mut()),
        };
        p.cuLaunchKernel(f, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, stream, params, extra)
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let Some((world, driver)) = worlds().get(input.below(VERSIONS.len())) else { return };
    world.reset();
    let p = driver.p();
    let mut params = vec![0u8; 32 * 1024];
    let param_pointers = vec![params.as_mut_ptr().cast::<c_void>(); 4096];
    let mut run = Run { input, pools: Pools::default(), host: vec![0u8; HOST], params, param_pointers };
    // SAFETY (of the fuzz target): every pointer passed is null, a handle value (opaque to
    // the driver), or points to a live buffer of ours at least as large as the call says.
    unsafe {
        let _ = p.cuInit(0);
        for _ in 0..MAX_CALLS {
            if run.input.is_empty() {
                break;
            }
            let _ = run.call(p);
        }
        // Nothing left queued before the next input resets the world.
        for s in run.pools.streams.clone() {
            let _ = p.cuStreamSynchronize(s as CUstream);
        }
        let _ = p.cuCtxSynchronize();
    }
});
