//! The instructions the decoder accepts: each opcode with the operand types it is run for
//! (its first type: the destination's for `cvt`, `set`, `slct` and the video instructions,
//! the compared one for `setp`), and where its results are held to a GPU's.
//!
//! `module::decode_inst` refuses an opcode that is not here and, for a row with types, a
//! first type that is not listed. Every (opcode, type) of a [`Tested::Suite`] row must have a
//! form in the instruction suite (`ptx/tests/suite/`, recorded on the GPU); its test fails
//! otherwise, so an instruction added here cannot escape the suite ([`suite_forms`]).

/// Where an instruction's results are compared with a GPU's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tested {
    /// In the instruction suite, every listed type.
    Suite,
    /// Elsewhere: memory, control flow, warp and texture instructions depend on more than
    /// their operands (addresses, lanes, handles); the named tests and the recorded kernel
    /// corpus check them.
    Elsewhere(&'static str),
}

/// One opcode the decoder accepts.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    /// The opcode (the instruction name's first part).
    pub opcode: &'static str,
    /// The first types the executor runs it for; empty: no type, or not checked here.
    pub types: &'static [&'static str],
    /// Where its results are held to a GPU's.
    pub tested: Tested,
}

const INT: &[&str] = &["u16", "s16", "u32", "s32", "u64", "s64"];
const ARITH: &[&str] = &["u16", "s16", "u32", "s32", "u64", "s64", "f32", "f64", "f16", "f16x2", "bf16", "bf16x2"];
const INT_F32_F64: &[&str] = &["u16", "s16", "u32", "s32", "u64", "s64", "f32", "f64"];
const SIGNED_FLOAT: &[&str] = &["s16", "s32", "s64", "f32", "f64", "f16", "f16x2", "bf16", "bf16x2"];
const BITS: &[&str] = &["b16", "b32", "b64"];
const LOGIC: &[&str] = &["pred", "b16", "b32", "b64"];
const SHR: &[&str] = &["b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64"];
const COMPARED: &[&str] = &["b16", "b32", "b64", "u16", "s16", "u32", "s32", "u64", "s64", "f32", "f64", "f16", "bf16"];
const SELECTED: &[&str] = &["b16", "b32", "b64", "u16", "s16", "u32", "s32", "u64", "s64", "f32", "f64"];
const CVT: &[&str] =
    &["u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64", "f16", "bf16", "f32", "f64", "f16x2", "bf16x2"];
const MOV: &[&str] = &["pred", "b16", "b32", "b64", "u16", "s16", "u32", "s32", "u64", "s64", "f32", "f64"];
const ATOM: &[&str] = &["b32", "b64", "u32", "s32", "u64", "s64", "f32", "f64", "f16", "bf16", "f16x2"];
const F32_F64: &[&str] = &["f32", "f64"];
const F32: &[&str] = &["f32"];
const HALF_F32: &[&str] = &["f32", "f16", "f16x2", "bf16", "bf16x2"];
const FMA: &[&str] = &["f32", "f64", "f16", "f16x2", "bf16", "bf16x2"];
const C32_64: &[&str] = &["u32", "s32", "u64", "s64"];
const U32_S32: &[&str] = &["u32", "s32"];
const B32_64: &[&str] = &["b32", "b64"];
const B32: &[&str] = &["b32"];
const NONE: &[&str] = &[];

const MEMORY: Tested = Tested::Elsewhere("memory: ptx/tests/instructions.rs and the kernel corpus");
const CONTROL: Tested = Tested::Elsewhere("control flow: ptx/tests/instructions.rs, limits.rs and the corpus");
const WARP: Tested = Tested::Elsewhere("warp and block synchronisation: ptx/tests/instructions.rs and the corpus");
const TEXTURE: Tested = Tested::Elsewhere("textures and surfaces: ptx/tests/textures.rs and the texture probe");
const SUITE: Tested = Tested::Suite;

macro_rules! rows {
    ($($op:literal $types:ident $tested:ident;)*) => {
        /// Every opcode the decoder accepts.
        pub const ROWS: &[Row] = &[$(Row { opcode: $op, types: $types, tested: $tested }),*];
    };
}

