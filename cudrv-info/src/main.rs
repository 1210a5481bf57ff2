//! cudrv-info's binary: [`cudrv_info::run_cli`] with the process's arguments.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether standard output was closed when the process started (`cudrv-info >&-`). Rust's
/// start-up code opens `/dev/null` on a closed standard descriptor before `main` runs, so
/// every write would then succeed and the report be lost unnoticed: this is recorded
/// before that, by [`record_closed_stdout`].
static STDOUT_CLOSED_AT_START: AtomicBool = AtomicBool::new(false);

/// Records whether descriptor 1 is open. Runs from `.init_array`, as the loader calls
/// the program's constructors, before Rust's start-up code.
#[cfg(target_os = "linux")]
extern "C" fn record_closed_stdout() {
    // SAFETY: F_GETFD only reads the descriptor's flags; it fails (EBADF) only when the
    // descriptor is not open, and touches no memory of ours.
    let closed = unsafe { libc::fcntl(libc::STDOUT_FILENO, libc::F_GETFD) } == -1;
    STDOUT_CLOSED_AT_START.store(closed, Ordering::Relaxed);
}

/// The constructor entry for [`record_closed_stdout`]. `#[used]` keeps it in the
/// binary; the dynamic loader calls every function in `.init_array` before `main`.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static RECORD_CLOSED_STDOUT: extern "C" fn() = record_closed_stdout;

fn main() -> ExitCode {
    ExitCode::from(cudrv_info::run_cli(std::env::args_os(), STDOUT_CLOSED_AT_START.load(Ordering::Relaxed)))
}
