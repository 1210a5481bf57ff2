//! The one list of instructions: every opcode the decoder accepts, in one row each, and the
//! PTX instructions it knows but does not run ([`NOT_RUN`]).
//!
//! A row gives the opcode, the first types it is run for (the destination's for `cvt`,
//! `set`, `slct` and the video instructions, the compared one for `setp`), its operands'
//! shape ([`Shape`]), the operation it decodes to (`module::Op`, with its sub-operation
//! read from the modifiers by a named enum's decoder, or a named decoder function for the
//! memory, control-flow, warp, texture and video instructions), where its semantics are
//! (an executor arm or a lane function, [`Row::semantics`]) and where its results are held
//! to a GPU's ([`Tested`]). From the rows come the decoder's name-to-operation mapping and
//! operand-count check (`module::decode_inst`, through `table!`), the names of PTX
//! instructions ([`is_ptx_instruction`], the stand-in's JIT log wording), the instruction
//! suite's coverage ([`suite_forms`]) and its bare forms (`ptx/tests/suite/forms.rs` makes
//! `opcode.type` forms of a [`Forms::Bare`] row from its shape).
//!
//! `module::decode_inst` refuses an opcode that is not here and, for a row with types, a
//! first type that is not listed. Every (opcode, type) of a [`Tested::Suite`] row must have a
//! form in the instruction suite (`ptx/tests/suite/`, recorded on the GPU); its test fails
//! otherwise, so an instruction added here cannot escape the suite.

/// Where an instruction's results are compared with a GPU's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tested {
    /// In the instruction suite, every listed type, with forms made as [`Forms`] says.
    Suite(Forms),
    /// Elsewhere: memory, control flow, warp and texture instructions depend on more than
    /// their operands (addresses, lanes, handles); the named tests and the recorded kernel
    /// corpus check them.
    Elsewhere(&'static str),
}

/// How the instruction suite's forms of a row are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forms {
    /// `opcode.type %d0, %a, ...` for every listed type, made from the row's shape (the
    /// instruction needs no modifier); forms with modifiers are written by hand beside them.
    Bare,
    /// Written by hand (`ptx/tests/suite/forms.rs`): the instruction needs a modifier
    /// (`mul.lo`, `div.rn`, a comparison, a second type) or operands of its own form.
    Written,
}

/// The type of one operand, as the decoder types it (an immediate is encoded for it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// The instruction's first type.
    T,
    /// Its second type (`cvt`'s source, the compared values of `set`, `slct`'s selector).
    T2,
    /// A predicate.
    Pred,
    /// A 32-bit unsigned value whatever the instruction's type (a shift amount, a bit
    /// position or count).
    U32,
    /// A memory operand `[address]` (or a texture's or surface's `[handle, coordinates]`).
    Addr,
    /// A label (a branch target).
    Label,
}

/// An instruction's operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Its destinations and sources, in order, each with its type: the decoder refuses
    /// fewer operands than these, and types each as listed. More may follow where a
    /// modifier asks for them (`setp.and`'s predicate, `atom.cas`'s second value).
    Operands {
        /// The destinations (first in the text).
        dsts: &'static [Arg],
        /// The sources.
        srcs: &'static [Arg],
    },
    /// Counted and checked by the instruction's own decoder (calls, barriers, warp and
    /// video instructions: operand lists of their own form); every operand of the first
    /// type.
    Decoder,
}

impl Shape {
    /// The fewest operands the decoder accepts.
    pub fn operands(&self) -> usize {
        match self {
            Shape::Operands { dsts, srcs } => dsts.len() + srcs.len(),
            Shape::Decoder => 0,
        }
    }

    /// The type of operand `k` (0: the first destination): its listed one; past the list,
    /// the last one's (`cvt.f16x2.f32`'s second source, `atom.cas`'s second value).
    pub fn arg(&self, k: usize) -> Arg {
        match self {
            Shape::Operands { dsts, srcs } => {
                dsts.iter().chain(srcs.iter()).take(k + 1).last().copied().unwrap_or(Arg::T)
            }
            Shape::Decoder => Arg::T,
        }
    }
}

