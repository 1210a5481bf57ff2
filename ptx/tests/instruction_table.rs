//! The decoder's one list of instructions (`cudrv_ptx::instructions`) is consistent: each
//! opcode once, the names of PTX instructions it does not run apart from the ones it runs,
//! and every row's semantics where the row says they are.

use std::collections::BTreeSet;
use std::path::Path;

use cudrv_ptx::instructions::{is_ptx_instruction, not_run, Shape, NOT_RUN, ROWS};

#[test]
fn each_opcode_has_one_row_and_no_run_name_is_a_row() {
    let mut seen = BTreeSet::new();
    for r in ROWS {
        assert!(seen.insert(r.opcode), "{} has two rows", r.opcode);
        assert!(is_ptx_instruction(r.opcode) && !not_run(r.opcode), "{}", r.opcode);
    }
    for n in NOT_RUN {
        assert!(!seen.contains(n), "{n} is a row and not run");
        assert!(is_ptx_instruction(n) && not_run(n), "{n}");
    }
    assert!(!is_ptx_instruction("bogus_instruction") && !is_ptx_instruction("istypeof"));
    assert!(not_run("cvt.pack.sat.u8.s32.b32") && !not_run("cvt.rn.f32.f64"));
}

/// `file::Op::Variant`: that file of `src/` has the executor's arm; `file::name`: it has
/// `fn name`.
#[test]
fn every_row_names_where_its_semantics_are() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for r in ROWS {
        let (file, item) = r.semantics.split_once("::").unwrap_or_else(|| panic!("{}: {}", r.opcode, r.semantics));
        let text = std::fs::read_to_string(src.join(format!("{file}.rs")))
            .unwrap_or_else(|e| panic!("{}: {}: {e}", r.opcode, r.semantics));
        let found = if item.starts_with("Op::") {
            text.contains(&format!("{item} "))
                || text.contains(&format!("{item}("))
                || text.contains(&format!("{item} {{"))
        } else {
            text.contains(&format!("fn {item}("))
        };
        assert!(found, "{}: {} is not in src/{file}.rs", r.opcode, r.semantics);
    }
}

#[test]
fn shapes_count_operands() {
    let row = |op: &str| ROWS.iter().find(|r| r.opcode == op).unwrap();
    assert_eq!(row("lop3").shape.operands(), 5);
    assert_eq!(row("bra").shape.operands(), 1);
    assert_eq!(row("vadd").shape, Shape::Decoder);
}
