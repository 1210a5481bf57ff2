//! The suite's output, one line per case, and the comparison of two runs.
//!
//! A line is `CASE STATUS FIELD...`: the case's name, the status it ended with (a
//! `CUresult` name, `GATED`, `SETUP_FAILED`, `CRASH` or `HANG`), then what the calls wrote,
//! as `key=value` (compared between drivers) or `key~value` (shown, not compared: device
//! names, sizes, addresses). Values never contain whitespace.

use std::collections::HashMap;
use std::fmt;

/// One value a case reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    pub key: String,
    pub value: String,
    /// Whether another driver must write the same value (`=`) or it is shown only (`~`).
    pub compared: bool,
}

/// One case's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub case: String,
    pub status: String,
    pub fields: Vec<Field>,
}

impl Line {
    /// Parses a line; `None` for blank lines and `#` comments.
    pub fn parse(text: &str) -> Option<Line> {
        let text = text.trim();
        if text.is_empty() || text.starts_with('#') {
            return None;
        }
        let mut words = text.split_whitespace();
        let case = words.next()?.to_string();
        let status = words.next().unwrap_or("").to_string();
        let fields = words
            .map(|w| {
                let at = w.find(['=', '~']).unwrap_or(w.len());
                let (key, rest) = w.split_at(at);
                let compared = !rest.starts_with('~');
                let value = rest.get(1..).unwrap_or("").to_string();
                Field { key: key.to_string(), value, compared }
            })
            .collect();
        Some(Line { case, status, fields })
    }

    /// The value written under `key`, compared or not.
    pub fn field(&self, key: &str) -> Option<&str> {
        self.fields.iter().find(|f| f.key == key).map(|f| f.value.as_str())
    }

    /// Whether `actual` answers as `self` (the reference) does: the same status (one of
    /// them, where the reference lists several as `A|B`: the real driver was seen to give
    /// each), and the same value for every compared field of the reference.
    pub fn agrees(&self, actual: &Line) -> bool {
        self.status.split('|').any(|s| s == actual.status)
            && self.fields.iter().filter(|f| f.compared).all(|f| actual.field(&f.key) == Some(f.value.as_str()))
    }
}

impl fmt::Display for Line {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.case, self.status)?;
        for field in &self.fields {
            write!(f, " {}{}{}", field.key, if field.compared { '=' } else { '~' }, field.value)?;
        }
        Ok(())
    }
}

/// Parses every line of a run's output.
pub fn parse_all(text: &str) -> Vec<Line> {
    text.lines().filter_map(Line::parse).collect()
}

/// The `# driver-version: N` header of a run (the version the answers came from).
pub fn driver_version(text: &str) -> Option<u32> {
    text.lines().find_map(|l| l.strip_prefix("# driver-version:")).and_then(|v| v.trim().parse().ok())
}

/// The deliberate differences: case name to the reason, from a file of `CASE REASON`
/// lines (`#` comments).
pub fn parse_differences(text: &str) -> HashMap<String, String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| match l.split_once(char::is_whitespace) {
            Some((case, reason)) => (case.to_string(), reason.trim().to_string()),
            None => (l.to_string(), String::new()),
        })
        .collect()
}

/// `12.8` for 12080.
pub fn version_text(code: u32) -> String {
    format!("{}.{}", code / 1000, code % 1000 / 10)
}

/// `12080` for `12.8`.
pub fn parse_version(text: &str) -> Option<u32> {
    let (major, minor) = text.split_once('.')?;
    Some(major.parse::<u32>().ok()? * 1000 + minor.parse::<u32>().ok()? * 10)
}

/// What `reference` becomes on a driver of version `emulated`: a case that needs an entry
/// newer than that driver (its `since` field) is answered by cudrv's gating
/// (`GATED needs=VERSION`) without a call; every other case answers as on the reference.
pub fn expected_at(reference: &Line, emulated: u32) -> Line {
    match reference.field("since").and_then(parse_version) {
        Some(since) if since > emulated => Line {
            case: reference.case.clone(),
            status: "GATED".to_string(),
            fields: vec![Field { key: "needs".into(), value: version_text(since), compared: true }],
        },
        _ => reference.clone(),
    }
}

