//! The one handle core every resource kind uses.
//!
//! A [`Handle<K>`] is an `Arc` around the owner (what keeps the resource's context, driver
//! or parent alive), the raw handle and its [`Ownership`]. Send and Sync are argued once,
//! here. The one `Drop` path carries the error policy for every kind: switch to the
//! kind's release context if it needs one (leak and report if that fails, never release
//! from the wrong context), release with a checked (`pc`) call, switch back, and report a
//! failure once, naming the handle. Each kind says only what is particular to it: its
//! raw type, its owner, how it is released and whether that needs a context.
//!
//! Raw handles are pointers (`CUstream`, `CUcontext`, ...) or integers (`CUdeviceptr`,
//! `CUmemGenericAllocationHandle`, `CUtexObject`, `CUsurfObject`): both are
//! [`RawHandle`]s.
//!
//! Each public handle type is declared as a plain `pub struct` in its family's file
//! (`pub struct Stream(pub(crate) Handle<StreamKind>);`); [`handle_type!`] then implements
//! `as_raw`, `into_raw` and `Debug` for it and, for kinds adopted from just an owner and a
//! raw handle, `from_raw` and `borrowed`.

use std::sync::Arc;

use crate::error::CudaError;
use crate::report::Arg;
use crate::scope::{cleanup_in_context, create_in_context, Undo};
use crate::sys::CUcontext;
use crate::table::Call;
use crate::typed::Live;
use crate::Driver;

/// What a raw driver handle can be: a pointer to an opaque driver object or an integer
/// handle (an address, a physical allocation, a texture or surface object).
pub(crate) trait RawHandle: Copy {
    /// The value an out-parameter starts as before the driver writes the handle.
    const NULL: Self;
    /// The handle as a number, for `Debug` and reports.
    fn addr(self) -> usize;
    /// How a report names the handle: a pointer, or a number in hex.
    fn arg(self) -> Arg;
}

impl<T> RawHandle for *mut T {
    const NULL: *mut T = std::ptr::null_mut();
    fn addr(self) -> usize {
        self as usize
    }
    fn arg(self) -> Arg {
        Arg::Pointer(self as usize)
    }
}

impl RawHandle for u64 {
    const NULL: u64 = 0;
    fn addr(self) -> usize {
        // Handles and addresses fit a usize on every platform cudrv supports (64-bit).
        self as usize
    }
    fn arg(self) -> Arg {
        Arg::Hex(self)
    }
}

/// Whether dropping the last clone releases the resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ownership {
    /// Created by cudrv or adopted with `from_raw`: released by the last clone.
    Owned,
    /// A device's primary context, retained once: released once.
    Primary,
    /// Someone else's (or something the driver never destroys): never released.
    Borrowed,
}

/// What is particular to one resource kind.
pub(crate) trait Kind: 'static {
    /// The raw driver handle (what an out-parameter starts as, and how `Debug` shows it,
    /// are its [`RawHandle`] answers).
    type Raw: RawHandle;
    /// What keeps the resource's context, driver or parent alive.
    type Owner: Send + Sync;
    /// The public type's name, for `Debug` and reports.
    const NAME: &'static str;
    /// The driver the resource belongs to.
    fn driver(owner: &Self::Owner) -> &'static Driver;
    /// How a report names the handle (the argument the release call is given): by
    /// default as [`RawHandle::arg`] names it.
    fn arg(_owner: &Self::Owner, raw: Self::Raw, _ownership: Ownership) -> Arg {
        raw.arg()
    }
    /// The call that releases it.
    fn release_call(owner: &Self::Owner, ownership: Ownership) -> Call;
    /// The context the release must run in; `None` if it needs none.
    fn release_context(_owner: &Self::Owner) -> Option<CUcontext> {
        None
    }
    /// Releases the resource with `pc` calls (never `pw`: reporting is the core's job).
    ///
    /// # Safety
    /// Called once, from the last clone, for an `Owned` or `Primary` handle.
    unsafe fn release(owner: &Self::Owner, raw: Self::Raw, ownership: Ownership) -> Result<(), CudaError>;
    /// Runs first in every drop, owned or not (a graph leaks its host-node closures here).
    fn on_drop(_owner: &mut Self::Owner) {}
}

pub(crate) struct Core<K: Kind> {
    owner: K::Owner,
    raw: K::Raw,
    ownership: Ownership,
}

