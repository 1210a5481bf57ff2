//! The runner's own temporary folder (output and gated-log files of every cell), removed
//! when dropped.

use std::fs::DirBuilder;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// A fresh folder under the system temporary folder (`TMPDIR`), private to this user.
#[derive(Debug)]
pub struct Scratch {
    path: PathBuf,
}

impl Scratch {
    /// Creates it. Fails only if no fresh name could be created in the temporary folder.
    pub fn new() -> io::Result<Scratch> {
        let base = std::env::temp_dir();
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let mut builder = DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        let mut last = io::Error::other("no attempt made");
        for attempt in 0..100u32 {
            let path = base.join(format!("cudrv-matrix.{}.{nanos:x}.{attempt}", std::process::id()));
            match builder.create(&path) {
                Ok(()) => return Ok(Scratch { path }),
                Err(e) => last = e,
            }
        }
        Err(io::Error::new(last.kind(), format!("cannot create a folder in {}: {last}", base.display())))
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Nothing sensible is left to do if it cannot be removed.
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
