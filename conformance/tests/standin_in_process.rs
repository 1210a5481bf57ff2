//! Two stand-ins in one process, each a world of its own (`StandIn::isolated`), answer the
//! conformance suite at the same time, as the H200 did: the stand-in keeps no state
//! outside its worlds, so neither sees the other's contexts, memory, streams or faults.
//!
//! Each case runs on a fresh thread against its world, reset before the case
//! (`StandIn::reset`), as the suite's runner gives each case a fresh process. The few cases
//! that need a process of their own (`cases::needs_own_process`) are left to
//! `tests/standin.rs`, which runs the whole suite a process per case.

use cudrv_conformance::cases::{self, needs_own_process};
use cudrv_conformance::record::{compare, parse_all, parse_differences, summary, Line};
use cudrv_conformance::runner::run_case_on;
use cudrv_conformance::{reference, DIFFERENCES};
use cudrv_standin::StandIn;

/// Runs every case that can share the process on a fresh world of `version`; its lines.
fn run_in_world(version: u32) -> Vec<Line> {
    let standin = StandIn::isolated(version).expect("a free world");
    let driver: &'static cudrv::Driver = Box::leak(Box::new(standin.load(Default::default()).unwrap()));
    cases::all()
        .into_iter()
        .filter(|c| !needs_own_process(c.name))
        .map(|case| {
            standin.reset();
            // A fresh thread: no current context, the default capture mode.
            std::thread::scope(|s| s.spawn(|| run_case_on(&case, driver)).join().unwrap())
        })
        .collect()
}

/// The lines as the suite prints them, for the comparison.
fn text(lines: &[Line]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn two_isolated_standins_answer_the_suite_in_parallel() {
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| run_in_world(13000));
        let b = s.spawn(|| run_in_world(12040));
        (a.join().unwrap(), b.join().unwrap())
    });
    let differences = parse_differences(DIFFERENCES);
    for (lines, emulated, version) in [(&a, None, "13.0"), (&b, Some(12040), "12.4")] {
        let expected: Vec<_> = reference(emulated).into_iter().filter(|l| !needs_own_process(&l.case)).collect();
        assert_eq!(lines.len(), expected.len(), "every case that can share the process ran");
        let c = compare(&expected, &parse_all(&text(lines)), &differences, emulated);
        let report = summary(&c);
        println!("{version}:\n{report}");
        assert!(c.passed(), "the in-process stand-in at {version} answers differently from the H200:\n{report}");
        assert!(c.status_agreement() >= 95.0, "agreement {:.1}% is below 95%:\n{report}", c.status_agreement());
    }
}