// SAFETY: `raw` is a driver handle (or a device or pinned address), which the driver lets
// any thread use; cudrv never dereferences it except through accessors whose callers take
// care of aliasing. The owner is Send + Sync by the trait's bound. A core is immutable
// after construction.
unsafe impl<K: Kind> Send for Core<K> {}
// SAFETY: a core is immutable after construction (no interior mutability of its own),
// the owner is Sync by the trait's bound, and the handle is usable from any thread.
unsafe impl<K: Kind> Sync for Core<K> {}

impl<K: Kind> Drop for Core<K> {
    fn drop(&mut self) {
        K::on_drop(&mut self.owner);
        if self.ownership == Ownership::Borrowed {
            return;
        }
        let (owner, raw, ownership) = (&self.owner, self.raw, self.ownership);
        let arg = K::arg(owner, raw, ownership);
        // SAFETY: this is the last clone of an owned or primary handle: released once.
        let release = || unsafe { K::release(owner, raw, ownership) };
        let call = K::release_call(owner, ownership);
        cleanup_in_context(K::driver(owner), K::release_context(owner), call, arg, release, || {});
    }
}

/// [`Handle`] and [`Unique`] read their core's accessors through `Deref`.
impl<K: Kind> Core<K> {
    #[inline(always)]
    pub(crate) fn raw(&self) -> K::Raw {
        self.raw
    }

    /// The raw handle's place, stable for the life of the handle (a kernel parameter
    /// points to it).
    #[inline(always)]
    pub(crate) fn raw_ref(&self) -> &K::Raw {
        &self.raw
    }

    #[inline(always)]
    pub(crate) fn owner(&self) -> &K::Owner {
        &self.owner
    }

    pub(crate) fn ownership(&self) -> Ownership {
        self.ownership
    }

    #[inline(always)]
    pub(crate) fn driver(&self) -> &'static Driver {
        K::driver(&self.owner)
    }

    /// The raw handle as [`Live`] for as long as this core is borrowed (for the typed calls).
    #[inline(always)]
    pub(crate) fn live(&self) -> Live<'_, K::Raw> {
        // SAFETY: a core holds a live handle from construction (a driver call that made
        // it, or `from_raw`/`borrowed`, whose callers promise it) until it is dropped or
        // given up by value, neither of which can happen while it is borrowed.
        unsafe { Live::new(self.raw) }
    }

    /// Runs `create` in `ctx` and wraps what it made as owned. If only restoring the
    /// caller's context fails, what was made is released again (see
    /// [`create_in_context`]). On error nothing is created.
    fn create_in(
        owner: K::Owner,
        ctx: CUcontext,
        create: impl FnOnce() -> Result<K::Raw, CudaError>,
    ) -> Result<Core<K>, CudaError> {
        let o = &owner;
        let undo = Undo {
            call: K::release_call(o, Ownership::Owned),
            arg: |r: &K::Raw| K::arg(o, *r, Ownership::Owned),
            // SAFETY: it was just made and nothing else uses it.
            run: |r: &K::Raw| unsafe { K::release(o, *r, Ownership::Owned) },
        };
        let raw = create_in_context(K::driver(o), ctx, create, undo)?;
        Ok(Core { owner, raw, ownership: Ownership::Owned })
    }

    /// [`Core::create_in`] for the usual creation: one call that writes the raw handle
    /// through an out-pointer.
    fn create_out(
        owner: K::Owner,
        ctx: CUcontext,
        create: impl FnOnce(&mut K::Raw) -> Result<(), CudaError>,
    ) -> Result<Core<K>, CudaError> {
        Core::create_in(owner, ctx, || {
            let mut raw = K::Raw::NULL;
            create(&mut raw)?;
            Ok(raw)
        })
    }

    /// Gives up ownership and returns the raw handle. What the handle kept alive (its
    /// context, module or driver: the owner) is leaked with it, never released, so the raw
    /// handle returned is never already dead (the last clone of a context given up here
    /// would otherwise destroy the context, and the stream in it, on the way out).
    fn into_raw(self) -> K::Raw {
        let this = std::mem::ManuallyDrop::new(self);
        this.raw
    }

    /// `Stream(0x55d0c0a01230)`.
    pub(crate) fn fmt_debug(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}({:#x})", K::NAME, self.raw.addr())
    }
}

/// A shared, reference-counted handle of kind `K`: clones share it, the last releases it.
pub(crate) struct Handle<K: Kind>(Arc<Core<K>>);

