//! Small per-world settings with no family of their own (`ctx_device_misc.rs` and
//! `coredump_logs.rs` have the entry points): the coredump attributes, application-wide
//! and per context, and the registered log and asynchronous-notification callbacks.
//!
//! The stand-in never writes a coredump, logs nothing and sends no notification: these
//! are kept so that programs that set, read back and unregister them see what they set.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{c_int, c_uint};

/// The longest coredump file or pipe name, with its NUL (the CUDA documentation: "up to
/// 1023 characters").
pub(crate) const COREDUMP_NAME_MAX: usize = 1024;

/// The coredump attributes (`CUcoredumpSettings`) of the application or of one context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Coredump {
    /// `CU_COREDUMP_ENABLE_ON_EXCEPTION` (default false).
    pub(crate) on_exception: bool,
    /// `CU_COREDUMP_TRIGGER_HOST` (default true, deprecated since 12.5).
    pub(crate) trigger_host: bool,
    /// `CU_COREDUMP_LIGHTWEIGHT` (default false, deprecated since 12.5).
    pub(crate) lightweight: bool,
    /// `CU_COREDUMP_ENABLE_USER_TRIGGER` (default false; application-wide only).
    pub(crate) user_trigger: bool,
    /// `CU_COREDUMP_FILE`, without its NUL (default empty, as the driver reads it back,
    /// though the documentation names `core.cuda.HOSTNAME.PID`).
    pub(crate) file: Vec<u8>,
    /// `CU_COREDUMP_PIPE`, without its NUL (default empty, as the driver reads it back;
    /// application-wide only).
    pub(crate) pipe: Vec<u8>,
    /// `CU_COREDUMP_GENERATION_FLAGS` (default `CU_COREDUMP_DEFAULT_FLAGS`, 0).
    pub(crate) flags: c_uint,
}

impl Coredump {
    /// The defaults the driver reads back (`coredump.global_defaults`): no dump on
    /// exception, host trigger on, not lightweight, no user trigger, no file or pipe name,
    /// generation flags 0.
    pub(crate) fn defaults() -> Coredump {
        Coredump {
            on_exception: false,
            trigger_host: true,
            lightweight: false,
            user_trigger: false,
            file: Vec::new(),
            pipe: Vec::new(),
            flags: 0,
        }
    }
}

/// What a world keeps of these settings.
pub(crate) struct Misc {
    /// The application-wide coredump attributes (made on first use).
    global: Option<Coredump>,
    /// The attributes of contexts that set their own, by context handle.
    contexts: BTreeMap<u64, Coredump>,
    /// Registered `cuLogsRegisterCallback` handles.
    pub(crate) log_callbacks: BTreeSet<u64>,
    /// Registered `cuDeviceRegisterAsyncNotification` handles, with their device.
    pub(crate) async_callbacks: BTreeMap<u64, c_int>,
}

impl Misc {
    /// Nothing set, nothing registered.
    pub(crate) const fn new() -> Misc {
        Misc {
            global: None,
            contexts: BTreeMap::new(),
            log_callbacks: BTreeSet::new(),
            async_callbacks: BTreeMap::new(),
        }
    }

    /// The application-wide coredump attributes.
    pub(crate) fn global(&mut self) -> &mut Coredump {
        self.global.get_or_insert_with(Coredump::defaults)
    }

    /// The coredump attributes of context `ctx` created with `ctx_flags`: its own once it
    /// set one, else the application's, with `CU_CTX_COREDUMP_ENABLE` and
    /// `CU_CTX_USER_COREDUMP_ENABLE` turning on `on_exception` and `user_trigger`.
    pub(crate) fn of_context(&mut self, ctx: u64, ctx_flags: c_uint) -> Coredump {
        if let Some(c) = self.contexts.get(&ctx) {
            return c.clone();
        }
        let mut c = self.global().clone();
        c.on_exception |= ctx_flags & COREDUMP_ENABLE != 0;
        c.user_trigger |= ctx_flags & USER_COREDUMP_ENABLE != 0;
        c
    }

    /// Keeps `c` as context `ctx`'s own attributes.
    pub(crate) fn set_context(&mut self, ctx: u64, c: Coredump) {
        self.contexts.insert(ctx, c);
    }

    /// Gives context `ctx` (created with `ctx_flags`) its own copy of what it sees now, if
    /// it has none: a context keeps the application's settings of its creation, as the
    /// driver answered (`coredump.set_global_lightweight_seen_by_context`).
    pub(crate) fn keep_for_context(&mut self, ctx: u64, ctx_flags: c_uint) {
        if !self.contexts.contains_key(&ctx) {
            let c = self.of_context(ctx, ctx_flags);
            self.contexts.insert(ctx, c);
        }
    }
}

/// `CU_CTX_COREDUMP_ENABLE`.
const COREDUMP_ENABLE: c_uint = cudrv::sys::CUctx_flags::CU_CTX_COREDUMP_ENABLE.0;
/// `CU_CTX_USER_COREDUMP_ENABLE`.
const USER_COREDUMP_ENABLE: c_uint = cudrv::sys::CUctx_flags::CU_CTX_USER_COREDUMP_ENABLE.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_context_sees_the_global_settings_and_its_creation_flags_until_it_sets_its_own() {
        let mut m = Misc::new();
        m.global().lightweight = true;
        let c = m.of_context(16, COREDUMP_ENABLE);
        assert!(c.lightweight && c.on_exception && !c.user_trigger);
        let mut own = c.clone();
        own.on_exception = false;
        m.set_context(16, own);
        m.global().lightweight = false;
        assert!(!m.of_context(16, COREDUMP_ENABLE).on_exception);
        assert!(m.of_context(16, 0).lightweight);
        assert!(!m.of_context(32, 0).lightweight);
    }

    #[test]
    fn the_defaults_are_the_recorded_ones_with_no_file_or_pipe_name() {
        // As the real driver reads them back (coredump.global_defaults, driver 580.159.04).
        let c = Coredump::defaults();
        assert!(c.file.is_empty() && c.pipe.is_empty());
        assert!(!c.on_exception && c.trigger_host && !c.lightweight && !c.user_trigger && c.flags == 0);
    }
}
