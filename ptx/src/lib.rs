//! A PTX front end and executor in pure Rust.
//!
//! [`Module::load`] parses the PTX text that NVRTC and nvcc (CUDA 12.x/13.0) emit for
//! ordinary CUDA C++ kernels and pre-decodes it (registers to slots, labels to instruction
//! indices, symbols to their state space). [`Module::launch`] runs a kernel over a grid:
//! blocks in parallel on the host's cores, the threads of a block warp by warp in lockstep
//! over an active mask, so barriers and warp-synchronous instructions (`shfl.sync`,
//! `vote.sync`, `match.sync`, `redux.sync`) behave as on the GPU. Device memory is the
//! embedder's, through [`GlobalMemory`]; module globals get the addresses the embedder
//! gives them ([`Module::globals`], [`Module::bind_globals`]).
//!
//! One front end serves two lighter readings of a text: [`Header::read`] reads its opening
//! directives only (`.version`, `.target`: is it PTX, and for which ISA and targets), and
//! [`Declarations::read`] its module-scope declarations (kernels with their parameters'
//! layout, globals, references) without decoding the functions' bodies, so it reads a
//! text whose instructions the executor does not run; [`Module::load`] reads the same
//! declarations ([`Module::declarations`]) with the same code before decoding the bodies.
//!
//! ```
//! use cudrv_ptx::{HostMemory, Module};
//! let ptx = r#"
//! .version 8.0
//! .target sm_90
//! .address_size 64
//! .visible .entry twice(.param .u64 p, .param .u32 n)
//! {
//!     .reg .pred %p<2>;
//!     .reg .b32 %r<6>;
//!     .reg .b64 %rd<5>;
//!     ld.param.u64 %rd1, [p];
//!     ld.param.u32 %r2, [n];
//!     mov.u32 %r3, %tid.x;
//!     setp.ge.u32 %p1, %r3, %r2;
//!     @%p1 bra $L_end;
//!     cvta.to.global.u64 %rd2, %rd1;
//!     mul.wide.u32 %rd3, %r3, 4;
//!     add.s64 %rd4, %rd2, %rd3;
//!     ld.global.u32 %r4, [%rd4];
//!     shl.b32 %r5, %r4, 1;
//!     st.global.u32 [%rd4], %r5;
//! $L_end:
//!     ret;
//! }
//! "#;
//! let module = Module::load(ptx)?;
//! let mut mem = HostMemory::new();
//! let data: Vec<u8> = [1u32, 2, 3].iter().flat_map(|v| v.to_le_bytes()).collect();
//! let buf = mem.alloc_from(&data);
//! module.launch("twice", [1, 1, 1], [32, 1, 1], 0, &[&buf.to_le_bytes(), &3u32.to_le_bytes()], &mem)?;
//! assert_eq!(mem.bytes(buf, 12).unwrap(), [2u32, 4, 6].iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod alu;
pub mod approx;
mod compiled;
mod exec;
mod exec_observe;
pub mod float;
pub mod instructions;
mod lanes;
mod memory;
mod module;
#[cfg(feature = "native")]
mod native;
#[cfg(feature = "native")]
mod native_check;
#[cfg(feature = "native")]
mod native_emit;
#[cfg(feature = "native")]
mod native_forms;
pub mod observe;
mod parse;
mod shared_modules;
mod texture;
mod texture_desc;
mod texture_fixed;
mod video;
mod windows;

pub use exec::{CompileStats, LaunchStats, MAX_LOCAL_PER_THREAD};
pub use memory::{consecutive_words, BadAddress, Fault, GlobalMemory, HostMemory, Windows};
pub use module::{
    Declarations, Executor, Global, KernelDecl, KernelInfo, KernelParam, Module, Reference, ReferenceKind,
};
pub use observe::{Access, AccessKind, BlockObserver, Event, Observer, Space, WarpAccess};
pub use parse::{Header, PtxError};
pub use texture_desc::{Address, Format, Texture};
pub use windows::{LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW};