impl<K: Kind> Clone for Handle<K> {
    fn clone(&self) -> Handle<K> {
        Handle(Arc::clone(&self.0))
    }
}

impl<K: Kind> Handle<K> {
    /// Wraps `raw`. For `Owned` and `Primary`, the last clone releases it.
    pub(crate) fn new(owner: K::Owner, raw: K::Raw, ownership: Ownership) -> Handle<K> {
        Handle(Arc::new(Core { owner, raw, ownership }))
    }

    /// [`Core::create_in`], shared.
    pub(crate) fn create_in(
        owner: K::Owner,
        ctx: CUcontext,
        create: impl FnOnce() -> Result<K::Raw, CudaError>,
    ) -> Result<Handle<K>, CudaError> {
        Core::create_in(owner, ctx, create).map(|core| Handle(Arc::new(core)))
    }

    /// [`Core::create_out`], shared: `Handle::create_out(owner, ctx, |raw| pc.cuXxxCreate(raw, ..))`.
    pub(crate) fn create_out(
        owner: K::Owner,
        ctx: CUcontext,
        create: impl FnOnce(&mut K::Raw) -> Result<(), CudaError>,
    ) -> Result<Handle<K>, CudaError> {
        Core::create_out(owner, ctx, create).map(|core| Handle(Arc::new(core)))
    }

    /// Whether another clone of it exists (a graph, a texture or a copy of the handle holds it).
    #[inline]
    pub(crate) fn is_shared(&self) -> bool {
        Arc::strong_count(&self.0) > 1
    }

    /// Releases it now, if this is the only clone and its kind needs no release context,
    /// so that the caller learns whether the release worked (a drop reports a failure
    /// instead). `Ok` once released (or for a handle that owns nothing). Otherwise the
    /// handle comes back, still owned, with the release's error (`None`: another clone
    /// exists, or its release needs a context, so it was not tried).
    pub(crate) fn try_release(self) -> Result<(), (Handle<K>, Option<CudaError>)> {
        let mut core = Arc::try_unwrap(self.0).map_err(|shared| (Handle(shared), None))?;
        if core.ownership == Ownership::Borrowed {
            return Ok(());
        }
        if K::release_context(&core.owner).is_some() {
            return Err((Handle(Arc::new(core)), None));
        }
        // SAFETY: the only clone of an owned or primary handle; once released it is marked
        // borrowed, so its drop does not release it again.
        match unsafe { K::release(&core.owner, core.raw, core.ownership) } {
            Ok(()) => {
                core.ownership = Ownership::Borrowed;
                Ok(())
            }
            Err(e) => Err((Handle(Arc::new(core)), Some(e))),
        }
    }

    /// Gives up ownership and returns the raw handle, if this is the only clone; else
    /// returns the handle back unchanged.
    pub(crate) fn into_raw(self) -> Result<K::Raw, Handle<K>> {
        Arc::try_unwrap(self.0).map(Core::into_raw).map_err(Handle)
    }
}

impl<K: Kind> std::ops::Deref for Handle<K> {
    type Target = Core<K>;

    #[inline(always)]
    fn deref(&self) -> &Core<K> {
        &self.0
    }
}

/// A handle of kind `K` with one owner: the same core and drop path as [`Handle`], without
/// the reference count or its allocation (events, pinned buffers, link states).
pub(crate) struct Unique<K: Kind>(Core<K>);

impl<K: Kind> Unique<K> {
    /// Wraps `raw`. For `Owned`, dropping it releases it.
    pub(crate) fn new(owner: K::Owner, raw: K::Raw, ownership: Ownership) -> Unique<K> {
        Unique(Core { owner, raw, ownership })
    }

    /// [`Core::create_in`], with one owner.
    #[inline]
    pub(crate) fn create_in(
        owner: K::Owner,
        ctx: CUcontext,
        create: impl FnOnce() -> Result<K::Raw, CudaError>,
    ) -> Result<Unique<K>, CudaError> {
        Core::create_in(owner, ctx, create).map(Unique)
    }

    /// [`Core::create_out`], with one owner.
    #[inline]
    pub(crate) fn create_out(
        owner: K::Owner,
        ctx: CUcontext,
        create: impl FnOnce(&mut K::Raw) -> Result<(), CudaError>,
    ) -> Result<Unique<K>, CudaError> {
        Core::create_out(owner, ctx, create).map(Unique)
    }