/// One opcode the decoder accepts.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    /// The opcode (the instruction name's first part).
    pub opcode: &'static str,
    /// The first types the executor runs it for; empty: no type, or not checked here.
    pub types: &'static [&'static str],
    /// Its operands.
    pub shape: Shape,
    /// Where its semantics are: `file::Op::Variant` (the executor's arm in that file of
    /// `ptx/src/`) or `file::function` (a lane function); `tests/instruction_table.rs`
    /// checks that the file has it.
    pub semantics: &'static str,
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
const U32_S32_F32: &[&str] = &["u32", "s32", "f32"];
const B32_64: &[&str] = &["b32", "b64"];
const B32: &[&str] = &["b32"];
const NONE: &[&str] = &[];

const BARE: Tested = Tested::Suite(Forms::Bare);
const WRITTEN: Tested = Tested::Suite(Forms::Written);
const MEMORY: Tested = Tested::Elsewhere("memory: ptx/tests/instructions.rs and the kernel corpus");
const CONTROL: Tested = Tested::Elsewhere("control flow: ptx/tests/instructions.rs, limits.rs and the corpus");
const WARP: Tested = Tested::Elsewhere("warp and block synchronisation: ptx/tests/instructions.rs and the corpus");
const TEXTURE: Tested = Tested::Elsewhere("textures and surfaces: ptx/tests/textures.rs and the texture probe");

