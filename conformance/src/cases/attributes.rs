//! Every device attribute number: `attribute.N` is `cuDeviceGetAttribute(&v, N, device 0)`,
//! its status and the value written (`-12345` when the slot was left untouched). The
//! H200's answers for 1..=159 are `standin/tests/data/h200-device-attributes.txt`.

use std::sync::LazyLock;

use super::{Case, Env, Out, Setup};
use cudrv::sys::*;

/// What the value slot holds before the call.
const UNTOUCHED: i32 = -12345;

/// The attribute numbers with answers recorded on the H200.
const RECORDED: std::ops::RangeInclusive<u32> = 1..=159;

/// The numbers asked: 1..=160 (160 is past the last attribute a 13.0 driver knows; its
/// answer is not recorded yet).
const ASKED: std::ops::RangeInclusive<u32> = 1..=160;

/// Attributes whose value depends on where the GPU sits in its machine (the PCI location,
/// the NUMA nodes), not on the driver or the GPU: shown, not compared.
const PLACEMENT: [CUdevice_attribute; 5] = [
    CUdevice_attribute::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID,
    CUdevice_attribute::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID,
    CUdevice_attribute::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID,
    CUdevice_attribute::CU_DEVICE_ATTRIBUTE_NUMA_ID,
    CUdevice_attribute::CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID,
];

/// The case of attribute `N`.
fn run<const N: u32>(e: &Env) -> Out {
    let mut v = UNTOUCHED;
    // SAFETY: a valid out-pointer.
    let st = unsafe { e.p.cuDeviceGetAttribute(&mut v, CUdevice_attribute(N), e.dev) };
    if PLACEMENT.contains(&CUdevice_attribute(N)) {
        Out::of(st).info("value", v)
    } else {
        Out::of(st).eq("value", v)
    }
}

/// `run::<N>` for N = 10 * `$tens` + 0..=9.
macro_rules! ten {
    ($tens:literal) => {
        [
            run::<{ $tens * 10 }>,
            run::<{ $tens * 10 + 1 }>,
            run::<{ $tens * 10 + 2 }>,
            run::<{ $tens * 10 + 3 }>,
            run::<{ $tens * 10 + 4 }>,
            run::<{ $tens * 10 + 5 }>,
            run::<{ $tens * 10 + 6 }>,
            run::<{ $tens * 10 + 7 }>,
            run::<{ $tens * 10 + 8 }>,
            run::<{ $tens * 10 + 9 }>,
        ]
    };
}

/// A case's calls.
type Run = fn(&Env) -> Out;

/// The case of every number 0..=169, by number.
const RUNS: [[Run; 10]; 17] = [
    ten!(0),
    ten!(1),
    ten!(2),
    ten!(3),
    ten!(4),
    ten!(5),
    ten!(6),
    ten!(7),
    ten!(8),
    ten!(9),
    ten!(10),
    ten!(11),
    ten!(12),
    ten!(13),
    ten!(14),
    ten!(15),
    ten!(16),
];

/// `attribute.N` for every number asked (index N - 1).
static NAMES: LazyLock<Vec<String>> = LazyLock::new(|| ASKED.map(|n| format!("attribute.{n}")).collect());

/// The cases of the numbers in `which`.
fn cases_of(which: std::ops::RangeInclusive<u32>) -> Vec<Case> {
    let names: &'static [String] = &NAMES;
    RUNS.iter()
        .flatten()
        .zip(0u32..)
        .filter(|(_, n)| which.contains(n))
        .filter_map(|(&run, n)| {
            let name = names.get(usize::try_from(n.checked_sub(1)?).ok()?)?;
            Some(Case { name: name.as_str(), setup: Setup::Init, since: None, run })
        })
        .collect()
}

/// The numbers whose answers on the H200 are recorded (1..=159).
pub fn cases() -> Vec<Case> {
    cases_of(RECORDED)
}

/// The numbers not recorded yet (160).
pub fn pending() -> Vec<Case> {
    cases_of(*RECORDED.end() + 1..=*ASKED.end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_case_per_number_in_order() {
        let names: Vec<&str> = cases().iter().chain(pending().iter()).map(|c| c.name).collect();
        let expected: Vec<String> = (1..=160).map(|n| format!("attribute.{n}")).collect();
        assert_eq!(names, expected);
        assert_eq!(pending().len(), 1);
    }
}
