//! The entry-point table: every `PFN_<name>_v<version>[_ptds|_ptsz]` typedef of the pinned
//! `cudaTypedefs.h`, and every distinct name with the variants its unversioned form may
//! bind. Generated from the header (see `DESIGN.md`); nothing here is kept by hand.

use std::ffi::CStr;
use std::num::NonZeroU32;

/// One variant of an entry point, as `cudaTypedefs.h` declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VariantSpec {
    /// The typedef's name without `PFN_`: `cuMemAlloc_v3020`, `cuMemcpyAsync_v7000_ptsz`.
    /// It is also the name of the variant's wrapper in [`crate::p`] and [`crate::pw`].
    pub ident: &'static str,
    /// The symbol requested from `cuGetProcAddress`.
    pub symbol: &'static CStr,
    /// The ABI version it is requested at (`cudaVersion` argument), e.g. 3020 for CUDA 3.2.
    pub version: u32,
    /// Whether it is the per-thread default stream variant (`_ptds`/`_ptsz`, flag 2).
    pub per_thread: bool,
}

/// One distinct function name. Its unversioned wrapper (`p::cuMemAlloc`) binds the first of
/// `candidates` (newest first) that the driver provides; with the per-thread default
/// stream option and a non-empty `per_thread_candidates`, the first of those instead.
/// The first candidate is the variant cuda.h's macros select for the name, the others are
/// older variants with the identical prototype (see `DESIGN.md`, "Generated code").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NameSpec {
    /// The function name, `cuMemAlloc`.
    pub name: &'static str,
    /// Indices into [`VARIANTS`]: cuda.h's variant for the name, then older ones with its
    /// prototype.
    pub candidates: &'static [usize],
    /// The same in per-thread mode (`CUDA_API_PER_THREAD_DEFAULT_STREAM`), when cuda.h maps
    /// the name to a `_ptds`/`_ptsz` variant; empty otherwise.
    pub per_thread_candidates: &'static [usize],
    /// Whether cuda.h binds the name to one of its variants (else the newest variant is
    /// the default).
    pub declared: bool,
}

/// Which table entry a wrapper calls: a variant or an unversioned name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Entry {
    /// Index into [`VARIANTS`].
    Variant(usize),
    /// Index into [`NAMES`].
    Name(usize),
}

/// A table entry as errors and reports name it: four bytes, turned into the entry's name
/// only when shown. Every entry has a constant in [`crate::call`].
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Call(NonZeroU32);

const NAME_BIT: u32 = 1 << 31;

impl Call {
    /// The call of `entry`.
    pub const fn of(entry: Entry) -> Call {
        let bits = match entry {
            Entry::Variant(i) => (i as u32).wrapping_add(1) & !NAME_BIT,
            Entry::Name(i) => (i as u32).wrapping_add(1) | NAME_BIT,
        };
        match NonZeroU32::new(bits) {
            Some(n) => Call(n),
            None => Call(NonZeroU32::MIN),
        }
    }

    /// The entry it names.
    pub const fn entry(self) -> Entry {
        let bits = self.0.get();
        let index = (bits & !NAME_BIT).wrapping_sub(1) as usize;
        if bits & NAME_BIT == 0 {
            Entry::Variant(index)
        } else {
            Entry::Name(index)
        }
    }

    /// The wrapper name: `cuMemAlloc` or `cuLaunchHostFunc_v13010`.
    pub fn name(self) -> &'static str {
        match self.entry() {
            Entry::Variant(i) => VARIANTS.get(i).map_or("?", |v| v.ident),
            Entry::Name(i) => NAMES.get(i).map_or("?", |n| n.name),
        }
    }
}

impl std::fmt::Debug for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::fmt::Display for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl NameSpec {
    /// The candidates the name binds from: the per-thread ones when `per_thread` is on and
    /// the name has any, else the legacy-stream ones.
    pub fn candidates_for(&self, per_thread: bool) -> &'static [usize] {
        if per_thread && !self.per_thread_candidates.is_empty() {
            self.per_thread_candidates
        } else {
            self.candidates
        }
    }
}

impl VariantSpec {
    /// The symbol as text.
    pub fn symbol_str(&self) -> &'static str {
        self.symbol.to_str().unwrap_or("")
    }
}

include!("generated/table.rs");

/// The index of the variant called `ident` (`cuLaunchHostFunc_v13010`).
pub fn variant_index(ident: &str) -> Option<usize> {
    VARIANTS.iter().position(|v| v.ident == ident)
}

/// The index of the name `name` (`cuLaunchHostFunc`).
pub fn name_index(name: &str) -> Option<usize> {
    NAMES.binary_search_by(|n| n.name.cmp(name)).ok()
}
