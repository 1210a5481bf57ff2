//! Device attributes answer as the H200 does (`data/h200-device-attributes.txt`, driver
//! 580.159.04 / CUDA 13.0), apart from the capabilities the stand-in does not emulate,
//! which `conformance/deliberate-differences.txt` lists; numbers past the emulated
//! version's last attribute are refused; and `%clock64`/`%globaltimer` advance with host
//! time at the reported clock rate.

use std::collections::BTreeSet;
use std::ffi::{c_int, c_void, CString};
use std::time::Instant;

use cudrv::sys::{CUdevice_attribute as A, CUresult};
use cudrv::Driver;
use cudrv_standin::StandIn;

const H200: &str = include_str!("data/h200-device-attributes.txt");
const DIFFERENCES: &str = include_str!("../../conformance/deliberate-differences.txt");
const UNTOUCHED: c_int = -12345;

fn ok(status: CUresult) {
    assert_eq!(status, CUresult::CUDA_SUCCESS);
}

/// An initialised driver of a fresh world of `version` with `devices` devices.
fn driver(version: u32, devices: c_int) -> Driver {
    let s = StandIn::isolated(version).expect("a free world");
    assert!(s.set_device_count(devices));
    let d = s.load(Default::default()).unwrap();
    // SAFETY: flags 0.
    ok(unsafe { d.p().cuInit(0) });
    d
}

/// `cuDeviceGetAttribute(number, dev)`: its status and the value slot (UNTOUCHED if not
/// written).
fn attribute(d: &Driver, number: u32, dev: c_int) -> (CUresult, c_int) {
    let mut v = UNTOUCHED;
    // SAFETY: a valid out-pointer.
    let st = unsafe { d.p().cuDeviceGetAttribute(&mut v, A(number), dev) };
    (st, v)
}

/// The H200's lines: (number, status, value).
fn h200() -> Vec<(u32, CUresult, c_int)> {
    H200.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| match l.split_whitespace().collect::<Vec<_>>().as_slice() {
            ["attr", n, "status", s, "value", v] => {
                (n.parse().unwrap(), CUresult(s.parse().unwrap()), v.parse().unwrap())
            }
            _ => panic!("unexpected line {l:?}"),
        })
        .collect()
}

/// The attribute numbers `deliberate-differences.txt` lists (`attribute.N`).
fn listed_differences() -> BTreeSet<u32> {
    DIFFERENCES
        .lines()
        .filter_map(|l| l.split_whitespace().next()?.strip_prefix("attribute."))
        .map(|n| n.parse().unwrap())
        .collect()
}

#[test]
fn every_attribute_answers_as_the_h200_but_the_listed_capabilities() {
    let d = driver(13000, 1);
    let table = h200();
    assert_eq!(table.len(), 159, "attributes 1..=159 recorded");
    let listed = listed_differences();
    let mut differ = BTreeSet::new();
    for &(n, status, value) in &table {
        let got = attribute(&d, n, 0);
        if got != (status, value) {
            differ.insert(n);
            // A capability the stand-in lacks reads absent (119, the pool handle types:
            // POSIX file descriptors without fabric handles).
            assert_eq!(got.0, CUresult::CUDA_SUCCESS, "attribute {n}");
            assert!(got.1 == 0 || (n == 119 && got.1 == 1), "attribute {n}: {got:?}, the H200: {value}");
        }
    }
    assert_eq!(differ, listed, "the attributes that differ from the H200's are those listed");
    // Every difference is an absent capability, never a missing number.
    assert!(differ.iter().all(|n| *n < 148));
}

#[test]
fn a_number_past_the_versions_last_attribute_is_refused() {
    // The first number each driver does not know (its cuda.h's CU_DEVICE_ATTRIBUTE_MAX).
    for (version, first_unknown) in [(11030, 120), (11070, 125), (12040, 135), (12080, 144), (13000, 148), (13050, 162)]
    {
        let d = driver(version, 1);
        assert_eq!(attribute(&d, first_unknown - 1, 0).0, CUresult::CUDA_SUCCESS, "{version}");
        for n in [first_unknown, first_unknown + 1, 100_000, 0] {
            assert_eq!(attribute(&d, n, 0), (CUresult::CUDA_ERROR_INVALID_VALUE, UNTOUCHED), "{version}: {n}");
        }
    }
    assert_eq!(A::CU_DEVICE_ATTRIBUTE_MAX.0, 162, "13.5's header ends where the stand-in's table does");
}