/// The comparison of a run with the reference.
#[derive(Debug, Default)]
pub struct Comparison {
    /// Cases in the reference.
    pub cases: usize,
    /// Cases answered as on the reference.
    pub agreed: usize,
    /// Cases where the reference driver returned a status (it did not crash or hang).
    pub answered: usize,
    /// Of those, the cases answered as on the reference.
    pub answered_agreed: usize,
    /// Cases that differ and are not in the list of deliberate differences:
    /// (reference, actual or `None` when the run lacks the case).
    pub unexplained: Vec<(Line, Option<Line>)>,
    /// Cases that differ as the list says they may, with the listed reason.
    pub deliberate: Vec<(Line, Option<Line>, String)>,
    /// Listed cases that now agree: the list is stale.
    pub stale: Vec<String>,
    /// Cases in the run that the reference lacks.
    pub unknown: Vec<String>,
}

impl Comparison {
    /// The share of the reference's cases answered alike, in percent.
    pub fn agreement(&self) -> f64 {
        percent(self.agreed, self.cases)
    }

    /// The share of the cases where the reference driver returned a status (not `CRASH`
    /// or `HANG`) that were answered with the same status, in percent.
    pub fn status_agreement(&self) -> f64 {
        percent(self.answered_agreed, self.answered)
    }

    /// Whether the run passes: every difference is a listed one, and the list is not stale.
    pub fn passed(&self) -> bool {
        self.unexplained.is_empty() && self.stale.is_empty() && self.unknown.is_empty()
    }
}

fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    100.0 * part as f64 / whole as f64
}

/// Whether the reference driver died or hung on a case (no status to compare).
fn no_status(line: &Line) -> bool {
    matches!(line.status.as_str(), "CRASH" | "HANG")
}

/// Compares `actual` with `reference`, as answered by a driver of version `emulated`
/// (`None`: the reference's own version).
pub fn compare(
    reference: &[Line],
    actual: &[Line],
    differences: &HashMap<String, String>,
    emulated: Option<u32>,
) -> Comparison {
    let by_name: HashMap<&str, &Line> = actual.iter().map(|l| (l.case.as_str(), l)).collect();
    let mut out = Comparison { cases: reference.len(), ..Comparison::default() };
    for reference in reference {
        let want = match emulated {
            Some(v) => expected_at(reference, v),
            None => reference.clone(),
        };
        let got = by_name.get(want.case.as_str()).map(|l| (*l).clone());
        let same = got.as_ref().is_some_and(|g| want.agrees(g));
        if !no_status(&want) {
            out.answered += 1;
            out.answered_agreed += usize::from(same);
        }
        // A listed case gated at this version makes no call: its difference does not arise.
        let gated_here = want.status == "GATED" && reference.status != "GATED";
        match (same, differences.get(&want.case)) {
            (true, None) => out.agreed += 1,
            (true, Some(_)) if gated_here => out.agreed += 1,
            (true, Some(_)) => {
                out.agreed += 1;
                out.stale.push(want.case.clone());
            }
            (false, Some(reason)) => out.deliberate.push((want, got, reason.clone())),
            (false, None) => out.unexplained.push((want, got)),
        }
    }
    let known: std::collections::HashSet<&str> = reference.iter().map(|l| l.case.as_str()).collect();
    out.unknown = actual.iter().filter(|l| !known.contains(l.case.as_str())).map(|l| l.case.clone()).collect();
    out
}