/// The table: `$then! { rows }`, each row
///
/// `"opcode" TYPES [dsts <- srcs] (decoding) TESTED "semantics";`
///
/// - `TYPES`: a list of first types above; `[dsts <- srcs]`: the operands' [`Arg`]s
///   (`[decoder]`: [`Shape::Decoder`]);
/// - `(decoding)`: `(Variant)` decodes to `Op::Variant`; `(Variant Sub)` to
///   `Op::Variant(sub)`, `Sub` a named enum read from the modifiers (`module::FromMods`);
///   `(fn name)` to what `module::name` makes of the modifiers (`cvta`, `bar`/`barrier`,
///   the texture and surface instructions: decoding of their own);
/// - `TESTED`: [`Tested`] (`BARE`, `WRITTEN`: in the suite, [`Forms`]);
/// - `"semantics"`: [`Row::semantics`].
///
/// `module.rs` expands it into `decode_op` (the name-to-operation mapping), this file into
/// [`ROWS`]: adding an instruction is adding its row here, and its semantics.
macro_rules! table {
    ($then:ident) => {
        $then! {
            // Integer and float arithmetic.
            "add" ARITH [T <- T T] (Add) BARE "exec::Op::Add";
            "sub" ARITH [T <- T T] (Sub) BARE "exec::Op::Sub";
            "mul" ARITH [T <- T T] (Mul MulMode) WRITTEN "exec::Op::Mul";
            "mad" INT_F32_F64 [T <- T T T] (Mad MulMode) WRITTEN "exec::Op::Mad";
            "addc" C32_64 [T <- T T] (Addc) WRITTEN "exec::Op::Addc";
            "subc" C32_64 [T <- T T] (Subc) WRITTEN "exec::Op::Subc";
            "madc" C32_64 [T <- T T T] (Madc MulMode) WRITTEN "exec::Op::Madc";
            "mul24" U32_S32 [T <- T T] (Mul24 Half) WRITTEN "exec::Op::Mul24";
            "mad24" U32_S32 [T <- T T T] (Mad24 Half) WRITTEN "exec::Op::Mad24";
            "div" INT_F32_F64 [T <- T T] (Div) WRITTEN "exec::Op::Div";
            "rem" INT [T <- T T] (Rem) BARE "exec::Op::Rem";
            "min" ARITH [T <- T T] (Min) BARE "exec::Op::Min";
            "max" ARITH [T <- T T] (Max) BARE "exec::Op::Max";
            "abs" SIGNED_FLOAT [T <- T] (Abs) BARE "exec::Op::Abs";
            "neg" SIGNED_FLOAT [T <- T] (Neg) BARE "exec::Op::Neg";
            "sad" INT [T <- T T T] (Sad) BARE "exec::Op::Sad";
            // Shifts, logic and bits.
            "shl" BITS [T <- T U32] (Shl) BARE "alu::shl";
            "shr" SHR [T <- T U32] (Shr) BARE "alu::shr";
            "shf" B32 [T <- T T U32] (Shf Funnel) WRITTEN "exec::Op::Shf";
            "and" LOGIC [T <- T T] (And) BARE "exec::Op::And";
            "or" LOGIC [T <- T T] (Or) BARE "exec::Op::Or";
            "xor" LOGIC [T <- T T] (Xor) BARE "exec::Op::Xor";
            "not" LOGIC [T <- T] (Not) BARE "exec::Op::Not";
            "cnot" BITS [T <- T] (Cnot) BARE "exec::Op::Cnot";
            "lop3" B32 [T <- T T T U32] (Lop3) WRITTEN "exec::Op::Lop3";
            "popc" B32_64 [U32 <- T] (Popc) BARE "exec::Op::Popc";
            "clz" B32_64 [U32 <- T] (Clz) BARE "exec::Op::Clz";
            "brev" B32_64 [T <- T] (Brev) BARE "exec::Op::Brev";
            "bfind" C32_64 [U32 <- T] (Bfind BfindMode) BARE "exec::Op::Bfind";
            "bfe" C32_64 [T <- T U32 U32] (Bfe) BARE "exec::Op::Bfe";
            "bfi" B32_64 [T <- T T U32 U32] (Bfi) BARE "exec::Op::Bfi";
            "prmt" B32 [T <- T T T] (Prmt PrmtMode) BARE "exec::prmt";
            "dp4a" U32_S32 [T <- T T2 T] (Dp4a) WRITTEN "exec::Op::Dp4a";
            "dp2a" U32_S32 [T <- T T2 T] (Dp2a Half) WRITTEN "exec::Op::Dp2a";
            // Comparison and selection.
            "setp" COMPARED [Pred <- T T] (Setp) WRITTEN "exec::Op::Setp";
            "set" U32_S32_F32 [T <- T2 T2] (Set) WRITTEN "exec::Op::Set";
            "selp" SELECTED [T <- T T Pred] (Selp) BARE "exec::Op::Selp";
            "slct" SELECTED [T <- T T T2] (Slct) WRITTEN "exec::Op::Slct";
            // Moves and conversions.
            "mov" MOV [T <- T] (Mov) BARE "exec::Op::Mov";
            "cvt" CVT [T <- T2] (Cvt) WRITTEN "exec::cvt";
            // Floating point.
            "fma" FMA [T <- T T T] (Fma) WRITTEN "exec::Op::Fma";
            "sqrt" F32_F64 [T <- T] (Sqrt) WRITTEN "exec::unary_float";
            "rcp" F32_F64 [T <- T] (Rcp) WRITTEN "exec::unary_float";
            "rsqrt" F32_F64 [T <- T] (Rsqrt) WRITTEN "exec::unary_float";
            "ex2" HALF_F32 [T <- T] (Ex2) WRITTEN "exec::unary_float";
            "lg2" F32 [T <- T] (Lg2) WRITTEN "exec::unary_float";
            "sin" F32 [T <- T] (Sin) WRITTEN "exec::unary_float";
            "cos" F32 [T <- T] (Cos) WRITTEN "exec::unary_float";
            "tanh" HALF_F32 [T <- T] (Tanh) WRITTEN "exec::unary_float";
            "copysign" F32_F64 [T <- T T] (Copysign) BARE "exec::Op::Copysign";
            "testp" F32_F64 [Pred <- T] (Testp TestpKind) WRITTEN "exec::Op::Testp";
            // Atomics (in the suite on global memory).
            "atom" ATOM [T <- Addr T] (Atom AtomOp) WRITTEN "exec::atom";
            "red" ATOM [<- Addr T] (Red AtomOp) WRITTEN "exec::atom";
            // Video (SIMD within a word): operands with selectors, checked by video.rs.
            "vadd" U32_S32 [decoder] (Video Video) WRITTEN "video::eval";
            "vsub" U32_S32 [decoder] (Video Video) WRITTEN "video::eval";
            "vabsdiff" U32_S32 [decoder] (Video Video) WRITTEN "video::eval";
            "vmin" U32_S32 [decoder] (Video Video) WRITTEN "video::eval";
            "vmax" U32_S32 [decoder] (Video Video) WRITTEN "video::eval";
            "vshl" U32_S32 [decoder] (Video Video) WRITTEN "video::eval";
            "vshr" U32_S32 [decoder] (Video Video) WRITTEN "video::eval";
            "vmad" U32_S32 [decoder] (Video Video) WRITTEN "video::eval";
            "vset" U32_S32 [decoder] (Video Video) WRITTEN "video::eval";
            "vadd2" U32_S32 [decoder] (Video Video) WRITTEN "video::eval";
            "vsub2" U32_S32 [decoder] (Video Video) WRITTEN "video::eval";
            "vavrg2" U32_S32 [decoder] (Video Video) WRITTEN "video::eval";
            "vabsdiff2" U32_S32 [decoder] (Video Video) WRITTEN "video::eval";
            "vmin2" U32_S32 [decoder] (Video Video) WRITTEN "video::eval";
            "vmax2" U32_S32 [decoder] (Video Video) WRITTEN "video::eval";
            "vset2" U32_S32 [decoder] (Video Video) WRITTEN "video::eval";
            "vadd4" U32_S32 [decoder] (Video Video) WRITTEN "video::eval";
            "vsub4" U32_S32 [decoder] (Video Video) WRITTEN "video::eval";
            "vavrg4" U32_S32 [decoder] (Video Video) WRITTEN "video::eval";
            "vabsdiff4" U32_S32 [decoder] (Video Video) WRITTEN "video::eval";
            "vmin4" U32_S32 [decoder] (Video Video) WRITTEN "video::eval";
            "vmax4" U32_S32 [decoder] (Video Video) WRITTEN "video::eval";
            "vset4" U32_S32 [decoder] (Video Video) WRITTEN "video::eval";
            // Memory.
            "cvta" NONE [T <- T] (fn cvta_op) MEMORY "alu::cvta";
            "isspacep" NONE [Pred <- T] (Isspacep Sp) MEMORY "exec::Op::Isspacep";
            "ld" NONE [T <- Addr] (Ld) MEMORY "exec::ld_st";
            "ldu" NONE [T <- Addr] (Ld) MEMORY "exec::ld_st";
            "st" NONE [<- Addr T] (St) MEMORY "exec::ld_st";
            "prefetch" NONE [decoder] (Nop) MEMORY "exec::Op::Nop";
            "prefetchu" NONE [decoder] (Nop) MEMORY "exec::Op::Nop";
            "membar" NONE [decoder] (Nop) MEMORY "exec::Op::Nop";
            "fence" NONE [decoder] (Nop) MEMORY "exec::Op::Nop";
            // Control flow.
            "bra" NONE [<- Label] (Bra) CONTROL "exec::Op::Bra";
            "call" NONE [decoder] (Call) CONTROL "exec::call";
            "ret" NONE [decoder] (Ret) CONTROL "exec::Op::Ret";
            "exit" NONE [decoder] (Exit) CONTROL "exec::Op::Exit";
            "trap" NONE [decoder] (Trap) CONTROL "exec::Op::Trap";
            "brkpt" NONE [decoder] (Nop) CONTROL "exec::Op::Nop";
            "nanosleep" NONE [decoder] (Nop) CONTROL "exec::Op::Nop";
            "pmevent" NONE [decoder] (Nop) CONTROL "exec::Op::Nop";
            // Warp and block synchronisation.
            "bar" NONE [decoder] (fn bar_op) WARP "exec::Op::Bar";
            "barrier" NONE [decoder] (fn bar_op) WARP "exec::Op::Bar";
            "shfl" NONE [decoder] (Shfl ShflMode) WARP "exec::Op::Shfl";
            "vote" NONE [decoder] (Vote VoteMode) WARP "exec::Op::Vote";
            "activemask" NONE [decoder] (Activemask) WARP "exec::Op::Activemask";
            "match" NONE [decoder] (Match MatchMode) WARP "exec::Op::Match";
            "redux" NONE [decoder] (Redux ReduxOp) WARP "exec::Op::Redux";
            // Textures and surfaces.
            "tex" NONE [T <- Addr] (fn texture_op) TEXTURE "exec_texture::Op::Tex";
            "tld4" NONE [T <- Addr] (fn texture_op) TEXTURE "exec_texture::Op::Tld4";
            "txq" NONE [T <- Addr] (TexQuery Query) TEXTURE "exec_texture::Op::TexQuery";
            "suld" NONE [T <- Addr] (fn texture_op) TEXTURE "exec_texture::Op::Suld";
            "sust" NONE [<- Addr T] (fn texture_op) TEXTURE "exec_texture::Op::Sust";
            "suq" NONE [T <- Addr] (TexQuery Query) TEXTURE "exec_texture::Op::TexQuery";
        }
    };
}
pub(crate) use table;

