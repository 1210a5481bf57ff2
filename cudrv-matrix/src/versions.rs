//! Which driver versions a matrix covers: the CUDA releases, and `--versions` over them.

use cudrv::version;

/// Each minor version a CUDA release had from 11.3 on (the oldest driver cudrv loads), in
/// the driver's form; there was no CUDA 12.7. The one list of releases of this tool: `all`,
/// `12` and `12.0-13.0` mean these, up to the newest the driver (or the stand-in) has.
pub const RELEASES: &[u32] = &[
    11030, 11040, 11050, 11060, 11070, 11080, // 11.x
    12000, 12010, 12020, 12030, 12040, 12050, 12060, 12080, 12090, // 12.x
    13000, 13010, 13020, 13030, 13040, 13050, // 13.x
];

/// The releases before 11.3. cudrv refuses such a driver; the stand-in can emulate one, to
/// test that a program says so clearly, when it is listed by itself (never by `all`, a
/// major version or a range).
const OLDER_RELEASES: &[u32] = &[10000, 10010, 10020, 11000, 11010, 11020];

/// One item of `--versions`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Item {
    /// `all`.
    All,
    /// `12`: every release 12.x.
    Major(u32),
    /// `12.4` (driver form).
    One(u32),
    /// `12.0-13.0`, `12-13` or `12.4-13`: every release from the first to the last, both
    /// included (a bare major as the end means its last release).
    Range(u32, u32),
}

/// What `--versions` asked for, before it is checked against a driver.
#[derive(Debug, PartialEq, Eq)]
pub struct Request {
    items: Vec<Item>,
}

/// Parses `all` or a comma-separated list of `X.Y` versions, major versions (`12`) and
/// ranges (`12.0-13.0`).
///
/// Returns a one-line message for an empty item or one of another form. Whether the
/// versions are releases is checked by [`for_stand_in`] and [`for_real`].
pub fn parse(text: &str) -> Result<Request, String> {
    let mut items = Vec::new();
    for item in text.split(',') {
        let item = item.trim();
        let parsed = if item == "all" {
            Some(Item::All)
        } else if let Some((from, to)) = item.split_once('-') {
            match (bound(from), bound(to)) {
                (Some(a), Some(b)) => {
                    let first = a.0 * 1000 + a.1.unwrap_or(0) * 10;
                    let last = b.0 * 1000 + b.1.map_or(990, |m| m * 10);
                    if first > last {
                        return Err(format!("--versions: {item:?} goes backwards (write the older version first)"));
                    }
                    Some(Item::Range(first, last))
                }
                _ => None,
            }
        } else {
            match bound(item) {
                Some((major, None)) => Some(Item::Major(major)),
                Some((major, Some(minor))) => Some(Item::One(major * 1000 + minor * 10)),
                None => None,
            }
        };
        match parsed {
            Some(p) => items.push(p),
            None => {
                return Err(format!(
                    "--versions: {item:?} is not a version such as 12.4, a major version such as 12, a \
                     range such as 12.0-13.0, or `all`"
                ))
            }
        }
    }
    Ok(Request { items })
}

/// `12` or `12.4`: the major and, if given, the minor version.
fn bound(text: &str) -> Option<(u32, Option<u32>)> {
    let text = text.trim();
    let digits = |s: &str| !s.is_empty() && s.len() <= 3 && s.bytes().all(|b| b.is_ascii_digit());
    match text.split_once('.') {
        None if digits(text) => Some((text.parse().ok()?, None)),
        Some((major, minor)) if digits(major) && digits(minor) && minor.len() <= 2 => {
            Some((major.parse().ok()?, Some(minor.parse().ok()?)))
        }
        _ => None,
    }
}

/// `11.3 11.4 ... 13.5`: the releases, for messages.
fn release_list() -> String {
    RELEASES.iter().map(|&v| version::display(v)).collect::<Vec<_>>().join(" ")
}

