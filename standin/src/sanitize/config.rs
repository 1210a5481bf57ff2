//! What the sanitizer checks: `CUDRV_STANDIN_SANITIZE`, a comma-separated list of
//! `races`, `init`, `shared`, `schedule=SEED` (`all`: the first three), read once per
//! process; a world's list may be set instead by `StandIn::sanitize`.

use std::sync::OnceLock;

/// The checks asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checks {
    /// Stream-order races: operations that touch the same bytes (one writing) with
    /// nothing ordering them.
    pub races: bool,
    /// Reads of device memory never written since it was allocated.
    pub init: bool,
    /// Shared-memory races inside a block, between barriers (`sanitize/kernel.rs`).
    pub shared: bool,
    /// Adversarial scheduling with this seed (`run/schedule.rs`; process-wide).
    pub schedule: Option<u64>,
}

/// The environment variable that turns the sanitizer on.
pub const VAR: &str = "CUDRV_STANDIN_SANITIZE";

impl Checks {
    /// Reads a list: `races`, `init`, `shared`, `all`, `schedule=SEED` (decimal or
    /// `0x` hexadecimal), separated by commas (spaces and empty items ignored). An unknown
    /// item is an error naming it.
    pub fn parse(list: &str) -> Result<Checks, String> {
        let mut c = Checks::default();
        for item in list.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            match item {
                "races" => c.races = true,
                "init" => c.init = true,
                "shared" => c.shared = true,
                "all" => (c.races, c.init, c.shared) = (true, true, true),
                _ => {
                    let seed = item.strip_prefix("schedule=").ok_or_else(|| format!("unknown check `{item}`"))?;
                    let n = match seed.strip_prefix("0x") {
                        Some(hex) => u64::from_str_radix(hex, 16),
                        None => seed.parse(),
                    };
                    c.schedule = Some(n.map_err(|_| format!("bad seed in `{item}`"))?);
                }
            }
        }
        Ok(c)
    }

    /// Whether any check is on.
    pub fn any(&self) -> bool {
        self.races || self.init || self.shared || self.schedule.is_some()
    }
}

/// The checks `CUDRV_STANDIN_SANITIZE` asks for, read once; a list that does not parse
/// turns nothing on and says why on stderr. When something is on, the summary at exit is
/// arranged (`report::at_exit`).
pub(crate) fn from_env() -> Checks {
    static FROM_ENV: OnceLock<Checks> = OnceLock::new();
    *FROM_ENV.get_or_init(|| {
        let Ok(list) = std::env::var(VAR) else { return Checks::default() };
        match Checks::parse(&list) {
            Ok(c) => {
                if c.any() {
                    super::report::at_exit();
                }
                if let Some(seed) = c.schedule {
                    crate::run::schedule::set(seed);
                }
                c
            }
            Err(e) => {
                eprintln!("cudrv-standin sanitizer: {VAR}={list}: {e}; nothing is checked");
                Checks::default()
            }
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test fails by panicking
mod tests {
    use super::*;

    #[test]
    fn lists_parse_and_unknown_items_are_refused() {
        assert_eq!(Checks::parse("").unwrap(), Checks::default());
        assert_eq!(Checks::parse("races").unwrap(), Checks { races: true, ..Checks::default() });
        assert_eq!(
            Checks::parse(" all , schedule=0x10").unwrap(),
            Checks { races: true, init: true, shared: true, schedule: Some(16) }
        );
        assert_eq!(Checks::parse("init,schedule=7").unwrap().schedule, Some(7));
        assert!(Checks::parse("race").unwrap_err().contains("`race`"));
        assert!(Checks::parse("schedule=x").is_err());
    }
}
