//! Module-scope texture and surface references are names, not globals.

use cudrv_ptx::{Module, Reference, ReferenceKind};

#[test]
fn texref_and_surfref_declarations_are_references_not_globals() {
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\
        .global .texref tex_a;\n.global .surfref surf_b;\n.global .u32 counter;\n\
        .visible .entry k()\n{\n\tret;\n}\n";
    let m = Module::load(ptx).expect("loads");
    assert_eq!(
        m.references(),
        [
            Reference { name: "tex_a".into(), kind: ReferenceKind::Texture },
            Reference { name: "surf_b".into(), kind: ReferenceKind::Surface },
        ]
    );
    let globals: Vec<&str> = m.globals().iter().map(|g| g.name.as_str()).collect();
    assert_eq!(globals, ["counter"]);
}