/// The operands of a row's `[dsts <- srcs]` (or `[decoder]`).
macro_rules! shape {
    ([decoder]) => {
        Shape::Decoder
    };
    ([$($d:ident)* <- $($s:ident)*]) => {
        Shape::Operands { dsts: &[$(Arg::$d),*], srcs: &[$(Arg::$s),*] }
    };
}

macro_rules! rows {
    ($($op:literal $types:ident $shape:tt $decode:tt $tested:ident $semantics:literal;)*) => {
        /// Every opcode the decoder accepts.
        pub const ROWS: &[Row] = &[$(Row {
            opcode: $op,
            types: $types,
            shape: shape!($shape),
            semantics: $semantics,
            tested: $tested,
        }),*];
    };
}

table!(rows);

/// PTX instructions (the PTX ISA's names) the executor does not run: `module::decode_inst`
/// refuses them, naming them, and the parser skips their operands (tensor-core and
/// asynchronous-copy forms have syntax of their own). With the rows' opcodes, every name
/// of a PTX instruction ([`is_ptx_instruction`]).
pub const NOT_RUN: &[&str] = &[
    // Tensor cores and matrices.
    "mma",
    "wgmma",
    "wmma",
    "ldmatrix",
    "stmatrix",
    "movmatrix",
    "tcgen05",
    // Asynchronous copies, bulk tensors, memory barriers and cache policies.
    "cp",
    "mbarrier",
    "tensormap",
    "multimem",
    "applypriority",
    "discard",
    "createpolicy",
    // Clusters, launch and register control.
    "griddepcontrol",
    "setmaxnreg",
    "elect",
    "clusterlaunchcontrol",
    "getctarank",
    "mapa",
    // Stack, surfaces' reductions, type tests and the rarer integer forms.
    "alloca",
    "stacksave",
    "stackrestore",
    "sured",
    "istypep",
    "szext",
    "bmsk",
    "fns",
    "brx",
];

