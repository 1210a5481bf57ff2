//! `Module::load_shared`: one module per text while it lives.

use std::sync::Arc;

use cudrv_ptx::Module;

const PTX: &str = ".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u32 n)
{
    ret;
}
";

/// The same text gives the same module while one is alive (its translation and compiled
/// runs with it), another text another module, and the text a new module once the last
/// holder dropped it; a text that fails to load is an error each time.
#[test]
fn a_text_loaded_twice_is_one_module_while_alive() {
    let text = format!("{PTX}// shared-modules test\n");
    let a = Module::load_shared(&text).expect("loads");
    let b = Module::load_shared(&text).expect("loads");
    assert!(Arc::ptr_eq(&a, &b));
    let other = Module::load_shared(&format!("{text}// another\n")).expect("loads");
    assert!(!Arc::ptr_eq(&a, &other));
    let weak = Arc::downgrade(&a);
    drop((a, b));
    assert!(weak.upgrade().is_none());
    let c = Module::load_shared(&text).expect("loads");
    assert_eq!(Arc::strong_count(&c), 1);
    let bad = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n    bogus.u32 %r1;\n}\n";
    assert!(Module::load_shared(bad).is_err());
    assert!(Module::load_shared(bad).is_err());
}
