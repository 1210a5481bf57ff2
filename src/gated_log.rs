//! The record of calls to entries the driver does not resolve, for compatibility matrices
//! (`cudrv-matrix`): with `CUDRV_GATED_LOG=<file>` set, the first call in the process to
//! each unresolved entry appends one line `<entry>\t<why>` (`cuMemcpyBatchAsync\tneeds
//! driver 12.8`) to that file. Several processes may append to one file. Nothing is
//! recorded without the variable, and the calls' results are the same either way.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use crate::table::{Entry, NAME_COUNT, VARIANT_COUNT};
use crate::Driver;

/// The variable naming the log file.
pub const ENV_GATED_LOG: &str = "CUDRV_GATED_LOG";

static SEEN: [AtomicBool; VARIANT_COUNT + NAME_COUNT] = [const { AtomicBool::new(false) }; VARIANT_COUNT + NAME_COUNT];
static PATH: OnceLock<Option<std::path::PathBuf>> = OnceLock::new();

/// Records a call to `entry`, which `driver` does not resolve (once per entry).
pub(crate) fn record(driver: &Driver, entry: Entry) {
    let Some(path) = PATH.get_or_init(|| std::env::var_os(ENV_GATED_LOG).map(Into::into)) else {
        return;
    };
    let index = match entry {
        Entry::Variant(i) => i,
        Entry::Name(i) => VARIANT_COUNT + i,
    };
    let first = SEEN.get(index).is_some_and(|seen| !seen.swap(true, Ordering::Relaxed));
    let Some(info) = driver.info(entry).filter(|_| first) else {
        return;
    };
    let line = format!("{}\t{}\n", info.name, info.availability);
    // One write of one short line to a file opened for appending: lines from several
    // processes do not interleave. A failure to record is not the program's failure.
    if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
        let _ = file.write_all(line.as_bytes());
    }
}
