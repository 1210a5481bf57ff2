//! `cuGetProcAddress` and `cuGetProcAddress_v2` as `docs/driver-facts.md` describes
//! them, for an emulated driver version. The set of symbols a version has is taken from
//! cudrv's generated table: every variant at or below that version.
//!
//! Each emulated driver is a world in a slot (`world.rs`); the bootstrap functions and the
//! entry points are instantiated per slot (`gpa_v2::<S>`), so several drivers, of one
//! version or of several, can be emulated in one process at once, each with its own state.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::Ordering;
use std::sync::Mutex;

use cudrv::sys::{cuuint64_t, CUdriverProcAddressQueryResult, CUresult};
use cudrv::table::{Entry, VARIANTS, VARIANT_COUNT};
use cudrv::{call, Call, ProcAddressQuery};

use crate::world::{World, SLOTS};
use crate::{entries, faults};

/// Taken while a slot is handed out.
static SLOT_LOCK: Mutex<()> = Mutex::new(());

/// The version slot `slot`'s world emulates (0: unused).
pub(crate) fn slot_version(slot: usize) -> u32 {
    World::of(slot).map_or(0, |w| w.version.load(Ordering::Acquire))
}

/// Sets the version slot `slot`'s world emulates.
pub(crate) fn set_slot_version(slot: usize, version: u32) {
    if let Some(w) = World::of(slot) {
        w.version.store(version, Ordering::Release);
    }
}

/// The slot of the world shared by every `StandIn::new(version)`: the default world
/// (slot 0) when it emulates `version`, else the first other slot emulating it and not
/// taken by [`fresh_slot`], taking an unused one if needed.
pub(crate) fn shared_slot(version: u32) -> Option<usize> {
    let _guard = SLOT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if slot_version(0) == version {
        return Some(0);
    }
    let shared = |s: &usize| World::of(*s).is_some_and(|w| !w.isolated.load(Ordering::Acquire));
    if let Some(s) = (1..SLOTS).filter(shared).find(|&s| slot_version(s) == version) {
        return Some(s);
    }
    take_unused(version, false)
}

/// A slot no one else has, with a fresh world emulating `version` (`StandIn::isolated`).
pub(crate) fn fresh_slot(version: u32) -> Option<usize> {
    let _guard = SLOT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    take_unused(version, true)
}

/// Takes an unused slot (1..SLOTS) for `version` (under `SLOT_LOCK`).
fn take_unused(version: u32, isolated: bool) -> Option<usize> {
    let s = (1..SLOTS).find(|&s| slot_version(s) == 0)?;
    if let Some(w) = World::of(s) {
        w.isolated.store(isolated, Ordering::Release);
    }
    set_slot_version(s, version);
    Some(s)
}

/// The request's outcome, before it is written back in the API's own way.
enum Answer {
    Found(*mut c_void),
    SymbolNotFound,
    VersionNotSufficient,
    Invalid,
}

fn answer(slot: usize, symbol: *const c_char, requested: c_int, flags: cuuint64_t) -> Answer {
    let emulated = slot_version(slot);
    // A version above the driver's is refused outright; a negative one asks for the
    // newest (facts: -1, -2 and INT_MIN succeed).
    let requested = match requested {
        r if r < 0 => emulated,
        r => r.unsigned_abs(),
    };
    if requested > emulated || flags > 3 {
        return Answer::Invalid;
    }
    // SAFETY: the caller passes a NUL-terminated symbol name (checked non-null above us).
    let name = unsafe { CStr::from_ptr(symbol) };
    let name = name.to_str().unwrap_or("");
    if entries::ENTRY_HEADER_VERSION != cudrv::table::HEADER_VERSION || entries::ENTRY_COUNT != VARIANT_COUNT {
        return Answer::SymbolNotFound;
    }
    let in_driver = |per_thread: bool| {
        VARIANTS
            .iter()
            .enumerate()
            .filter(move |(_, v)| v.symbol_str() == name && v.per_thread == per_thread && v.version <= emulated)
    };
    if in_driver(false).next().is_none() && in_driver(true).next().is_none() {
        // Not a cuda.h name: the profiler's and the graphics-interop names are known too.
        return match crate::interop::resolve(name, requested, flags & 2 != 0) {
            Ok(p) => Answer::Found(p),
            Err(true) => Answer::VersionNotSufficient,
            Err(false) => Answer::SymbolNotFound,
        };
    }
    let newest =
        |per_thread: bool| in_driver(per_thread).filter(|(_, v)| v.version <= requested).max_by_key(|(_, v)| v.version);
    let chosen = if flags & 2 != 0 { newest(true).or_else(|| newest(false)) } else { newest(false) };
    let Some((index, _)) = chosen else {
        return Answer::VersionNotSufficient;
    };
    Answer::Found(special(slot, index).unwrap_or_else(|| entry_in(slot, index)))
}

