//! Holding a stream back from the host, for the examples that show what safe code cannot
//! do to memory that queued work still uses.

use std::sync::mpsc;
use std::time::Duration;

use cudrv::Stream;

/// Holds `stream` back until the returned sender sends (or is dropped).
pub fn gate(stream: &Stream) -> cudrv::Result<mpsc::Sender<()>> {
    let (tx, rx) = mpsc::channel::<()>();
    stream.launch_host_fn(move || {
        let _ = rx.recv();
    })?;
    Ok(tx)
}

/// Opens the gate from another thread a little later.
pub fn open_later(tx: mpsc::Sender<()>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        let _ = tx.send(());
    })
}
