//! The state of an inter-process event, kept in a file both processes read and write
//! (the stand-in has no shared device): two numbers, how many records have been made of
//! the event and the last record that has completed. A wait polls the file until the
//! record it waits for has completed. Writes replace the file whole (write a temporary
//! file, then rename), so a reader never sees half of one.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// The file of event `handle` exported by process `pid`.
pub(crate) fn path(pid: u32, handle: u64) -> PathBuf {
    std::env::temp_dir().join(format!("cudrv-standin-ipc-event-{pid}-{handle:x}"))
}

/// `(records, completed)`; `None` if the file is gone or unreadable.
pub(crate) fn read(path: &Path) -> Option<(u64, u64)> {
    let bytes = std::fs::read(path).ok()?;
    let (r, c) = bytes.split_at_checked(8)?;
    let r = u64::from_le_bytes(r.try_into().ok()?);
    let c = u64::from_le_bytes(c.get(..8)?.try_into().ok()?);
    Some((r, c))
}

/// Replaces the state with `(records, completed)`.
pub(crate) fn write(path: &Path, records: u64, completed: u64) -> std::io::Result<()> {
    let mut bytes = records.to_le_bytes().to_vec();
    bytes.extend_from_slice(&completed.to_le_bytes());
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// A new record: its number (what a wait made after it waits for).
pub(crate) fn begin_record(path: &Path) -> u64 {
    let (r, c) = read(path).unwrap_or((0, 0));
    let n = r.saturating_add(1);
    let _ = write(path, n, c);
    n
}

/// Record `n` has completed.
pub(crate) fn complete(path: &Path, n: u64) {
    if let Some((r, c)) = read(path) {
        if c < n {
            let _ = write(path, r.max(n), n);
        }
    }
}

/// Whether the newest record (as of now) has completed; a file that is gone (the
/// exporter destroyed the event) counts as complete.
pub(crate) fn is_complete(path: &Path) -> bool {
    read(path).is_none_or(|(r, c)| c >= r)
}

/// The newest record's number (0 if none, or the file is gone).
pub(crate) fn newest(path: &Path) -> u64 {
    read(path).map_or(0, |(r, _)| r)
}

/// Waits until record `n` has completed (or the file is gone).
pub(crate) fn wait(path: &Path, n: u64) {
    while read(path).is_some_and(|(_, c)| c < n) {
        std::thread::sleep(Duration::from_micros(500));
    }
}