/// What `cuGetProcAddress` of `slot` answers for variant `index` (of `VARIANTS`) when it is
/// requested at its own version: null if the variant is newer than the emulated version.
/// The bootstrap entries ([`special`]: `cuGetProcAddress`, `cuDriverGetVersion`) are
/// answered at every version, as the exported symbols always did: cudrv reads an emulated
/// 11.2's version through them.
pub(crate) fn entry_of(slot: usize, index: usize) -> *mut c_void {
    let Some(v) = VARIANTS.get(index) else {
        return std::ptr::null_mut();
    };
    if let Some(p) = special(slot, index) {
        return p;
    }
    if v.version > slot_version(slot) {
        return std::ptr::null_mut();
    }
    entry_in(slot, index)
}

/// The entry point of variant `index` when it depends on the slot: `cuDriverGetVersion`
/// and `cuGetProcAddress` answer as the slot's version.
fn special(slot: usize, index: usize) -> Option<*mut c_void> {
    let call = Call::of(Entry::Variant(index));
    if call == call::cuDriverGetVersion_v2020 {
        Some(driver_get_version_of(slot))
    } else if call == call::cuGetProcAddress_v11030 {
        gpa_v1_of(slot).map(|f| f as *mut c_void)
    } else if call == call::cuGetProcAddress_v12000 {
        gpa_v2_of(slot).map(|f| f as *mut c_void)
    } else {
        None
    }
}

/// `cuGetProcAddress_v2` of slot `S`: an injected fault, else [`get_proc_address_v2`].
pub(crate) unsafe extern "C" fn gpa_v2<const S: usize>(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: cuuint64_t,
    query: *mut ProcAddressQuery,
) -> CUresult {
    match faults::take(World::at::<S>(), call::cuGetProcAddress_v12000) {
        Some(s) => s,
        // SAFETY: forwarded as received.
        None => unsafe { get_proc_address_v2(S, symbol, pfn, version, flags, query) },
    }
}

/// `cuGetProcAddress_v2` of the environment's slot (0), behind the generated prologue.
pub(crate) unsafe fn get_proc_address_v2_entry(
    w: &World,
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: cuuint64_t,
    query: *mut CUdriverProcAddressQueryResult,
) -> CUresult {
    // SAFETY: forwarded as received (`ProcAddressQuery` is the same `c_uint`).
    unsafe { get_proc_address_v2(w.slot(), symbol, pfn, version, flags, query.cast()) }
}

