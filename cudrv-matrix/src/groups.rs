//! The process groups of the running cells, and what stops them: the end of a cell, its
//! timeout, and SIGINT/SIGTERM/SIGHUP to the runner.
//!
//! Every cell's command is the leader of a process group of its own (`process-wrap`), so
//! whatever it starts (`sh -c 'sleep 777; true'`: the `sleep`) is killed with it. A cell
//! is registered here from its start to its end; a signal to the runner kills every
//! registered group and refuses to start new cells.

use std::io;
use std::process::Command;
use std::sync::{Mutex, MutexGuard, PoisonError};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use process_wrap::std::{ProcessGroup, StdChildWrapper, StdCommandWrap};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// The signals that stop the runner, and its exit status for each (128 + the number).
pub const STOP_SIGNALS: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

#[derive(Debug)]
struct State {
    /// The process group ids of the running cells.
    live: Vec<i32>,
    /// The signal that stopped the runner, if one did.
    stopped: Option<i32>,
}

/// The running cells' process groups.
#[derive(Debug)]
pub struct Groups {
    state: Mutex<State>,
}

/// Why a cell did not start.
#[derive(Debug)]
pub enum StartError {
    /// The runner was stopped by a signal.
    Stopped,
    /// The command could not be started.
    Spawn(io::Error),
}

impl Groups {
    /// No group yet, not stopped.
    pub const fn new() -> Groups {
        Groups { state: Mutex::new(State { live: Vec::new(), stopped: None }) }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is a list and a flag, consistent after any panic.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts `command` as the leader of a new process group and registers the group.
    /// Refused once the runner was stopped: a signal can never miss a cell.
    pub fn start(&self, command: Command) -> Result<(Box<dyn StdChildWrapper>, i32), StartError> {
        let mut state = self.lock();
        if state.stopped.is_some() {
            return Err(StartError::Stopped);
        }
        let mut wrapped = StdCommandWrap::from(command);
        wrapped.wrap(ProcessGroup::leader());
        let child = wrapped.spawn().map_err(StartError::Spawn)?;
        let pgid =
            i32::try_from(child.id()).map_err(|_| StartError::Spawn(io::Error::other("process id out of range")))?;
        state.live.push(pgid);
        Ok((child, pgid))
    }

    /// Kills the process group `pgid` (SIGKILL) if it is still registered. A group whose
    /// members are all gone is not an error.
    pub fn kill(&self, pgid: i32) {
        let state = self.lock();
        if state.live.contains(&pgid) {
            kill_group(pgid);
        }
    }

    /// The cell of `pgid` ended: kills whatever is left of its group and forgets it.
    pub fn finish(&self, pgid: i32) {
        let mut state = self.lock();
        if let Some(at) = state.live.iter().position(|&g| g == pgid) {
            kill_group(pgid);
            state.live.swap_remove(at);
        }
    }

    /// Stops the runner: kills every registered group and refuses new cells. The first
    /// signal is the one [`Groups::stopped`] reports.
    pub fn stop_all(&self, signal: i32) {
        let mut state = self.lock();
        state.stopped.get_or_insert(signal);
        for &pgid in &state.live {
            kill_group(pgid);
        }
    }

    /// The signal that stopped the runner, if one did.
    pub fn stopped(&self) -> Option<i32> {
        self.lock().stopped
    }
}

fn kill_group(pgid: i32) {
    // ESRCH (every member already gone) is the expected case at a cell's end.
    let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
}

/// Handles SIGINT, SIGTERM and SIGHUP from now on: each one stops every cell of `groups`
/// (the runner then removes its scratch folder and exits with 128 + the signal). Returns
/// a handle that ends the handling when closed; an error if the handlers could not be
/// installed.
pub fn handle_signals(groups: &'static Groups) -> io::Result<signal_hook::iterator::Handle> {
    let mut signals = signal_hook::iterator::Signals::new(STOP_SIGNALS)?;
    let handle = signals.handle();
    std::thread::Builder::new().name("signals".into()).spawn(move || {
        for signal in signals.forever() {
            groups.stop_all(signal);
        }
    })?;
    Ok(handle)
}