/// The release after `v` in [`RELEASES`], if both are releases.
pub fn next_release(v: u32) -> Option<u32> {
    let at = RELEASES.iter().position(|&r| r == v)?;
    RELEASES.get(at + 1).copied()
}

/// The versions `request` names among `known` (sorted), sorted and without duplicates;
/// `extra` are also accepted when listed one by one. `span` says which releases `known`
/// holds, `outside` why a release is not among them. Returns a one-line message naming
/// the first item that names no release, or none of `known`.
fn resolve(
    request: &Request,
    known: &[u32],
    extra: &[u32],
    span: &str,
    outside: &dyn Fn(u32) -> String,
) -> Result<Vec<u32>, String> {
    let mut list = Vec::new();
    for item in &request.items {
        let before = list.len();
        match *item {
            Item::All => list.extend_from_slice(known),
            Item::Major(m) => list.extend(known.iter().filter(|&&v| v / 1000 == m)),
            Item::Range(a, b) => list.extend(known.iter().filter(|&&v| (a..=b).contains(&v))),
            Item::One(v) if known.contains(&v) || extra.contains(&v) => list.push(v),
            Item::One(v) if RELEASES.contains(&v) || OLDER_RELEASES.contains(&v) => return Err(outside(v)),
            Item::One(v) => {
                return Err(format!(
                    "--versions: {} is not a CUDA release; the releases are {}",
                    version::display(v),
                    release_list()
                ))
            }
        }
        if list.len() == before {
            let what = match *item {
                Item::Major(m) => format!("{m}"),
                Item::Range(a, b) => format!("{}-{}", version::display(a), version::display(b)),
                Item::All | Item::One(_) => "all".into(),
            };
            return Err(format!("--versions: {what} names no release {span}; the releases are {}", release_list()));
        }
    }
    list.sort_unstable();
    list.dedup();
    Ok(list)
}

/// The versions of a stand-in matrix: the releases up to the newest the stand-in emulates
/// (and, listed one by one, the releases before 11.3). Returns a one-line message for a
/// version that is not a release, or one the stand-in cannot emulate.
pub fn for_stand_in(request: &Request) -> Result<Vec<u32>, String> {
    let (min, max) = (cudrv_standin::MIN_VERSION, cudrv_standin::DEFAULT_VERSION);
    let known: Vec<u32> = RELEASES.iter().copied().filter(|&v| (min..=max).contains(&v)).collect();
    let older: Vec<u32> = OLDER_RELEASES.iter().copied().filter(|&v| (min..=max).contains(&v)).collect();
    let span = format!("up to {}, the newest the stand-in emulates", version::display(max));
    let outside = |v: u32| format!("--versions: {} is newer than {span}", version::display(v));
    resolve(request, &known, &older, &span, &outside)
}

