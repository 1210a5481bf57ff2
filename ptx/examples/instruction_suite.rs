//! The instruction suite (ptx/tests/suite/): `cargo run -p cudrv-ptx --example
//! instruction_suite > suite.ptx` writes every form's PTX module for the GPU run
//! (scripts/probes/instructions/run.c); with `--executor` it prints the executor's lines in
//! the GPU run's format instead (`ID<tab>PAYLOAD`), to diff against a recording.

#[path = "../tests/suite/mod.rs"]
mod suite;

fn main() {
    let forms = suite::forms::forms();
    if std::env::args().any(|a| a == "--executor") {
        for f in &forms {
            println!("{}\t{}", f.id, suite::run::payload(f));
        }
    } else {
        print!("{}", suite::gen::suite_text(&forms));
    }
}
