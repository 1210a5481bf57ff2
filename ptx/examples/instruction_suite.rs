//! The instruction suite (ptx/tests/suite/):
//!
//! - `cargo run -p cudrv-ptx --example instruction_suite > suite.ptx` writes every form's PTX
//!   module for the GPU run (scripts/probes/instructions/gpu.sh);
//! - `... -- --executor` prints the executor's lines in the GPU run's format
//!   (`ID<tab>PAYLOAD`), to diff against a recording;
//! - `... -- --show ID` prints each lane of one form whose outputs differ: its operands,
//!   the GPU's recorded outputs (ptx/tests/data/instruction-suite-gpu.txt) and the executor's.

#[path = "../tests/suite/mod.rs"]
mod suite;

fn main() {
    let forms = suite::forms::forms();
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--executor") {
        for f in &forms {
            println!("{}\t{}", f.id, suite::run::payload(f));
        }
    } else if let Some(pos) = args.iter().position(|a| a == "--show") {
        let id = args.get(pos + 1).map(String::as_str).unwrap_or("");
        let Some(form) = forms.iter().find(|f| f.id == id) else {
            eprintln!("no form {id:?}");
            std::process::exit(2);
        };
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/instruction-suite-gpu.txt");
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let gpu = text.lines().find_map(|l| l.strip_prefix(&format!("{id}\t"))).unwrap_or("");
        let gpu = suite::run::decode(gpu).unwrap_or_default();
        let ours = suite::run::decode(&suite::run::payload(form)).unwrap_or_default();
        for (i, t) in suite::gen::tuples(&form.srcs).iter().enumerate() {
            let (g, o) = (gpu.get(i).map_or("-", String::as_str), ours.get(i).map_or("-", String::as_str));
            if g != o || args.iter().any(|a| a == "--all") {
                let ops: Vec<String> = t.iter().map(|v| format!("{v:x}")).collect();
                println!("{i}\t{}\tGPU {g}\texecutor {o}", ops.join(" "));
            }
        }
    } else {
        print!("{}", suite::gen::suite_text(&forms));
    }
}