#[test]
fn each_device_reports_its_own_pci_location() {
    let d = driver(13000, 3);
    for dev in 0..3 {
        let mut id = [0 as std::ffi::c_char; 32];
        // SAFETY: a buffer of 32 bytes.
        ok(unsafe { d.p().cuDeviceGetPCIBusId(id.as_mut_ptr(), 32, dev) });
        // SAFETY: NUL-terminated by the driver.
        let id = unsafe { std::ffi::CStr::from_ptr(id.as_ptr()) }.to_str().unwrap().to_string();
        let number = |a: A| attribute(&d, a.0, dev).1;
        let expected = format!(
            "{:04X}:{:02X}:{:02X}.0",
            number(A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID),
            number(A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
            number(A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)
        );
        assert_eq!(id, expected);
        assert_eq!(number(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT), cudrv_standin::DEVICE_SM_COUNT);
    }
    assert_eq!(attribute(&d, 1, 3), (CUresult::CUDA_ERROR_INVALID_DEVICE, UNTOUCHED));
}

#[test]
fn a_capability_reported_absent_is_refused_and_one_reported_present_works() {
    let d = driver(13000, 1);
    let p = d.p();
    // Absent: dma-buf (cuMemGetHandleForAddressRange answers NOT_SUPPORTED, below).
    assert_eq!(attribute(&d, A::CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED.0, 0).1, 0);
    for a in [
        A::CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH,
        A::CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
        A::CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
        A::CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED,
        A::CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED,
        A::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
    ] {
        assert_eq!(attribute(&d, a.0, 0), (CUresult::CUDA_SUCCESS, 1), "{a:?}");
    }
    // Present: a VMM allocation exported as a POSIX file descriptor.
    let mut ctx = std::ptr::null_mut();
    let mut prop = cudrv::sys::CUmemAllocationProp {
        type_: cudrv::sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
        requestedHandleTypes: cudrv::sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
        ..Default::default()
    };
    prop.location.type_ = cudrv::sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    // SAFETY: valid out-pointers and properties.
    unsafe {
        ok(p.cuDevicePrimaryCtxRetain(&mut ctx, 0));
        ok(p.cuCtxSetCurrent(ctx));
        let mut h = 0;
        ok(p.cuMemCreate(&mut h, 2 << 20, &prop, 0));
        let mut fd: c_int = -1;
        ok(p.cuMemExportToShareableHandle(
            (&raw mut fd).cast(),
            h,
            cudrv::sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
            0,
        ));
        assert!(fd >= 0);
        ok(p.cuMemRelease(h));
        let mut dptr = 0;
        ok(p.cuMemAlloc(&mut dptr, 2 << 20));
        let dma = cudrv::sys::CUmemRangeHandleType::CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD;
        let st = p.cuMemGetHandleForAddressRange((&raw mut fd).cast(), dptr, 2 << 20, dma, 0);
        assert_eq!(st, CUresult::CUDA_ERROR_NOT_SUPPORTED);
        ok(p.cuMemFree(dptr));
    }
}

/// A kernel that spins until `%clock64` advanced by `cycles`, then writes the cycles and
/// the `%globaltimer` nanoseconds that passed.
const SLEEP_PTX: &str = "
.version 8.0
.target sm_90
.address_size 64

.visible .entry clock_sleep(.param .u64 cycles, .param .u64 out)
{
    .reg .pred %p;
    .reg .u64 %rd<12>;
    ld.param.u64 %rd1, [cycles];
    ld.param.u64 %rd2, [out];
    cvta.to.global.u64 %rd3, %rd2;
    mov.u64 %rd4, %globaltimer;
    mov.u64 %rd5, %clock64;
WAIT:
    mov.u64 %rd6, %clock64;
    sub.u64 %rd7, %rd6, %rd5;
    setp.lt.u64 %p, %rd7, %rd1;
    @%p bra WAIT;
    mov.u64 %rd8, %globaltimer;
    sub.u64 %rd9, %rd8, %rd4;
    st.global.u64 [%rd3], %rd7;
    st.global.u64 [%rd3+8], %rd9;
    ret;
}
";

#[test]
fn a_clock64_sleep_kernel_waits_for_its_cycles_at_the_reported_clock_rate() {
    let d = driver(13000, 1);
    let p = d.p();
    let rate_khz = attribute(&d, A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE.0, 0).1;
    assert_eq!(rate_khz, 1_980_000);
    let image = CString::new(SLEEP_PTX).unwrap();
    let mut cycles: u64 = 2_000_000;
    let mut out = [0u64; 2];
    // SAFETY: valid out-pointers; the kernel's parameters match its signature and outlive
    // the launch; `buf` holds the 16 bytes the kernel writes.
    let host_ns = unsafe {
        let (mut ctx, mut m, mut f, mut buf) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut(), 0);
        ok(p.cuDevicePrimaryCtxRetain(&mut ctx, 0));
        ok(p.cuCtxSetCurrent(ctx));
        ok(p.cuModuleLoadData(&mut m, image.as_ptr().cast()));
        ok(p.cuModuleGetFunction(&mut f, m, c"clock_sleep".as_ptr()));
        ok(p.cuMemAlloc(&mut buf, 16));
        let mut args: [*mut c_void; 2] = [(&raw mut cycles).cast(), (&raw mut buf).cast()];
        let start = Instant::now();
        ok(p.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, std::ptr::null_mut(), args.as_mut_ptr(), std::ptr::null_mut()));
        ok(p.cuCtxSynchronize());
        let elapsed = start.elapsed();
        ok(p.cuMemcpyDtoH(out.as_mut_ptr().cast(), buf, 16));
        elapsed.as_nanos()
    };
    let [waited_cycles, timer_ns] = out;
    assert!(waited_cycles >= cycles, "the loop ended after {waited_cycles} cycles");
    // 2e6 cycles at 1.98 GHz: about 1 ms of host time, measured by the host, by
    // %globaltimer, and not instantly.
    let at_least_ns = cycles * 1_000_000 / u64::try_from(rate_khz).unwrap() / 2;
    assert!(host_ns >= u128::from(at_least_ns), "the kernel returned after {host_ns} ns");
    assert!(timer_ns >= at_least_ns, "%globaltimer advanced {timer_ns} ns");
}
