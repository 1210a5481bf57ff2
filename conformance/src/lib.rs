//! The conformance suite: a fixed sequence of driver calls, one line per case, run on a
//! real GPU to record what the driver does and on the stand-in to check that it answers
//! alike. See `docs/stand-in.md`.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing))]
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod cases;
pub mod record;
pub mod runner;

/// The reference answers: the real driver's, recorded on an H200 (see the file's header).
pub const EXPECTED: &str = include_str!("../expected/h200-driver-13000.txt");

/// The cases whose answers on the stand-in differ from the real driver's on purpose.
pub const DIFFERENCES: &str = include_str!("../deliberate-differences.txt");

/// What a 12.4 driver answers in place of the H200's line where the answer depends on the
/// driver's version and not on its entry points: 12.4's JIT refuses PTX ISA 8.8 before it
/// reads the `.target` (the H200 accepts 8.8 and refuses sm_100), 12.4's
/// `CUdevSmResource` has no partition size or alignment (13.0's fields, left 0), and 12.4's
/// `cuda.h` ends its device attributes at 134 (`HOST_NUMA_ID`), so it refuses 135..=147,
/// which 13.0 knows. Left out: 141 and 145, which the stand-in reports absent at every
/// version (deliberate-differences.txt), so a 12.4 line would make that listing stale.
/// The `image.*` and `module_query.*` cases load nvcc 13.0's PTX (ISA 9.0), which 12.4's
/// JIT refuses as it refuses 8.8 (a library loads lazily, so its refusal comes from
/// `cuLibraryGetKernel` or the first call that needs its kernels). 12.4's `cuda.h` has no
/// decompression attributes (`decompress.attributes`: 136 and 137, past its 134).
pub const AT_12_4: &[&str] = &[
    "jit.ptx_target_sm_100 CUDA_ERROR_UNSUPPORTED_PTX_VERSION module=untouched",
    "jit.ptx_target_sm_100a CUDA_ERROR_UNSUPPORTED_PTX_VERSION module=untouched",
    "green.device_resource CUDA_SUCCESS type=1 sms=132 min_partition=0 alignment=0",
    "attribute.135 CUDA_ERROR_INVALID_VALUE value=-12345",
    "attribute.136 CUDA_ERROR_INVALID_VALUE value=-12345",
    "attribute.137 CUDA_ERROR_INVALID_VALUE value=-12345",
    "attribute.138 CUDA_ERROR_INVALID_VALUE value=-12345",
    "attribute.139 CUDA_ERROR_INVALID_VALUE value=-12345",
    "attribute.140 CUDA_ERROR_INVALID_VALUE value=-12345",
    "attribute.142 CUDA_ERROR_INVALID_VALUE value=-12345",
    "attribute.143 CUDA_ERROR_INVALID_VALUE value=-12345",
    "attribute.144 CUDA_ERROR_INVALID_VALUE value=-12345",
    "attribute.146 CUDA_ERROR_INVALID_VALUE value=-12345",
    "attribute.147 CUDA_ERROR_INVALID_VALUE value=-12345",
    "image.fatbin_zstd CUDA_ERROR_UNSUPPORTED_PTX_VERSION module=untouched",
    "image.fatbin_plain CUDA_ERROR_UNSUPPORTED_PTX_VERSION module=untouched",
    "image.fatbin_sm90_and_ptx CUDA_ERROR_UNSUPPORTED_PTX_VERSION module=untouched",
    "image.fatbin_load_fat_binary CUDA_ERROR_UNSUPPORTED_PTX_VERSION module=untouched",
    "image.ptx_from_fatbin_text CUDA_ERROR_UNSUPPORTED_PTX_VERSION module=untouched",
    "image.module_load_ptx_file CUDA_ERROR_UNSUPPORTED_PTX_VERSION module=untouched",
    "image.module_load_fatbin_file CUDA_ERROR_UNSUPPORTED_PTX_VERSION module=untouched",
    "image.library_load_from_file SETUP_FAILED at=cuLibraryGetKernel status=CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    "image.link_add_file_ptx CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    "image.fatbin_truncated_member CUDA_ERROR_UNSUPPORTED_PTX_VERSION module=untouched",
    "module_query.function_count SETUP_FAILED at=cuModuleLoadData status=CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    "module_query.function_count_null_count SETUP_FAILED at=cuModuleLoadData status=CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    "module_query.function_count_unloaded SETUP_FAILED at=cuModuleLoadData status=CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    "module_query.enumerate_more_room SETUP_FAILED at=cuModuleLoadData status=CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    "module_query.enumerate_fewer SETUP_FAILED at=cuModuleLoadData status=CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    "module_query.enumerate_zero SETUP_FAILED at=cuModuleLoadData status=CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    "module_query.enumerate_null_buffer SETUP_FAILED at=cuModuleLoadData status=CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    "module_query.enumerate_names SETUP_FAILED at=cuModuleLoadData status=CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    "module_query.state_enumerated SETUP_FAILED at=cuModuleLoadData status=CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    "module_query.state_after_load SETUP_FAILED at=cuModuleLoadData status=CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    "module_query.state_after_load_twice SETUP_FAILED at=cuModuleLoadData status=CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    "module_query.is_loaded_null_state SETUP_FAILED at=cuModuleLoadData status=CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    "module_query.func_get_module SETUP_FAILED at=cuModuleLoadData status=CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    "module_query.func_get_module_null_out SETUP_FAILED at=cuModuleLoadData status=CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    "module_query.func_get_module_of_kernel SETUP_FAILED at=cuLibraryGetKernel status=CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    "module_query.func_get_module_of_library_function SETUP_FAILED at=cuLibraryGetKernel status=CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    "module_query.library_enumerate_more_room CUDA_ERROR_UNSUPPORTED_PTX_VERSION slot0=untouched slot1=untouched slot2=untouched slot3=untouched",
    "module_query.library_enumerate_fewer CUDA_ERROR_UNSUPPORTED_PTX_VERSION slot0=untouched slot1=untouched slot2=untouched slot3=untouched",
    "module_query.library_enumerate_zero CUDA_ERROR_UNSUPPORTED_PTX_VERSION slot0=untouched slot1=untouched slot2=untouched slot3=untouched",
    "module_query.library_enumerate_same_as_get SETUP_FAILED at=cuLibraryGetKernel status=CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    "module_query.unified_function_missing CUDA_ERROR_UNSUPPORTED_PTX_VERSION fptr=untouched",
    "decompress.attributes SETUP_FAILED at=cuDeviceGetAttribute status=CUDA_ERROR_INVALID_VALUE",
];

/// The reference answers for a driver of version `emulated` (`None`: the H200's own):
/// [`EXPECTED`], with [`AT_12_4`] in place of the H200's lines at 12.4. Which cases a
/// driver gates for want of an entry point is [`record::expected_at`]'s business.
pub fn reference(emulated: Option<u32>) -> Vec<record::Line> {
    let mut lines = record::parse_all(EXPECTED);
    if emulated == Some(12040) {
        for line in AT_12_4.iter().filter_map(|l| record::Line::parse(l)) {
            if let Some(slot) = lines.iter_mut().find(|r| r.case == line.case) {
                *slot = line;
            }
        }
    }
    lines
}
