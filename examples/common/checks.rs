//! The pass/fail counter the checking examples share (`handles_check`, `real_driver_check`,
//! `dependable_check`): one line per check, `[ok]` or `[FAILED]`.
#![allow(dead_code)]

/// Counts the checks that passed and failed.
#[derive(Debug, Default)]
pub struct Checks {
    pub passed: usize,
    pub failed: usize,
}

impl Checks {
    /// Prints `[ok] what` or `[FAILED] what` and counts it.
    pub fn check(&mut self, ok: bool, what: impl std::fmt::Display) {
        println!("[{}] {what}", if ok { "ok" } else { "FAILED" });
        if ok {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
    }

    /// A check that `r` is `Ok`; returns its value.
    pub fn ok<T, E: std::fmt::Display>(&mut self, r: Result<T, E>, what: &str) -> Option<T> {
        match r {
            Ok(v) => {
                self.check(true, what);
                Some(v)
            }
            Err(e) => {
                self.check(false, format!("{what}: {e}"));
                None
            }
        }
    }
}
