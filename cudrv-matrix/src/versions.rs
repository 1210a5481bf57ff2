//! Which driver versions a matrix covers.

use cudrv::version;

/// Each minor version a CUDA release had from 11.3 on, in the driver's form (there was no
/// CUDA 12.7). `all` means these, up to the newest the driver (or the stand-in) has.
const RELEASES: &[u32] = &[
    11030, 11040, 11050, 11060, 11070, 11080, // 11.x
    12000, 12010, 12020, 12030, 12040, 12050, 12060, 12080, 12090, // 12.x
    13000, 13010, 13020, 13030, 13040, 13050, // 13.x
];

/// What `--versions` asked for.
#[derive(Debug, PartialEq, Eq)]
pub enum Request {
    /// `all` (the default).
    All,
    /// An explicit list, sorted and without duplicates.
    List(Vec<u32>),
}

/// Parses `all` or a comma-separated list such as `11.8,12.0,12.4`.
///
/// Returns a one-line message for an empty item or one that is not an `X.Y` version.
pub fn parse(text: &str) -> Result<Request, String> {
    if text.trim() == "all" {
        return Ok(Request::All);
    }
    let mut list = Vec::new();
    for item in text.split(',') {
        let item = item.trim();
        match version::parse(item) {
            Some(v) if !item.is_empty() && v % 10 == 0 => list.push(v),
            _ => return Err(format!("--versions: {item:?} is not a version such as 12.4 (or use `all`)")),
        }
    }
    list.sort_unstable();
    list.dedup();
    Ok(Request::List(list))
}

/// The releases from 11.3 up to `newest` (the driver's own minor version is added if it is
/// newer than every release known here).
pub fn releases_up_to(newest: u32) -> Vec<u32> {
    let newest = newest - newest % 10;
    let mut list: Vec<u32> = RELEASES.iter().copied().filter(|&v| v <= newest).collect();
    if newest >= cudrv::MIN_DRIVER_VERSION && !list.contains(&newest) {
        list.push(newest);
    }
    list
}

/// The versions of a stand-in matrix: every version listed must be one the stand-in can
/// emulate. Returns a one-line message naming the first that is not.
pub fn for_stand_in(request: Request) -> Result<Vec<u32>, String> {
    let (min, max) = (cudrv_standin::MIN_VERSION, cudrv_standin::DEFAULT_VERSION);
    match request {
        Request::All => Ok(releases_up_to(max)),
        Request::List(list) => match list.iter().find(|&&v| !(min..=max).contains(&v)) {
            Some(&v) => Err(format!(
                "--versions: the stand-in emulates drivers {} to {}; {} is outside that",
                version::display(min),
                version::display(max),
                version::display(v)
            )),
            None => Ok(list),
        },
    }
}

/// The versions of a real-driver matrix under a driver of version `driver`: every version
/// listed must be from 11.3 up to the driver's own (a cap cannot raise it). Returns a
/// one-line message naming the first that is not.
pub fn for_real(request: Request, driver: u32) -> Result<Vec<u32>, String> {
    match request {
        Request::All => Ok(releases_up_to(driver)),
        Request::List(list) => {
            if let Some(&v) = list.iter().find(|&&v| v > driver) {
                return Err(format!(
                    "--versions: {} is above the driver's own version {}: a cap can only lower it",
                    version::display(v),
                    version::display(driver)
                ));
            }
            if let Some(&v) = list.iter().find(|&&v| v < cudrv::MIN_DRIVER_VERSION) {
                return Err(format!(
                    "--versions: {} is below 11.3, the oldest driver cudrv loads",
                    version::display(v)
                ));
            }
            Ok(list)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_and_all() {
        assert_eq!(parse("all"), Ok(Request::All));
        assert_eq!(parse("12.4, 11.8,12.4,13"), Ok(Request::List(vec![11080, 12040, 13000])));
        assert!(parse("12.4,").is_err());
        assert!(parse("twelve").is_err());
        assert!(parse("12.4.1").is_err());
    }

    #[test]
    fn all_for_the_stand_in_is_every_release_it_emulates() {
        let all = for_stand_in(Request::All).unwrap();
        assert_eq!(all.first(), Some(&11030));
        assert_eq!(all.last(), Some(&cudrv_standin::DEFAULT_VERSION));
        assert!(all.contains(&12080) && !all.contains(&12070));
        assert!(all.windows(2).all(|w| w[0] < w[1]));
        assert!(for_stand_in(Request::List(vec![99000])).is_err());
    }

    #[test]
    fn real_versions_stop_at_the_driver() {
        assert_eq!(
            for_real(Request::All, 12040).unwrap(),
            vec![11030, 11040, 11050, 11060, 11070, 11080, 12000, 12010, 12020, 12030, 12040]
        );
        // A driver newer than every release known here still gets its own cell.
        assert_eq!(for_real(Request::All, 14020).unwrap().last(), Some(&14020));
        assert!(for_real(Request::List(vec![12080]), 12040)
            .unwrap_err()
            .contains("above the driver's own version 12.4"));
        assert!(for_real(Request::List(vec![11020]), 12040).is_err());
        assert_eq!(for_real(Request::List(vec![12040]), 12040).unwrap(), vec![12040]);
    }
}
