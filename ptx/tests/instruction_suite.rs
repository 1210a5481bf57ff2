//! The instruction suite (ptx/tests/suite/): every form run on the executor and compared,
//! bit for bit and lane for lane, with the GPU's recording
//! (`tests/data/instruction-suite-gpu.txt`, made by scripts/probes/instructions/gpu.sh).
//! A form whose outputs differ must be listed, with the reason and the measured difference,
//! in `tests/data/instruction-suite-differences.txt`; the test fails on a difference not
//! listed, a listed form that now agrees, and a form the recording lacks.

mod suite;

use std::collections::BTreeMap;
use std::path::Path;

use suite::run::{decode, payload};

fn data(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `ID<tab>REST` lines, comments (`#`) and blank lines skipped.
fn table(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (id, rest) = l.split_once('\t').unwrap_or_else(|| panic!("no tab in {l:?}"));
            (id.to_string(), rest.to_string())
        })
        .collect()
}

/// How the executor's payload compares with the GPU's: `None` when they agree.
fn difference(gpu: &str, ours: &str) -> Option<String> {
    match (decode(gpu), decode(ours)) {
        (Some(g), Some(o)) if g == o => None,
        (Some(g), Some(o)) if g.len() != o.len() => Some(format!("{} lanes recorded, {} run", g.len(), o.len())),
        (Some(g), Some(o)) => {
            let bad: Vec<usize> = (0..g.len()).filter(|&i| g[i] != o[i]).collect();
            let i = bad[0];
            Some(format!("{} of {} lanes differ; lane {i}: GPU {} executor {}", bad.len(), g.len(), g[i], o[i]))
        }
        _ if gpu == ours => None,
        // Both refuse the form: the GPU's JIT at load, the executor at load.
        _ if gpu.starts_with("LOAD") && ours.starts_with("REFUSED") => None,
        _ => Some(format!("GPU: {gpu:.80} / executor: {ours:.80}")),
    }
}

#[test]
fn every_form_agrees_with_the_gpu_or_is_listed() {
    let recorded = table(&data("instruction-suite-gpu.txt"));
    let listed = table(&data("instruction-suite-differences.txt"));
    let forms = suite::forms::forms();
    let mut problems = Vec::new();
    let (mut agree, mut lanes, mut lanes_agree) = (0usize, 0usize, 0usize);
    for form in &forms {
        let Some(gpu) = recorded.get(&form.id) else {
            problems.push(format!("{}: not in the recording (record it on the GPU)", form.id));
            continue;
        };
        let ours = payload(form);
        if let (Some(g), Some(o)) = (decode(gpu), decode(&ours)) {
            lanes += g.len();
            lanes_agree += g.iter().zip(&o).filter(|(a, b)| a == b).count();
        }
        match (difference(gpu, &ours), listed.contains_key(&form.id)) {
            (None, false) => agree += 1,
            (None, true) => problems.push(format!("{}: listed as differing but agrees (remove it)", form.id)),
            (Some(d), false) => problems.push(format!("{}: {d}", form.id)),
            (Some(_), true) => {}
        }
    }
    for id in listed.keys() {
        if !forms.iter().any(|f| &f.id == id) {
            problems.push(format!("{id}: listed but not a form of the suite"));
        }
    }
    println!(
        "instruction suite: {agree} of {} forms agree with the GPU ({} listed); {lanes_agree} of {lanes} lanes",
        forms.len(),
        listed.len()
    );
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn forms_have_unique_names() {
    let forms = suite::forms::forms();
    let mut seen = std::collections::BTreeSet::new();
    for f in &forms {
        assert!(seen.insert(f.id.clone()), "{} twice", f.id);
    }
}

/// The opcode and first type of a form's name (`add.rn.ftz.f32` → `add`, `f32`).
fn opcode_and_type(id: &str) -> (&str, Option<&str>) {
    const TYPES: &[&str] = &[
        "pred", "b8", "b16", "b32", "b64", "u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64", "f16", "f16x2",
        "bf16", "bf16x2", "f32", "f64",
    ];
    let name = id.split([' ', '+']).next().unwrap_or(id);
    let mut parts = name.split('.');
    let opcode = parts.next().unwrap_or("");
    (opcode, parts.find(|p| TYPES.contains(p)))
}

/// Every (opcode, type) the decoder's table marks for the suite has a form in it: an
/// instruction added to `cudrv_ptx::instructions` without suite forms fails here.
#[test]
fn the_suite_covers_every_form_the_decoder_accepts() {
    let forms = suite::forms::forms();
    let covered: std::collections::BTreeSet<(&str, &str)> = forms
        .iter()
        .filter_map(|f| match opcode_and_type(&f.id) {
            (o, Some(t)) => Some((o, t)),
            _ => None,
        })
        .collect();
    let all: Vec<(&str, &str)> = cudrv_ptx::instructions::suite_forms().collect();
    let missing: Vec<String> = all.iter().filter(|f| !covered.contains(*f)).map(|(o, t)| format!("{o}.{t}")).collect();
    println!(
        "instruction suite coverage: {} of {} (opcode, type) forms the decoder accepts; {} suite forms",
        all.len() - missing.len(),
        all.len(),
        forms.len()
    );
    assert!(missing.is_empty(), "forms without a suite case: {}", missing.join(" "));
}