rows! {
    "add" ARITH SUITE; "sub" ARITH SUITE; "mul" ARITH SUITE; "mad" INT_F32_F64 SUITE;
    "addc" C32_64 SUITE; "subc" C32_64 SUITE; "madc" C32_64 SUITE;
    "mul24" U32_S32 SUITE; "mad24" U32_S32 SUITE;
    "div" INT_F32_F64 SUITE; "rem" INT SUITE; "min" ARITH SUITE; "max" ARITH SUITE;
    "abs" SIGNED_FLOAT SUITE; "neg" SIGNED_FLOAT SUITE; "sad" INT SUITE;
    "shl" BITS SUITE; "shr" SHR SUITE; "shf" B32 SUITE;
    "and" LOGIC SUITE; "or" LOGIC SUITE; "xor" LOGIC SUITE; "not" LOGIC SUITE; "cnot" BITS SUITE;
    "lop3" B32 SUITE; "popc" B32_64 SUITE; "clz" B32_64 SUITE; "brev" B32_64 SUITE;
    "bfind" C32_64 SUITE; "bfe" C32_64 SUITE; "bfi" B32_64 SUITE; "prmt" B32 SUITE;
    "dp4a" U32_S32 SUITE; "dp2a" U32_S32 SUITE;
    "setp" COMPARED SUITE; "set" U32_S32_F32 SUITE; "selp" SELECTED SUITE; "slct" SELECTED SUITE;
    "mov" MOV SUITE; "cvt" CVT SUITE;
    "fma" FMA SUITE; "sqrt" F32_F64 SUITE; "rcp" F32_F64 SUITE; "rsqrt" F32_F64 SUITE;
    "ex2" HALF_F32 SUITE; "lg2" F32 SUITE; "sin" F32 SUITE; "cos" F32 SUITE; "tanh" HALF_F32 SUITE;
    "copysign" F32_F64 SUITE; "testp" F32_F64 SUITE;
    "atom" ATOM SUITE; "red" ATOM SUITE;
    "vadd" U32_S32 SUITE; "vsub" U32_S32 SUITE; "vabsdiff" U32_S32 SUITE; "vmin" U32_S32 SUITE;
    "vmax" U32_S32 SUITE; "vshl" U32_S32 SUITE; "vshr" U32_S32 SUITE; "vmad" U32_S32 SUITE;
    "vset" U32_S32 SUITE;
    "vadd2" U32_S32 SUITE; "vsub2" U32_S32 SUITE; "vavrg2" U32_S32 SUITE; "vabsdiff2" U32_S32 SUITE;
    "vmin2" U32_S32 SUITE; "vmax2" U32_S32 SUITE; "vset2" U32_S32 SUITE;
    "vadd4" U32_S32 SUITE; "vsub4" U32_S32 SUITE; "vavrg4" U32_S32 SUITE; "vabsdiff4" U32_S32 SUITE;
    "vmin4" U32_S32 SUITE; "vmax4" U32_S32 SUITE; "vset4" U32_S32 SUITE;
    "cvta" NONE MEMORY; "isspacep" NONE MEMORY; "ld" NONE MEMORY; "ldu" NONE MEMORY; "st" NONE MEMORY;
    "prefetch" NONE MEMORY; "prefetchu" NONE MEMORY; "membar" NONE MEMORY; "fence" NONE MEMORY;
    "bra" NONE CONTROL; "call" NONE CONTROL; "ret" NONE CONTROL; "exit" NONE CONTROL;
    "trap" NONE CONTROL; "brkpt" NONE CONTROL; "nanosleep" NONE CONTROL; "pmevent" NONE CONTROL;
    "bar" NONE WARP; "barrier" NONE WARP; "shfl" NONE WARP; "vote" NONE WARP;
    "activemask" NONE WARP; "match" NONE WARP; "redux" NONE WARP;
    "tex" NONE TEXTURE; "tld4" NONE TEXTURE; "txq" NONE TEXTURE; "suld" NONE TEXTURE;
    "sust" NONE TEXTURE; "suq" NONE TEXTURE;
}

const U32_S32_F32: &[&str] = &["u32", "s32", "f32"];

/// The row of `opcode`, if the decoder accepts it.
pub fn row(opcode: &str) -> Option<&'static Row> {
    ROWS.iter().find(|r| r.opcode == opcode)
}

/// Every (opcode, type) the instruction suite must cover: the types of the [`Tested::Suite`]
/// rows.
pub fn suite_forms() -> impl Iterator<Item = (&'static str, &'static str)> {
    ROWS.iter().filter(|r| r.tested == Tested::Suite).flat_map(|r| r.types.iter().map(move |t| (r.opcode, *t)))
}
