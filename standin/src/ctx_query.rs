//! Context queries and settings: `cuCtxGetApiVersion`, `cuCtxGetFlags`,
//! `cuCtxGetLimit`/`SetLimit` and `cuCtxGetStreamPriorityRange`. Answers as
//! driver-facts.md ("Edge cases": API version 3020; stack limit 1024; priorities 0 to -5; an unknown limit is CUDA_ERROR_INVALID_VALUE).

use std::ffi::{c_int, c_uint};
use std::sync::Arc;

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, write};
use crate::model::context::Context;
use crate::run::lock::lock;
use crate::world::World;

/// The least (numerically greatest) stream priority.
pub(crate) const LEAST_PRIORITY: c_int = 0;
/// The greatest (numerically least) stream priority.
pub(crate) const GREATEST_PRIORITY: c_int = -5;

/// `ctx`, or the current context for NULL; a live one.
fn context_arg(w: &World, ctx: CUcontext) -> Result<Arc<Context>, CUresult> {
    let c = match from_ptr(ctx) {
        0 => w.contexts.top().ok_or(CUresult::CUDA_ERROR_INVALID_CONTEXT)?,
        h => w.contexts.lookup(h)?,
    };
    c.alive()?;
    Ok(c)
}

pub(crate) unsafe fn cu_ctx_get_api_version(w: &World, ctx: CUcontext, version: *mut c_uint) -> CUresult {
    status(non_null(version).and_then(|()| {
        // facts (conformance): a destroyed context answers INVALID_CONTEXT here.
        context_arg(w, ctx).map_err(|e| match e {
            CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED => CUresult::CUDA_ERROR_INVALID_CONTEXT,
            e => e,
        })?;
        write(version, 3020)
    }))
}

/// `cuCtxGetFlags`: a created context's creation flags exactly; a primary context's flags
/// with CU_CTX_MAP_HOST, which the driver adds there only (driver-facts.md, "Contexts":
/// the primary context's flags are 8; a created context's are what it was created with).
pub(crate) unsafe fn cu_ctx_get_flags(w: &World, flags: *mut c_uint) -> CUresult {
    let r = non_null(flags).and_then(|()| {
        let c = w.contexts.current()?;
        let f = match c.is_primary() {
            true => {
                let own = match c.flags_set() {
                    Some(f) => f,
                    None => w.primaries.state(c.device, true)?.0,
                };
                own | CUctx_flags::CU_CTX_MAP_HOST.0
            }
            false => c.flags(),
        };
        write(flags, f)
    });
    status(r)
}

type L = CUlimit;

/// The default value of `limit`; `None` for a limit number the driver does not have.
fn default_limit(limit: L) -> Option<usize> {
    let v = match limit {
        L::CU_LIMIT_STACK_SIZE => 1024,
        L::CU_LIMIT_PRINTF_FIFO_SIZE => 1 << 20,
        L::CU_LIMIT_MALLOC_HEAP_SIZE => 8 << 20,
        L::CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH => 2,
        L::CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT => 2048,
        L::CU_LIMIT_MAX_L2_FETCH_GRANULARITY => 64,
        L::CU_LIMIT_SHMEM_SIZE => 227 << 10,
        // The H200's default (context.limit_persisting_l2): 11.25 MiB.
        L::CU_LIMIT_PERSISTING_L2_CACHE_SIZE => 11_796_480,
        L::CU_LIMIT_CIG_ENABLED | L::CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED | L::CU_LIMIT_PER_BLOCK_MEMORY_SIZE => 0,
        _ => return None,
    };
    Some(v)
}

/// The per-thread stack size of context `ctx` (`CU_LIMIT_STACK_SIZE`, as set or its
/// default), for the launches of PTX kernels in it.
pub(crate) fn stack_size(w: &World, ctx: u64) -> u64 {
    let set = lock(&w.limits).get(&(ctx, L::CU_LIMIT_STACK_SIZE.0)).copied();
    set.or(default_limit(L::CU_LIMIT_STACK_SIZE)).unwrap_or(1024) as u64
}

pub(crate) unsafe fn cu_ctx_get_limit(w: &World, value: *mut usize, limit: L) -> CUresult {
    let r = non_null(value).and_then(|()| {
        let c = w.contexts.current()?;
        let default = default_limit(limit).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        let set = lock(&w.limits).get(&(c.handle, limit.0)).copied();
        write(value, set.unwrap_or(default))
    });
    status(r)
}

/// `cuCtxSetLimit`: kept for the current context (and changes nothing else); the shared
/// memory size and CIG state are read-only (CUDA_ERROR_INVALID_VALUE).
pub(crate) unsafe fn cu_ctx_set_limit(w: &World, limit: L, value: usize) -> CUresult {
    let r = w.contexts.current().and_then(|c| {
        if default_limit(limit).is_none() || matches!(limit, L::CU_LIMIT_SHMEM_SIZE | L::CU_LIMIT_CIG_ENABLED) {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        lock(&w.limits).insert((c.handle, limit.0), value);
        Ok(())
    });
    status(r)
}

/// `cuCtxGetStreamPriorityRange`: 0 and -5; either out-pointer may be null.
pub(crate) unsafe fn cu_ctx_get_stream_priority_range(w: &World, least: *mut c_int, greatest: *mut c_int) -> CUresult {
    let r = w.contexts.current().and_then(|_| {
        if !least.is_null() {
            write(least, LEAST_PRIORITY)?;
        }
        if !greatest.is_null() {
            write(greatest, GREATEST_PRIORITY)?;
        }
        Ok(())
    });
    status(r)
}

/// `cuCtxGetSharedMemConfig` (deprecated): the emulated device (sm_90) has no configurable
/// bank size; it reports four-byte banks (to be checked: conformance
/// `context.shared_mem_config_get`).
pub(crate) unsafe fn cu_ctx_get_shared_mem_config(w: &World, config: *mut CUsharedconfig) -> CUresult {
    let r = non_null(config).and_then(|()| {
        w.contexts.current()?;
        write(config, CUsharedconfig::CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE)
    });
    status(r)
}

/// `cuCtxSetSharedMemConfig` (deprecated): a known value is accepted and changes nothing
/// (the device's bank size is fixed); another is CUDA_ERROR_INVALID_VALUE.
pub(crate) unsafe fn cu_ctx_set_shared_mem_config(w: &World, config: CUsharedconfig) -> CUresult {
    let r = w.contexts.current().and_then(|_| {
        if config.0 > 2 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        Ok(())
    });
    status(r)
}
