//! Reports: a line of text on stderr, a JSON line appended to the file
//! `CUDRV_STANDIN_SANITIZE_LOG` names, a count for the summary at process exit, after
//! which a process that reported anything exits with status
//! `CUDRV_STANDIN_SANITIZE_EXITCODE` (default 66).

use std::ffi::{c_int, c_void};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

/// The exit status of a process that reported, unless `CUDRV_STANDIN_SANITIZE_EXITCODE`
/// says otherwise.
pub(crate) const DEFAULT_EXIT_CODE: c_int = 66;

/// One report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// What was found: `race`, `uninit` (a read of device memory never written), `shared`
    /// (a shared-memory race in a block) or `block_race` (blocks of one launch).
    pub kind: &'static str,
    /// The text written to stderr.
    pub text: String,
    /// The JSON line written to the log (no newline).
    pub json: String,
}

/// Reports made in this process, for the summary at exit (process-wide, as the exit is).
static REPORTED: AtomicU64 = AtomicU64::new(0);

/// Writes `r` to stderr and the log, and counts it for the exit status if `counted`.
pub(crate) fn emit(r: &Report, counted: bool) {
    if counted {
        REPORTED.fetch_add(1, Ordering::Relaxed);
    }
    eprintln!("{}", r.text);
    if let Some(path) = std::env::var_os("CUDRV_STANDIN_SANITIZE_LOG") {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(&path);
        match file {
            Ok(mut f) => {
                let _ = writeln!(f, "{}", r.json);
            }
            Err(e) => eprintln!("cudrv-standin sanitizer: cannot write {}: {e}", path.to_string_lossy()),
        }
    }
}

/// `s` as a JSON string, quotes included.
pub(crate) fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

unsafe extern "C" {
    fn atexit(f: extern "C" fn()) -> c_int;
    fn fflush(stream: *mut c_void) -> c_int;
    fn _exit(status: c_int) -> !;
}

/// Arranges the summary at process exit (once: the caller is a `OnceLock`'s initialiser).
pub(crate) fn at_exit() {
    // SAFETY: `summary` is a plain function that lives as long as the process (the
    // stand-in's library is never unloaded while its driver is in use).
    let _ = unsafe { atexit(summary) };
}

/// The status to exit with after reporting.
fn exit_code() -> c_int {
    std::env::var("CUDRV_STANDIN_SANITIZE_EXITCODE")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(DEFAULT_EXIT_CODE)
}

/// At exit: if anything was reported, one line saying how much, then the process ends with
/// [`exit_code`] (C streams flushed first, as `exit` would).
extern "C" fn summary() {
    let _ = std::panic::catch_unwind(|| {
        let n = REPORTED.load(Ordering::Relaxed);
        if n == 0 {
            return;
        }
        let code = exit_code();
        let _ = std::io::stdout().flush();
        eprintln!("cudrv-standin sanitizer: {n} report(s); exit status {code}");
        // SAFETY: NULL flushes every C output stream; then the process ends, as it was
        // ending, with the sanitizer's status.
        unsafe {
            fflush(std::ptr::null_mut());
            _exit(code)
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_escape_what_json_needs() {
        assert_eq!(json_string("a\"b\\c\nd\u{1}"), "\"a\\\"b\\\\c\\nd\\u0001\"");
    }
}