    /// Leaks it: the drop that follows releases nothing.
    pub(crate) fn leak(&mut self) {
        self.0.ownership = Ownership::Borrowed;
    }

    /// Gives up ownership and returns the raw handle (never fails: there are no clones;
    /// the `Result` matches [`Handle::into_raw`] for `handle_type!`).
    pub(crate) fn into_raw(self) -> Result<K::Raw, Unique<K>> {
        Ok(self.give_up())
    }

    /// Gives up ownership and returns the raw handle, its owner leaked with it.
    pub(crate) fn give_up(self) -> K::Raw {
        self.0.into_raw()
    }
}

impl<K: Kind> std::ops::Deref for Unique<K> {
    type Target = Core<K>;

    #[inline(always)]
    fn deref(&self) -> &Core<K> {
        &self.0
    }
}

/// Implements a public handle type declared in its family's file over [`Handle`] (shared:
/// `#[derive(Clone)] pub struct Stream(pub(crate) Handle<StreamKind>);`) or [`Unique`] (one
/// owner: `pub struct Event(pub(crate) Unique<EventKind>);`): `as_raw`, `into_raw`, `Debug`,
/// and with `adopt: OwnerArg`, `from_raw` and `borrowed` whose owner is given as `OwnerArg`
/// (`&Context` or `&'static Driver`) and turned into the kind's owner with `ToOwner`.
/// The macro declares no type: the struct, its documentation and its derives are written
/// where the family is.
macro_rules! handle_type {
    ($name:ident: Unique<$kind:ty> => $raw:ty $(, adopt: $arg:ty, $what:literal)?) => {
        $crate::resources::handle::handle_type!(@api $name, Unique, $kind, $raw $(, $arg, $what)?);
    };
    ($name:ident: $kind:ty => $raw:ty $(, adopt: $arg:ty, $what:literal)?) => {
        $crate::resources::handle::handle_type!(@api $name, Handle, $kind, $raw $(, $arg, $what)?);
    };
    (@api $name:ident, $storage:ident, $kind:ty, $raw:ty $(, $arg:ty, $what:literal)?) => {

        impl $name {
            /// The raw handle.
            #[inline(always)]
            pub fn as_raw(&self) -> $raw {
                self.0.raw()
            }

            /// The raw handle, live while this is borrowed (for the typed calls).
            #[inline(always)]
            #[allow(dead_code)]
            pub(crate) fn live(&self) -> $crate::typed::Live<'_, $raw> {
                self.0.live()
            }

            /// Gives up ownership: returns the raw handle, which cudrv will no longer
            /// release, if this is the only clone (always, for a handle with one owner);
            /// otherwise returns the handle unchanged. What the handle kept alive (its
            /// context, its module, ...) is kept alive for the rest of the process, so the
            /// raw handle is still valid: release it with the driver's own calls.
            pub fn into_raw(self) -> Result<$raw, $name> {
                self.0.into_raw().map_err($name)
            }

            $(
            #[doc = concat!("Adopts ", $what, ": the last clone releases it.")]
            ///
            /// # Safety
            #[doc = concat!("`raw` must be ", $what, " of `owner`, live, and released by nothing else.")]
            pub unsafe fn from_raw(owner: $arg, raw: $raw) -> $name {
                use $crate::resources::handle::{$storage, Ownership, ToOwner};
                $name($storage::new(owner.to_owner(), raw, Ownership::Owned))
            }

            #[doc = concat!("Uses ", $what, " someone else owns; cudrv never releases it.")]
            ///
            /// # Safety
            #[doc = concat!("`raw` must stay ", $what, " of `owner` while this handle and what is made from it are used.")]
            pub unsafe fn borrowed(owner: $arg, raw: $raw) -> $name {
                use $crate::resources::handle::{$storage, Ownership, ToOwner};
                $name($storage::new(owner.to_owner(), raw, Ownership::Borrowed))
            }
            )?
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt_debug(f)
            }
        }
    };
}
pub(crate) use handle_type;

