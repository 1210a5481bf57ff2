//! Lists every device with its main properties: `cargo run --example device_query`.

use cudrv::sys::CUdevice_attribute as A;

fn main() -> Result<(), cudrv::Error> {
    let driver = cudrv::init()?;
    println!("CUDA driver {} ({})", driver.version(), driver.source());
    for device in driver.devices()? {
        let (major, minor) = device.compute_capability()?;
        println!("device {}: {}", device.as_raw(), device.name()?);
        println!("  uuid                {}", device.uuid()?);
        println!("  pci bus id          {}", device.pci_bus_id().unwrap_or_else(|e| format!("unknown ({e})")));
        println!("  compute capability  {major}.{minor}");
        println!("  memory              {} MiB", device.total_memory()? >> 20);
        println!("  multiprocessors     {}", device.attribute(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?);
        println!("  max threads/block   {}", device.attribute(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?);
        println!("  warp size           {}", device.attribute(A::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?);
    }
    Ok(())
}
