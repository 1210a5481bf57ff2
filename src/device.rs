//! Initialisation and devices.

use std::ffi::{c_char, CStr};
use std::fmt;

use crate::error::{CudaError, Error};
use crate::sys::{CUdevice, CUdevice_attribute, CUuuid};
use crate::Driver;

/// Loads the process-wide driver ([`crate::driver()`]) and initialises it
/// ([`Driver::init`]): the usual first line of a program.
pub fn init() -> Result<&'static Driver, Error> {
    let driver = crate::driver()?;
    driver.init()?;
    Ok(driver)
}

impl Driver {
    /// Runs `cuInit(0)` once for this driver and returns its result, the same every time.
    /// Safe to call from many threads: one initialises, the others wait for it.
    pub fn init(&'static self) -> Result<(), Error> {
        Ok(self
            .init
            .get_or_init(|| {
                // SAFETY: cuInit takes only flags, which must be 0.
                unsafe { self.pc().cuInit(0) }
            })
            .clone()?)
    }

    /// The number of devices (`cuDeviceGetCount`), after [`Driver::init`].
    pub fn device_count(&'static self) -> Result<usize, Error> {
        self.init()?;
        let mut count = 0;
        // SAFETY: `count` is a valid out-pointer.
        unsafe { self.pc().cuDeviceGetCount(&mut count) }?;
        Ok(usize::try_from(count).unwrap_or(0))
    }

    /// Device `ordinal` (`cuDeviceGet`), after [`Driver::init`]. An ordinal with no device
    /// is the driver's `CUDA_ERROR_INVALID_DEVICE`.
    pub fn device(&'static self, ordinal: usize) -> Result<Device, Error> {
        self.init()?;
        let mut raw: CUdevice = 0;
        let ordinal = i32::try_from(ordinal).unwrap_or(i32::MAX);
        // SAFETY: `raw` is a valid out-pointer; the driver checks the ordinal.
        unsafe { self.pc().cuDeviceGet(&mut raw, ordinal) }?;
        Ok(Device { driver: self, raw })
    }

    /// Every device, in ordinal order.
    pub fn devices(&'static self) -> Result<Vec<Device>, Error> {
        (0..self.device_count()?).map(|i| self.device(i)).collect()
    }
}

/// A device of a driver: a `CUdevice` ordinal and its driver. Copyable; it owns nothing.
#[derive(Clone, Copy)]
pub struct Device {
    driver: &'static Driver,
    raw: CUdevice,
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Device({})", self.raw)
    }
}

impl PartialEq for Device {
    fn eq(&self, other: &Device) -> bool {
        std::ptr::eq(self.driver, other.driver) && self.raw == other.raw
    }
}

impl Eq for Device {}

/// A device's UUID; shown as `nvidia-smi` shows it (`GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Uuid(pub [u8; 16]);

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GPU")?;
        for (i, b) in self.0.iter().enumerate() {
            if matches!(i, 0 | 4 | 6 | 8 | 10) {
                f.write_str("-")?;
            }
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// Reads a NUL-terminated string the driver wrote into `buf` by `get`.
fn string_from(get: impl FnOnce(*mut c_char, i32) -> Result<(), CudaError>) -> Result<String, CudaError> {
    let mut buf = [0 as c_char; 256];
    get(buf.as_mut_ptr(), buf.len() as i32 - 1)?;
    // SAFETY: the buffer is zeroed and one longer than the driver may write: NUL-terminated.
    Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned())
}

impl Device {
    /// The device `raw` of `driver`, which the driver gave (a context's, a pointer's).
    pub(crate) fn known(driver: &'static Driver, raw: CUdevice) -> Device {
        Device { driver, raw }
    }

    /// The raw ordinal.
    pub fn as_raw(&self) -> CUdevice {
        self.raw
    }

    /// Its driver.
    pub fn driver(&self) -> &'static Driver {
        self.driver
    }

    /// Its name (`cuDeviceGetName`), e.g. `NVIDIA H200`.
    pub fn name(&self) -> Result<String, Error> {
        let (pc, raw) = (self.driver.pc(), self.raw);
        // SAFETY: the buffer holds `len` bytes.
        Ok(string_from(|buf, len| unsafe { pc.cuDeviceGetName(buf, len, raw) })?)
    }

    /// Its PCI bus id (`cuDeviceGetPCIBusId`), e.g. `0000:19:00.0`.
    pub fn pci_bus_id(&self) -> Result<String, Error> {
        let (pc, raw) = (self.driver.pc(), self.raw);
        // SAFETY: the buffer holds `len` bytes.
        Ok(string_from(|buf, len| unsafe { pc.cuDeviceGetPCIBusId(buf, len, raw) })?)
    }

    /// Its UUID (`cuDeviceGetUuid`).
    pub fn uuid(&self) -> Result<Uuid, Error> {
        let mut uuid = CUuuid::default();
        // SAFETY: `uuid` is a valid out-pointer.
        unsafe { self.driver.pc().cuDeviceGetUuid(&mut uuid, self.raw) }?;
        Ok(Uuid(uuid.bytes.map(|b| b as u8)))
    }

    /// Its total memory in bytes (`cuDeviceTotalMem`).
    pub fn total_memory(&self) -> Result<usize, Error> {
        let mut bytes = 0usize;
        // SAFETY: `bytes` is a valid out-pointer.
        unsafe { self.driver.pc().cuDeviceTotalMem(&mut bytes, self.raw) }?;
        Ok(bytes)
    }

    /// Any attribute (`cuDeviceGetAttribute`).
    pub fn attribute(&self, attribute: CUdevice_attribute) -> Result<i32, Error> {
        let mut value = 0;
        // SAFETY: `value` is a valid out-pointer.
        unsafe { self.driver.pc().cuDeviceGetAttribute(&mut value, attribute, self.raw) }?;
        Ok(value)
    }

    /// Its compute capability, `(major, minor)`.
    pub fn compute_capability(&self) -> Result<(i32, i32), Error> {
        Ok((
            self.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            self.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        ))
    }

    /// Whether it can access `peer`'s memory directly (`cuDeviceCanAccessPeer`).
    pub fn can_access_peer(&self, peer: &Device) -> Result<bool, Error> {
        let mut can = 0;
        // SAFETY: `can` is a valid out-pointer.
        unsafe { self.driver.pc().cuDeviceCanAccessPeer(&mut can, self.raw, peer.raw) }?;
        Ok(can != 0)
    }
}