/// The versions of a real-driver matrix under a driver of version `driver`: the releases
/// from 11.3 up to the driver's own (a cap cannot raise it), and the driver's own minor
/// version if it is newer than every release known here. Returns a one-line message for
/// a version that is not a release, or one outside that span.
pub fn for_real(request: &Request, driver: u32) -> Result<Vec<u32>, String> {
    let own = driver - driver % 10;
    let mut known: Vec<u32> = RELEASES.iter().copied().filter(|&v| v <= own).collect();
    if own >= cudrv::MIN_DRIVER_VERSION && !known.contains(&own) && RELEASES.last().is_some_and(|&l| own > l) {
        known.push(own);
    }
    let span = format!("up to the driver's own version {}", version::display(driver));
    let outside = |v: u32| {
        if v < cudrv::MIN_DRIVER_VERSION {
            format!("--versions: {} is below 11.3, the oldest driver cudrv loads", version::display(v))
        } else {
            format!(
                "--versions: {} is above the driver's own version {}: a cap can only lower it",
                version::display(v),
                version::display(driver)
            )
        }
    };
    resolve(request, &known, &[], &span, &outside)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn stand_in(text: &str) -> Result<Vec<u32>, String> {
        for_stand_in(&parse(text)?)
    }

    #[test]
    fn lists_are_sorted_and_deduplicated() {
        assert_eq!(stand_in("12.4, 11.8,12.4,13.0"), Ok(vec![11080, 12040, 13000]));
        assert!(stand_in("12.4,").is_err());
        assert!(stand_in("twelve").is_err());
        assert!(stand_in("12.4.1").is_err());
        assert!(stand_in("12.x").is_err());
    }

    #[test]
    fn a_major_version_is_every_release_of_it() {
        assert_eq!(stand_in("12"), Ok(vec![12000, 12010, 12020, 12030, 12040, 12050, 12060, 12080, 12090]));
        assert_eq!(stand_in("11").unwrap().first(), Some(&11030));
        let e = stand_in("14").unwrap_err();
        assert!(e.contains("14 names no release") && e.contains("11.3 11.4"), "{e}");
    }

    #[test]
    fn ranges_span_releases() {
        assert_eq!(stand_in("12.6-13.0"), Ok(vec![12060, 12080, 12090, 13000]));
        assert_eq!(stand_in("12.9-13"), Ok(vec![12090, 13000, 13010, 13020, 13030, 13040, 13050]));
        assert_eq!(stand_in("11-11"), stand_in("11"));
        assert!(stand_in("13.0-12.0").unwrap_err().contains("backwards"));
        assert!(stand_in("12.7-12.7").unwrap_err().contains("names no release"));
        assert_eq!(stand_in("12.0-12.1,13.5,12.1"), Ok(vec![12000, 12010, 13050]));
    }

    #[test]
    fn only_releases_are_accepted() {
        let e = stand_in("12.7").unwrap_err();
        assert!(e.contains("12.7 is not a CUDA release; the releases are 11.3"), "{e}");
        assert!(e.contains(" 12.6 12.8 "), "{e}");
        assert!(stand_in("12.10").is_err());
        assert!(stand_in("99.0").is_err());
        // Older releases only one by one, and only for the stand-in.
        assert_eq!(stand_in("11.0,12.0"), Ok(vec![11000, 12000]));
        assert!(for_real(&parse("11.0").unwrap(), 12040).unwrap_err().contains("below 11.3"));
    }

    #[test]
    fn all_for_the_stand_in_is_every_release_it_emulates() {
        let all = stand_in("all").unwrap();
        assert_eq!(all.first(), Some(&11030));
        assert_eq!(all.last(), Some(&cudrv_standin::DEFAULT_VERSION));
        assert!(all.contains(&12080) && !all.contains(&12070));
        assert!(all.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(all, RELEASES.iter().copied().filter(|&v| v <= cudrv_standin::DEFAULT_VERSION).collect::<Vec<_>>());
    }

    #[test]
    fn real_versions_stop_at_the_driver() {
        let real = |t: &str, d| for_real(&parse(t).unwrap(), d);
        assert_eq!(
            real("all", 12040).unwrap(),
            vec![11030, 11040, 11050, 11060, 11070, 11080, 12000, 12010, 12020, 12030, 12040]
        );
        // A driver newer than every release known here still gets its own cell.
        assert_eq!(real("all", 14020).unwrap().last(), Some(&14020));
        assert_eq!(real("14.2", 14020).unwrap(), vec![14020]);
        assert!(real("12.8", 12040).unwrap_err().contains("above the driver's own version 12.4"));
        assert_eq!(real("12", 12040).unwrap().last(), Some(&12040));
        assert!(real("13", 12040).unwrap_err().contains("up to the driver's own version 12.4"));
        assert_eq!(real("12.4", 12040).unwrap(), vec![12040]);
    }

    #[test]
    fn next_release_skips_12_7() {
        assert_eq!(next_release(12060), Some(12080));
        assert_eq!(next_release(13050), None);
        assert_eq!(next_release(12070), None);
    }
}
