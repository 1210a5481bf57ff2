//! Driver version numbers: the driver's integer form (`13000`), semver, and `X.Y` text.

use semver::{Version, VersionReq};

/// `13000` -> `13.0.0`, `12040` -> `12.4.0`, `11080` -> `11.8.0`.
pub fn to_semver(v: u32) -> Version {
    Version::new(u64::from(v / 1000), u64::from((v % 1000) / 10), u64::from(v % 10))
}

/// `13010` -> `"13.1"`: how versions are named in messages.
pub fn display(v: u32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

/// Parses `"12.4"`, `"12.4.0"`, `"12"` or the driver's integer form `"12040"`.
pub fn parse(text: &str) -> Option<u32> {
    let t = text.trim();
    if !t.contains('.') && t.len() >= 4 {
        return t.parse().ok();
    }
    let mut parts = t.split('.');
    let major: u32 = parts.next()?.parse().ok()?;
    let minor: u32 = match parts.next() {
        Some(m) => m.parse().ok()?,
        None => 0,
    };
    let patch: u32 = match parts.next() {
        Some(p) => p.parse().ok()?,
        None => 0,
    };
    if parts.next().is_some() || minor > 99 || patch > 9 || major > 999 {
        return None;
    }
    Some(major * 1000 + minor * 10 + patch)
}

/// The error of [`crate::Driver::require`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequireError {
    /// The requirement text is not a semver requirement.
    #[error("`{text}` is not a version requirement (expected e.g. \">=12.4\"): {reason}")]
    Invalid {
        /// The requirement as given.
        text: String,
        /// Why semver refused it.
        reason: String,
    },
    /// The driver's version does not satisfy it.
    #[error("this program needs CUDA driver {required}; the driver is {found}")]
    Unsatisfied {
        /// The requirement as given (`>=12.4`).
        required: String,
        /// The driver's version as cudrv uses it (capped by `CUDRV_MAX_DRIVER_VERSION`).
        found: String,
    },
}

/// Checks `version` (the driver's integer form) against a semver requirement.
pub fn require(version: u32, requirement: &str) -> Result<(), RequireError> {
    let req = VersionReq::parse(requirement)
        .map_err(|e| RequireError::Invalid { text: requirement.to_string(), reason: e.to_string() })?;
    if req.matches(&to_semver(version)) {
        Ok(())
    } else {
        Err(RequireError::Unsatisfied { required: requirement.to_string(), found: display(version) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_driver_numbers() {
        assert_eq!(to_semver(13000), Version::new(13, 0, 0));
        assert_eq!(to_semver(12040), Version::new(12, 4, 0));
        assert_eq!(display(13010), "13.1");
        assert_eq!(parse("12.4"), Some(12040));
        assert_eq!(parse("13"), Some(13000));
        assert_eq!(parse("11.8.0"), Some(11080));
        assert_eq!(parse("12040"), Some(12040));
        assert_eq!(parse("twelve"), None);
        assert_eq!(parse("12.4.5.6"), None);
        assert_eq!(parse(""), None);
    }

    #[test]
    fn require_checks_and_explains() {
        assert!(require(13000, ">=12.4").is_ok());
        let e = require(12000, ">=12.4").unwrap_err();
        assert_eq!(e.to_string(), "this program needs CUDA driver >=12.4; the driver is 12.0");
        assert!(matches!(require(13000, "banana"), Err(RequireError::Invalid { .. })));
    }
}