/// Instruction forms the executor refuses by the start of their full name, though it runs
/// other forms of the opcode.
pub const NOT_RUN_FORMS: &[&str] = &["cvt.pack", "barrier.cluster"];

/// The row of `opcode`, if the decoder accepts it.
pub fn row(opcode: &str) -> Option<&'static Row> {
    ROWS.iter().find(|r| r.opcode == opcode)
}

/// Whether `opcode` (the part of an instruction's name before its first `.`) names a PTX
/// instruction: a row's or one of [`NOT_RUN`].
pub fn is_ptx_instruction(opcode: &str) -> bool {
    row(opcode).is_some() || NOT_RUN.contains(&opcode)
}

/// Whether the executor refuses instruction `name` (with its modifiers) by its name alone:
/// its opcode is one of [`NOT_RUN`] or it starts with one of [`NOT_RUN_FORMS`].
pub fn not_run(name: &str) -> bool {
    let opcode = name.split('.').next().unwrap_or(name);
    NOT_RUN.contains(&opcode) || NOT_RUN_FORMS.iter().any(|f| name.starts_with(f))
}

/// Every (opcode, type) the instruction suite must cover: the types of the [`Tested::Suite`]
/// rows.
pub fn suite_forms() -> impl Iterator<Item = (&'static str, &'static str)> {
    ROWS.iter()
        .filter(|r| matches!(r.tested, Tested::Suite(_)))
        .flat_map(|r| r.types.iter().map(move |t| (r.opcode, *t)))
}