/// The comparison as text: the figure, then every difference, listed or not.
pub fn summary(c: &Comparison) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "agreement: {} of {} cases ({:.1}%)", c.agreed, c.cases, c.agreement());
    let _ = writeln!(
        s,
        "status agreement: {} of the {} cases where the real driver returned a status ({:.1}%)",
        c.answered_agreed,
        c.answered,
        c.status_agreement()
    );
    let show = |l: &Option<Line>| l.as_ref().map_or("(missing)".to_string(), |l| l.to_string());
    for (want, got, reason) in &c.deliberate {
        let _ = writeln!(
            s,
            "listed    {}
  real:   {want}
  here:   {}
  why:    {reason}",
            want.case,
            show(got)
        );
    }
    for (want, got) in &c.unexplained {
        let _ = writeln!(
            s,
            "DIFFERS   {}
  real:   {want}
  here:   {}",
            want.case,
            show(got)
        );
    }
    for case in &c.stale {
        let _ = writeln!(s, "STALE     {case}: listed as a deliberate difference but answers as the real driver");
    }
    for case in &c.unknown {
        let _ = writeln!(s, "UNKNOWN   {case}: not in the reference (record it on the GPU)");
    }
    let _ = writeln!(s, "{}", if c.passed() { "conformance: pass" } else { "conformance: FAIL" });
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_and_compare_only_marked_fields() {
        let text = "ctx.api_version CUDA_SUCCESS version=3020 name~NVIDIA_H200";
        let line = Line::parse(text).unwrap();
        assert_eq!(line.to_string(), text);
        let other = Line::parse("ctx.api_version CUDA_SUCCESS version=3020 name~other").unwrap();
        assert!(line.agrees(&other));
        let wrong = Line::parse("ctx.api_version CUDA_SUCCESS version=4000 name~NVIDIA_H200").unwrap();
        assert!(!line.agrees(&wrong));
        let status = Line::parse("ctx.api_version CUDA_ERROR_INVALID_VALUE version=3020").unwrap();
        assert!(!line.agrees(&status));
    }

    #[test]
    fn newer_entries_are_gated_below_their_version() {
        let reference = Line::parse("v.batch CUDA_SUCCESS since~12.8").unwrap();
        assert_eq!(expected_at(&reference, 13000), reference);
        assert_eq!(expected_at(&reference, 12040).to_string(), "v.batch GATED needs=12.8");
    }

    #[test]
    fn differences_are_listed_or_fail_and_stale_entries_fail() {
        let reference = parse_all("a CUDA_SUCCESS\nb CRASH\nc CUDA_SUCCESS\n");
        let actual = parse_all("a CUDA_SUCCESS\nb CUDA_ERROR_INVALID_VALUE\nc CUDA_ERROR_UNKNOWN\n");
        let listed = parse_differences("# why\nb the real driver crashes\n");
        let c = compare(&reference, &actual, &listed, None);
        assert_eq!((c.cases, c.agreed), (3, 1));
        assert_eq!(c.deliberate.len(), 1);
        assert_eq!(c.unexplained.len(), 1);
        assert!(!c.passed());
        let stale = parse_differences("a no longer differs\nb crash\nc x\n");
        let c = compare(&reference, &actual, &stale, None);
        assert_eq!(c.stale, vec!["a".to_string()]);
        assert!(!c.passed());
    }

    #[test]
    fn a_listed_case_gated_at_an_older_version_is_not_stale() {
        let reference = parse_all(
            "v.pool CUDA_SUCCESS pool=set since~13.0
",
        );
        let listed = parse_differences("v.pool no host pools\n");
        let gated = parse_all(
            "v.pool GATED needs=13.0
",
        );
        let c = compare(&reference, &gated, &listed, Some(12040));
        assert!(c.stale.is_empty() && c.passed(), "{}", summary(&c));
        // At the reference's own version the same agreement makes the listing stale.
        let agreeing = parse_all(
            "v.pool CUDA_SUCCESS pool=set since~13.0
",
        );
        assert_eq!(compare(&reference, &agreeing, &listed, None).stale, vec!["v.pool".to_string()]);
    }
}
