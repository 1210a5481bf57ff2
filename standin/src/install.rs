//! [`install`]: the stand-in as cudrv's process-wide driver, in one line.

use std::sync::OnceLock;

use cudrv::{Driver, LoadError, LoadOptions};

use crate::StandIn;

/// Why [`install`] could not make the stand-in cudrv's process-wide driver.
///
/// Every variant is final for the process: cudrv's process-wide driver is chosen once, so
/// a later [`install`] returns the same error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InstallError {
    /// Another driver became cudrv's process-wide driver before the first [`install`]:
    /// something called `cudrv::init()`, `cudrv::driver()` or a free `cudrv::p`/`pc`/`pw`
    /// function first and loaded `CUDRV_LIBCUDA` or the system's `libcuda.so.1`, or the
    /// program called `cudrv::set_driver` with a driver of its own.
    #[error(
        "cudrv's process-wide driver is already {driver} (CUDA {version}), set before \
         cudrv_standin::install(): call install() before anything that loads the driver \
         (cudrv::init, cudrv::driver, the free cudrv::p/pc/pw functions) or sets it \
         (cudrv::set_driver)"
    )]
    OtherDriver {
        /// Where that driver came from ([`Driver::source`]).
        driver: String,
        /// Its version, as cudrv uses it ([`Driver::version`]).
        version: String,
    },
    /// cudrv already looked for its process-wide driver before the first [`install`] (a
    /// call such as `cudrv::init()` came first) and found none; that outcome is final.
    #[error(
        "cudrv already tried to load its process-wide driver, before cudrv_standin::install(), \
         and failed ({0}): call install() before anything that loads the driver (cudrv::init, \
         cudrv::driver, the free cudrv::p/pc/pw functions)"
    )]
    LoadedBefore(LoadError),
    /// The stand-in could not be loaded as a cudrv driver (an invalid
    /// `CUDRV_MAX_DRIVER_VERSION` or `CUDRV_PER_THREAD_DEFAULT_STREAM`).
    #[error("the stand-in could not be loaded: {0}")]
    Load(LoadError),
}

static INSTALLED: OnceLock<Result<&'static Driver, InstallError>> = OnceLock::new();

/// Makes the stand-in, in this process, cudrv's process-wide driver: the one
/// `cudrv::init()`, `cudrv::driver()` and the free `cudrv::p`/`pc`/`pw` functions use.
/// The one line a test of a cudrv program needs to run without a GPU:
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// cudrv_standin::install()?;
/// let driver = cudrv::init()?; // the stand-in, initialised
/// assert_eq!(driver.source(), "in-process driver");
/// assert_eq!(driver.device_count()?, 1);
/// # Ok(())
/// # }
/// ```
///
/// - The stand-in emulates the version of `CUDRV_STANDIN_VERSION` (`12.4`; default: the
///   newest, 13.5), as [`StandIn::from_env`] does, so a test run under
///   `cudrv-matrix --stand-in` emulates each cell's version, and the number of devices of
///   `CUDRV_STANDIN_DEVICES` (0 to 8; default 1; [`crate::device_count`]).
/// - `CUDRV_MAX_DRIVER_VERSION` and `CUDRV_PER_THREAD_DEFAULT_STREAM` apply as
///   `cudrv::LoadOptions::from_env` reads them; `CUDRV_LIBCUDA` is not used (nothing is
///   opened).
/// - Idempotent: every call returns the same driver, or the same error. Safe from any
///   thread, in any order of tests: concurrent first calls wait for one to install it.
/// - It does not call `cuInit`: `cudrv::init()` (or [`Driver::init`]) does, once.
///
/// Kernels registered with [`crate::register_kernel`] run on this driver, as on any
/// in-process stand-in (before or after this call).
///
/// # Errors
/// [`InstallError::OtherDriver`] if another driver was cudrv's process-wide driver
/// first; [`InstallError::LoadedBefore`] if cudrv already failed to load one;
/// [`InstallError::Load`] if a load setting in the environment is invalid. The
/// process-wide driver is then left as it was, and every later call returns the same
/// error.
pub fn install() -> Result<&'static Driver, InstallError> {
    INSTALLED.get_or_init(install_once).clone()
}

fn install_once() -> Result<&'static Driver, InstallError> {
    // In-process: the library path of the environment, if any, is not ours to open.
    let mut options = LoadOptions::from_env().map_err(InstallError::Load)?;
    options.path = None;
    let driver = StandIn::from_env().load(options).map_err(InstallError::Load)?;
    match cudrv::set_driver(driver) {
        Ok(installed) => Ok(installed),
        // Refused: cudrv has its driver (or its failure to load one) already.
        Err(_ours) => match cudrv::driver() {
            Ok(other) => {
                Err(InstallError::OtherDriver { driver: other.source(), version: other.version().to_string() })
            }
            Err(e) => Err(InstallError::LoadedBefore(e)),
        },
    }
}