/// Declares a kind and implements [`Kind`] for it; each form says only what is particular
/// to the kind.
///
/// Released by one checked call that takes the raw handle (and arguments after it, which
/// may read the owner: `release cuMemAddressFree |o| (o.size)`):
/// `kind!(StreamKind: CUstream = "Stream", owner Context, driver |o| o.driver(), context
/// |_o| None, release cuStreamDestroy)`. The call's name is used once, for both the call
/// and the [`Call`] a report names; a report names the raw handle as [`RawHandle::arg`]
/// does (a pointer, or an integer handle in hex). The usual case of that, an owner that is
/// a context (or has its `driver()` and `as_raw()`) whose release runs in it, is `owner
/// Context, in its context, release cuModuleUnload`.
///
/// Part of its parent, never released on its own: `part of Part<Module>, driver |o|
/// o.driver, released with cuModuleUnload`.
///
/// Released its own way: `owner ArrayOwner, driver |o| o.context.driver(), release { .. }`,
/// the braces holding the kind's `release_call`, `release` and whichever of the trait's
/// other methods it does not leave to their defaults.
macro_rules! kind {
    ($(#[$doc:meta])* $kind:ident: $raw:ty = $name:literal, owner $owner:ty, in its context,
     release $call:ident) => {
        $crate::resources::handle::kind!($(#[$doc])* $kind: $raw = $name, owner $owner, driver |o| o.driver(),
            context |o| Some(o.as_raw()), release $call);
    };
    ($(#[$doc:meta])* $kind:ident: $raw:ty = $name:literal, owner $owner:ty, driver |$d:ident| $driver:expr,
     context |$c:ident| $context:expr, release $call:ident $(|$ro:ident|)? $(($($extra:expr),*))?
     $(, on_drop |$od:ident| $on_drop:block)?) => {
        $crate::resources::handle::kind!(@impl $(#[$doc])* $kind, $raw, $name, $owner, |$d| $driver, $call, {
            fn release_context($c: &$owner) -> Option<$crate::sys::CUcontext> {
                $context
            }
            unsafe fn release(
                owner: &$owner,
                raw: $raw,
                _: $crate::resources::handle::Ownership,
            ) -> Result<(), $crate::error::CudaError> {
                $(let $ro = owner;)?
                // SAFETY: the core releases once, from the last clone (or the only owner).
                unsafe { <$kind as $crate::resources::handle::Kind>::driver(owner).pc().$call(raw $($(, $extra)*)?) }
            }
            $(fn on_drop($od: &mut $owner) $on_drop)?
        });
    };
    // A kind that is part of its parent and never released on its own (functions,
    // kernels, graph nodes): always held as borrowed; `$call` releases the parent.
    ($(#[$doc:meta])* $kind:ident: $raw:ty = $name:literal, part of $owner:ty, driver |$d:ident| $driver:expr,
     released with $call:ident) => {
        $crate::resources::handle::kind!(@impl $(#[$doc])* $kind, $raw, $name, $owner, |$d| $driver, $call, {
            /// Never called: a part is always held as borrowed.
            unsafe fn release(
                _: &$owner,
                _: $raw,
                _: $crate::resources::handle::Ownership,
            ) -> Result<(), $crate::error::CudaError> {
                Ok(())
            }
        });
    };
    ($(#[$doc:meta])* $kind:ident: $raw:ty = $name:literal, owner $owner:ty, driver |$d:ident| $driver:expr,
     release { $($rest:tt)* }) => {
        $crate::resources::handle::kind!(@impl $(#[$doc])* $kind, $raw, $name, $owner, |$d| $driver, , { $($rest)* });
    };
    // `$call`, if given, is the release call whatever the owner and ownership.
    (@impl $(#[$doc:meta])* $kind:ident, $raw:ty, $name:literal, $owner:ty, |$d:ident| $driver:expr,
     $($call:ident)?, { $($rest:tt)* }) => {
        $(#[$doc])*
        pub(crate) struct $kind;

        impl $crate::resources::handle::Kind for $kind {
            type Raw = $raw;
            type Owner = $owner;
            const NAME: &'static str = $name;
            #[inline(always)]
            fn driver($d: &$owner) -> &'static $crate::Driver {
                $driver
            }
            $(
            fn release_call(_: &$owner, _: $crate::resources::handle::Ownership) -> $crate::table::Call {
                $crate::call::$call
            }
            )?
            $($rest)*
        }
    };
}
pub(crate) use kind;

/// Turns what `from_raw`/`borrowed` are given into the kind's owner.
pub(crate) trait ToOwner<O> {
    fn to_owner(self) -> O;
}

impl<O: Clone> ToOwner<O> for &O {
    fn to_owner(self) -> O {
        self.clone()
    }
}

impl ToOwner<&'static Driver> for &'static Driver {
    fn to_owner(self) -> &'static Driver {
        self
    }
}