/// `cuGetProcAddress_v2` as slot `slot` answers it.
unsafe fn get_proc_address_v2(
    slot: usize,
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: cuuint64_t,
    query: *mut ProcAddressQuery,
) -> CUresult {
    if symbol.is_null() || pfn.is_null() {
        // A real driver crashes here (driver-facts.md); the stand-in refuses instead.
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    if slot_version(slot) < 12000 {
        // Drivers before 12.0 have no cuGetProcAddress_v2.
        return CUresult::CUDA_ERROR_NOT_SUPPORTED;
    }
    let (p, q) = match answer(slot, symbol, version, flags) {
        Answer::Invalid => return CUresult::CUDA_ERROR_INVALID_VALUE,
        Answer::Found(p) => (p, cudrv::ProcAddressQuery::SUCCESS),
        Answer::SymbolNotFound => (std::ptr::null_mut(), cudrv::ProcAddressQuery::SYMBOL_NOT_FOUND),
        Answer::VersionNotSufficient => (std::ptr::null_mut(), cudrv::ProcAddressQuery::VERSION_NOT_SUFFICIENT),
    };
    // SAFETY: pfn is non-null (checked); query may be null, as the real driver allows.
    unsafe {
        *pfn = p;
        if !query.is_null() {
            *query = q;
        }
    }
    CUresult::CUDA_SUCCESS
}

/// The 4-argument `cuGetProcAddress` of slot `S`: an injected fault, else
/// [`get_proc_address`].
pub(crate) unsafe extern "C" fn gpa_v1<const S: usize>(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: cuuint64_t,
) -> CUresult {
    match faults::take(World::at::<S>(), call::cuGetProcAddress_v11030) {
        Some(s) => s,
        // SAFETY: forwarded as received.
        None => unsafe { get_proc_address(S, symbol, pfn, version, flags) },
    }
}

/// The 4-argument `cuGetProcAddress` of the environment's slot (0), behind the generated
/// prologue.
pub(crate) unsafe fn get_proc_address_entry(
    w: &World,
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: cuuint64_t,
) -> CUresult {
    // SAFETY: forwarded as received.
    unsafe { get_proc_address(w.slot(), symbol, pfn, version, flags) }
}

/// The 4-argument `cuGetProcAddress` as slot `slot` answers it.
unsafe fn get_proc_address(
    slot: usize,
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: cuuint64_t,
) -> CUresult {
    if symbol.is_null() || pfn.is_null() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    match answer(slot, symbol, version, flags) {
        Answer::Invalid => CUresult::CUDA_ERROR_INVALID_VALUE,
        Answer::Found(p) => {
            // SAFETY: pfn is non-null (checked).
            unsafe { *pfn = p };
            CUresult::CUDA_SUCCESS
        }
        Answer::SymbolNotFound | Answer::VersionNotSufficient => CUresult::CUDA_ERROR_NOT_FOUND,
    }
}

/// `cuDriverGetVersion` of slot `S`: an injected fault, else the slot's version.
pub(crate) unsafe extern "C" fn driver_get_version<const S: usize>(version: *mut c_int) -> CUresult {
    match faults::take(World::at::<S>(), call::cuDriverGetVersion_v2020) {
        Some(s) => s,
        None => put_version(S, version),
    }
}

/// `cuDriverGetVersion` of the environment's slot (0), behind the generated prologue.
pub(crate) fn driver_get_version_entry(w: &World, version: *mut c_int) -> CUresult {
    put_version(w.slot(), version)
}

fn put_version(slot: usize, version: *mut c_int) -> CUresult {
    crate::entry::put(version, c_int::try_from(slot_version(slot)).unwrap_or(0))
}

macro_rules! per_slot {
    ($($s:literal)*) => {
        pub(crate) fn gpa_v2_of(slot: usize) -> Option<cudrv::GetProcAddressV2> {
            match slot { $($s => Some(gpa_v2::<$s>),)* _ => None }
        }
        pub(crate) fn gpa_v1_of(slot: usize) -> Option<cudrv::GetProcAddressV1> {
            match slot { $($s => Some(gpa_v1::<$s>),)* _ => None }
        }
        pub(crate) fn driver_get_version_of(slot: usize) -> *mut c_void {
            match slot { $($s => driver_get_version::<$s> as *mut c_void,)* _ => std::ptr::null_mut() }
        }
        /// The entry point of variant `index` in slot `slot`'s world.
        fn entry_in(slot: usize, index: usize) -> *mut c_void {
            match slot { $($s => entries::entry::<$s>(index),)* _ => std::ptr::null_mut() }
        }
    };
}
per_slot!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23);
