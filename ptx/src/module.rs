//! The pre-decoded form: a module's functions with registers resolved to slots, labels to
//! instruction indices, symbols to their state space and offset, operands typed.

use std::collections::{HashMap, HashSet};

use crate::float::{Fmt, Rnd};
use crate::instructions::{Arg, Row};
use crate::lanes::Steps;
use crate::parse::{err, parse, Ast, FuncAst, Init, InstAst, Operand, PtxError, Space, Stmt, Var};
use crate::texture::{Geom, Oob, Query};
use crate::video::Video;

/// The kind of a type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum K {
    U,
    S,
    B,
    F,
    Bf,
    F16x2,
    Bf16x2,
    Pred,
}

/// A PTX scalar type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ty {
    pub(crate) k: K,
    pub(crate) bits: u32,
}

impl Ty {
    pub(crate) const NONE: Ty = Ty { k: K::B, bits: 0 };
    fn parse(s: &str) -> Option<Ty> {
        let (k, bits) = match s {
            "pred" => (K::Pred, 1),
            "f16" => (K::F, 16),
            "f32" => (K::F, 32),
            "f64" => (K::F, 64),
            "bf16" => (K::Bf, 16),
            "f16x2" => (K::F16x2, 32),
            "bf16x2" => (K::Bf16x2, 32),
            _ => {
                let k = match s.as_bytes().first() {
                    Some(b'u') => K::U,
                    Some(b's') => K::S,
                    Some(b'b') => K::B,
                    _ => return None,
                };
                let bits: u32 = s.get(1..)?.parse().ok()?;
                if ![8, 16, 32, 64].contains(&bits) {
                    return None;
                }
                (k, bits)
            }
        };
        Some(Ty { k, bits })
    }
    pub(crate) fn bytes(self) -> usize {
        (self.bits as usize).div_ceil(8)
    }
    pub(crate) fn is_float(self) -> bool {
        matches!(self.k, K::F | K::Bf | K::F16x2 | K::Bf16x2)
    }
    pub(crate) fn fmt(self) -> Fmt {
        match (self.k, self.bits) {
            (K::Bf, _) | (K::Bf16x2, _) => Fmt::Bf16,
            (K::F, 16) | (K::F16x2, _) => Fmt::F16,
            _ => Fmt::F32,
        }
    }
}

/// A special register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sreg {
    Tid(u8),
    Ntid(u8),
    Ctaid(u8),
    Nctaid(u8),
    Laneid,
    Warpid,
    Nwarpid,
    Smid,
    Nsmid,
    Gridid,
    Clock,
    Clock64,
    Globaltimer,
    GlobaltimerLo,
    GlobaltimerHi,
    DynSmem,
    TotalSmem,
    LanemaskEq,
    LanemaskLe,
    LanemaskLt,
    LanemaskGe,
    LanemaskGt,
    Const(u64),
}

fn sreg(name: &str) -> Option<Sreg> {
    let dim = |s: &str| match s {
        "x" => Some(0u8),
        "y" => Some(1),
        "z" => Some(2),
        _ => None,
    };
    if let Some((base, d)) = name.split_once('.') {
        let d = dim(d)?;
        return Some(match base {
            "%tid" => Sreg::Tid(d),
            "%ntid" => Sreg::Ntid(d),
            "%ctaid" => Sreg::Ctaid(d),
            "%nctaid" => Sreg::Nctaid(d),
            "%clusterid" | "%cluster_ctaid" => Sreg::Const(0),
            "%cluster_nctaid" => Sreg::Const(1),
            "%nclusterid" => Sreg::Nctaid(d),
            _ => return None,
        });
    }
    Some(match name {
        "%laneid" => Sreg::Laneid,
        "%warpid" => Sreg::Warpid,
        "%nwarpid" => Sreg::Nwarpid,
        "%smid" => Sreg::Smid,
        "%nsmid" => Sreg::Nsmid,
        "%gridid" => Sreg::Gridid,
        "%clock" => Sreg::Clock,
        "%clock64" => Sreg::Clock64,
        "%globaltimer" => Sreg::Globaltimer,
        "%globaltimer_lo" => Sreg::GlobaltimerLo,
        "%globaltimer_hi" => Sreg::GlobaltimerHi,
        "%dynamic_smem_size" => Sreg::DynSmem,
        "%total_smem_size" => Sreg::TotalSmem,
        "%lanemask_eq" => Sreg::LanemaskEq,
        "%lanemask_le" => Sreg::LanemaskLe,
        "%lanemask_lt" => Sreg::LanemaskLt,
        "%lanemask_ge" => Sreg::LanemaskGe,
        "%lanemask_gt" => Sreg::LanemaskGt,
        "%cluster_ctarank" | "%is_explicit_cluster" => Sreg::Const(0),
        "%cluster_nctarank" => Sreg::Const(1),
        _ => return None,
    })
}

/// Where a symbol lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Base {
    None,
    Reg(u32),
    /// Offset in the block's shared memory.
    Shared(u64),
    /// Index of a module global (.global/.const): its address is bound by the embedder.
    Global(u32),
    /// Offset in the kernel's parameter buffer.
    KParam(u64),
    /// Offset in the frame's per-thread parameter block.
    FParam(u64),
    /// Offset in the frame's per-thread local block.
    Local(u64),
}

/// A decoded operand.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Opd {
    Reg(u32),
    NotReg(u32),
    Imm(u64),
    Sreg(Sreg),
    /// A memory operand `[base+off]`.
    Addr(Base, i64),
    /// The address of a symbol as a value.
    SymAddr(Base, i64),
    Vector(Box<[Opd]>),
    Label(u32),
    Func(u32),
    List(Box<[Opd]>),
    Sink,
}

/// A memory state space of an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sp {
    Generic,
    Global,
    Const,
    Shared,
    Local,
    Param,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Lo,
    Ls,
    Hi,
    Hs,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BoolOp {
    None,
    And,
    Or,
    Xor,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MulMode {
    Lo,
    Hi,
    Wide,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AtomOp {
    Add,
    Min,
    Max,
    Inc,
    Dec,
    And,
    Or,
    Xor,
    Exch,
    Cas,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Builtin {
    Vprintf,
    AssertFail,
}

/// `testp`'s property.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TestpKind {
    Finite,
    Infinite,
    Number,
    NotANumber,
    Normal,
    Subnormal,
}

/// `bar.red`'s reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BarRed {
    Popc,
    And,
    Or,
}

/// `shfl`'s mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ShflMode {
    Idx,
    Up,
    Down,
    Bfly,
}

/// `vote`'s mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

/// `redux.sync`'s operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

/// Which half of the product `mul24`, `mad24` take and which bytes of `b` `dp2a`
/// multiplies (`.lo`, `.hi`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Half {
    Lo,
    Hi,
}

/// `shf`'s direction (`.l`, `.r`) and how it takes the shift amount (`.wrap`: modulo 32,
/// `.clamp`: at most 32).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Funnel {
    pub(crate) dir: FunnelDir,
    pub(crate) amount: FunnelAmount,
}

/// `shf`'s direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FunnelDir {
    Left,
    Right,
}

/// How `shf` takes its shift amount.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FunnelAmount {
    Wrap,
    Clamp,
}

/// What `bfind` gives: the most significant non-sign bit's position, or (`.shiftamt`) the
/// left shift that brings it to the top.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BfindMode {
    Position,
    ShiftAmount,
}

/// `prmt`'s mode: the general byte selection, or one of the named permutations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PrmtMode {
    /// Each result byte chosen (and optionally sign-replicated) by a nibble of `c`.
    Select,
    /// `.f4e`: forward 4 extract.
    F4e,
    /// `.b4e`: backward 4 extract.
    B4e,
    /// `.rc8`: replicate 8.
    Rc8,
    /// `.ecl`: edge clamp left.
    Ecl,
    /// `.ecr`: edge clamp right.
    Ecr,
    /// `.rc16`: replicate 16.
    Rc16,
}

/// `match.sync`'s mode (`.any`, `.all`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MatchMode {
    Any,
    All,
}

/// Which operand of an `fma` that [`contract`] made from a `mul` and a `sub` is negated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Negated {
    /// None (`fma`, `mad`, a contracted `add`).
    Neither,
    /// The first factor (`x - a*b` as `(-a)*b + x`).
    Factor,
    /// The addend (`a*b - y`).
    Addend,
}

/// The texel component `tld4` gathers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Component {
    R,
    G,
    B,
    A,
}

impl Component {
    /// Its index in a texel (r 0 .. a 3).
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// An operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Add,
    Sub,
    Addc,
    Subc,
    Mul(MulMode),
    Mad(MulMode),
    Madc(MulMode),
    Mul24(Half),
    Mad24(Half),
    Div,
    Rem,
    Min,
    Max,
    Abs,
    Neg,
    Shl,
    Shr,
    Shf(Funnel),
    And,
    Or,
    Xor,
    Not,
    Cnot,
    Lop3,
    Popc,
    Clz,
    Bfind(BfindMode),
    Brev,
    Bfe,
    Bfi,
    Prmt(PrmtMode),
    Dp4a,
    Dp2a(Half),
    Sad,
    Setp,
    Selp,
    Set,
    Slct,
    Mov,
    Cvt,
    Cvta {
        to: bool,
        sp: Sp,
    },
    Isspacep(Sp),
    Fma,
    Sqrt,
    Rcp,
    Rsqrt,
    Ex2,
    Lg2,
    Sin,
    Cos,
    Tanh,
    Copysign,
    Testp(TestpKind),
    Ld,
    St,
    Atom(AtomOp),
    Red(AtomOp),
    Nop,
    Bra,
    Call,
    Ret,
    Exit,
    Trap,
    Bar {
        arrive: bool,
        /// `bar.red`'s reduction; none for `bar.sync`/`bar.arrive`.
        red: Option<BarRed>,
    },
    Shfl(ShflMode),
    Vote(VoteMode),
    Activemask,
    Match(MatchMode),
    Redux(ReduxOp),
    /// `tex[.level|.grad].geom.v4.dtype.ctype` (`level`: a level operand follows).
    Tex {
        geom: Geom,
        level: bool,
    },
    /// `tld4.comp.2d.v4.dtype.f32`.
    Tld4(Component),
    /// `txq.query.b32` and `suq.query.b32`.
    TexQuery(Query),
    /// `suld.b.geom[.vN].bK.oob`.
    Suld {
        geom: Geom,
        oob: Oob,
    },
    /// `sust.b.geom[.vN].bK.oob`.
    Sust {
        geom: Geom,
        oob: Oob,
    },
    /// The video instructions (`vadd`, `vset4`, `vmad`, ...), their modifiers and selectors.
    Video(Video),
}

/// One decoded instruction.
#[derive(Clone, Debug)]
pub(crate) struct Inst {
    pub(crate) op: Op,
    pub(crate) ty: Ty,
    pub(crate) ty2: Ty,
    pub(crate) rnd: Rnd,
    /// cvt: a float-to-integral rounding (.rni/...) was given; or an explicit rounding.
    pub(crate) irnd: bool,
    pub(crate) has_rnd: bool,
    pub(crate) ftz: bool,
    pub(crate) sat: bool,
    pub(crate) approx: bool,
    /// `div.full`: `approx` with the full-range scaling.
    pub(crate) full: bool,
    pub(crate) nan: bool,
    pub(crate) cc: bool,
    pub(crate) cmp: Cmp,
    pub(crate) bop: BoolOp,
    pub(crate) sp: Sp,
    pub(crate) vec: u32,
    /// fma only: the operand negated (set by [`contract`]).
    pub(crate) neg: Negated,
    pub(crate) guard: Option<(u32, bool)>,
    pub(crate) ops: Box<[Opd]>,
    pub(crate) line: u32,
    pub(crate) name: Box<str>,
}

impl Inst {
    /// `op` with no operands, types or modifiers, at `line`, named `name` (a bare `ret`, or
    /// an instruction before its parts are decoded).
    fn plain(op: Op, line: u32, name: &str) -> Inst {
        Inst {
            op,
            ty: Ty::NONE,
            ty2: Ty::NONE,
            rnd: Rnd::Rn,
            irnd: false,
            has_rnd: false,
            ftz: false,
            sat: false,
            approx: false,
            full: false,
            nan: false,
            cc: false,
            cmp: Cmp::Eq,
            bop: BoolOp::None,
            sp: Sp::Generic,
            vec: 1,
            neg: Negated::Neither,
            guard: None,
            ops: Box::new([]),
            line,
            name: name.into(),
        }
    }
}

/// A decoded function.
#[derive(Clone, Debug)]
pub(crate) struct Func {
    pub(crate) name: String,
    pub(crate) is_entry: bool,
    /// Register slots of a frame (the registers its instructions name).
    pub(crate) nregs: u32,
    /// Register names its declarations declare.
    pub(crate) declared_regs: u32,
    pub(crate) code: Vec<Inst>,
    /// Byte size of the per-thread parameter block (formal params, returns, body params).
    pub(crate) param_size: u64,
    /// Offsets of formal parameters (in the frame block; for kernels in the param buffer).
    pub(crate) params: Vec<(u64, u64)>,
    pub(crate) rets: Vec<(u64, u64)>,
    pub(crate) local_size: u64,
    pub(crate) builtin: Option<Builtin>,
    /// Its instructions compiled, at its first launch by the compiling executor.
    pub(crate) steps: std::sync::OnceLock<Steps>,
}

/// A module global (.global or .const variable) that the embedder allocates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Global {
    /// Its name in the PTX.
    pub name: String,
    /// `true` for .const, `false` for .global.
    pub is_const: bool,
    /// `true` for `.attribute(.managed)` (`__managed__`): the embedder allocates it as managed
    /// memory.
    pub managed: bool,
    /// Size in bytes.
    pub size: u64,
    /// Alignment in bytes.
    pub align: u64,
    /// The initialiser's bytes: the first `init.len()` bytes of the variable (empty when
    /// the PTX gives none); the rest of it is zeros.
    pub init: Vec<u8>,
    /// Initialiser items that are addresses of other globals: (byte offset in `init`, index
    /// of the global, added offset). [`Module::global_image`] patches them.
    pub relocations: Vec<(u64, u32, i64)>,
}

/// A kernel's parameter: offset and size in the parameter buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelParam {
    /// Byte offset in the kernel's parameter buffer.
    pub offset: u64,
    /// Size in bytes.
    pub size: u64,
    /// Alignment in bytes.
    pub align: u64,
}

/// What `cuFuncGetAttribute` reports of a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    /// The parameters (offset, size, alignment in the parameter buffer).
    pub params: Vec<KernelParam>,
    /// Static shared memory in bytes (the module's, see [`Module::static_shared_size`]).
    pub static_shared_bytes: u64,
    /// Local memory per thread of the kernel's own frame, in bytes.
    pub local_bytes: u64,
    /// Registers the PTX declares (virtual registers; ptxas allocates fewer).
    pub registers: u32,
}

/// How a module's kernels are run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Executor {
    /// Each instruction decoded and dispatched as it runs.
    Interpreter,
    /// The instructions a warp-wide native step exists for compiled to it at a kernel's
    /// first launch (each function once), the others interpreted: the same bits, faster.
    #[default]
    Compiled,
}

impl Executor {
    /// `CUDRV_PTX_EXECUTOR` (`interpreter` or `compiled`), read once per process; the
    /// default ([`Executor::Compiled`]) when it is unset or names neither.
    pub fn from_env() -> Executor {
        static CHOSEN: std::sync::OnceLock<Executor> = std::sync::OnceLock::new();
        *CHOSEN.get_or_init(|| match std::env::var("CUDRV_PTX_EXECUTOR").as_deref() {
            Ok("interpreter") => Executor::Interpreter,
            _ => Executor::Compiled,
        })
    }
}

/// A loaded PTX module: parsed, checked and pre-decoded.
#[derive(Debug)]
pub struct Module {
    /// What the text declares: version, targets, kernels, globals, references.
    pub(crate) decls: Declarations,
    pub(crate) funcs: Vec<Func>,
    pub(crate) global_addrs: Vec<u64>,
    /// The most warp instructions one launch may issue ([`Module::set_instruction_limit`]).
    pub(crate) instruction_limit: Option<u64>,
    /// Which executor runs its kernels ([`Module::set_executor`]).
    pub(crate) executor: Executor,
    /// Static shared memory of the module (all kernels).
    pub(crate) shared_size: u64,
    pub(crate) dyn_shared_offset: u64,
}

/// A kernel (`.entry`) as its text declares it: its name and its parameters' layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelDecl {
    /// Its name in the PTX.
    pub name: String,
    /// Its parameters, in order: each at the next multiple of its alignment (`.align N`,
    /// else its type's size) in the parameter buffer.
    pub params: Vec<KernelParam>,
}

/// What a PTX text declares at module scope: its `.version` and `.target`, its kernels
/// with their parameters' layout, its globals and its texture, surface and sampler
/// references. [`Module::load`] reads these and then decodes the functions' bodies
/// ([`Module::declarations`]); [`Declarations::read`] reads them only, with the same
/// parser and the same code, so it also reads a text whose bodies the executor does not
/// run (an embedder that runs such kernels itself still learns their names and
/// parameters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declarations {
    /// The PTX ISA version of `.version` (major, minor).
    pub version: (u32, u32),
    /// The `.target` list (`sm_90`, `debug`, ...).
    pub targets: Vec<String>,
    /// The kernels (`.entry`), in the order the text first names them, each once (a
    /// declaration and its definition are one kernel).
    pub kernels: Vec<KernelDecl>,
    /// The globals (.global and .const variables, `__device__` and `__constant__` data),
    /// in the order [`Module::bind_globals`] takes their addresses.
    pub globals: Vec<Global>,
    /// The texture, surface and sampler references (`.global .texref NAME;`,
    /// `.global .surfref NAME;`, `.global .samplerref NAME;`), in declaration order, each
    /// once.
    pub references: Vec<Reference>,
}

impl Declarations {
    /// Parses PTX `text` and reads its declarations, without decoding the functions'
    /// bodies: it succeeds on every text [`Module::load`] loads (with the same
    /// declarations) and also on one that `Module::load` refuses for its bodies (an
    /// instruction the executor does not run, an operand it cannot resolve, a limit of
    /// its own). It fails, as `Module::load` does, on a text the parser refuses (syntax;
    /// the error names the line). Where `Module::load` would refuse a declaration (a
    /// module-scope `.local`, an initialiser naming no global), that variable is left
    /// out, or those initialiser bytes left zero, instead.
    pub fn read(text: &str) -> Result<Declarations, PtxError> {
        let ast = parse(text)?;
        Ok(declare(&ast).0.decls)
    }

    /// Kernel `name`, if the text declares it.
    pub fn kernel(&self, name: &str) -> Option<&KernelDecl> {
        self.kernels.iter().find(|k| k.name == name)
    }
}

/// The kind of an opaque module-scope reference (`.texref`, `.surfref`, `.samplerref`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReferenceKind {
    /// `.texref`: a texture reference (`cuModuleGetTexRef`).
    Texture,
    /// `.surfref`: a surface reference (`cuModuleGetSurfRef`).
    Surface,
    /// `.samplerref`: a sampler reference.
    Sampler,
}

/// A module-scope texture, surface or sampler reference: a name the driver binds, not
/// memory (it is not one of [`Module::globals`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    /// Its name in the PTX.
    pub name: String,
    /// Its kind.
    pub kind: ReferenceKind,
}

impl ReferenceKind {
    /// The kind a variable's type names (`texref`, `surfref`, `samplerref`), if any.
    fn of(ty: &str) -> Option<ReferenceKind> {
        match ty {
            "texref" => Some(ReferenceKind::Texture),
            "surfref" => Some(ReferenceKind::Surface),
            "samplerref" => Some(ReferenceKind::Sampler),
            _ => None,
        }
    }
}

fn elem_size(ty: &str) -> u64 {
    Ty::parse(ty).map_or(1, |t| t.bytes().max(1) as u64)
}

fn var_size(v: &Var) -> u64 {
    let mut n = elem_size(&v.ty).saturating_mul(u64::from(v.vec));
    for d in &v.dims {
        n = n.saturating_mul(d.unwrap_or(0));
    }
    n
}

fn var_align(v: &Var) -> u64 {
    if v.align > 0 {
        u64::from(v.align)
    } else {
        elem_size(&v.ty) * u64::from(v.vec)
    }
}

fn align_up(x: u64, a: u64) -> u64 {
    if a <= 1 {
        x
    } else {
        x.div_ceil(a).saturating_mul(a)
    }
}

/// Static shared memory a module may declare (ptxas's limit: 48 KiB).
const MAX_STATIC_SHARED: u64 = 0xc000;
/// Local memory per thread and frame (the GPU's limit: 512 KiB).
const MAX_LOCAL: u64 = 512 * 1024;
/// Registers a function may declare.
const MAX_REGS: u32 = 1 << 16;

impl Module {
    /// Parses and decodes PTX text. Errors name the line and the instruction or directive;
    /// an instruction outside what the executor supports (tensor cores, `cp.async`,
    /// textures and surfaces, ...) is refused here.
    pub fn load(text: &str) -> Result<Module, PtxError> {
        let ast = parse(text)?;
        decode_module(ast)
    }

    /// The PTX ISA version of `.version` (major, minor).
    pub fn version(&self) -> (u32, u32) {
        self.decls.version
    }

    /// The `.target` list (`sm_90`, `debug`, ...).
    pub fn targets(&self) -> &[String] {
        &self.decls.targets
    }

    /// What the module's text declares (the same as [`Declarations::read`] of it).
    pub fn declarations(&self) -> &Declarations {
        &self.decls
    }

    /// The names of the module's kernels (`.entry`).
    pub fn kernels(&self) -> Vec<&str> {
        self.decls.kernels.iter().map(|k| k.name.as_str()).collect()
    }

    /// The parameters of kernel `name`, if it is one.
    pub fn kernel_params(&self, name: &str) -> Option<Vec<KernelParam>> {
        Some(self.decls.kernel(name)?.params.clone())
    }

    /// What attributes report of kernel `name`, if it is one.
    pub fn kernel_info(&self, name: &str) -> Option<KernelInfo> {
        let f = self.funcs.iter().find(|f| f.is_entry && f.name == name)?;
        Some(KernelInfo {
            params: self.kernel_params(name)?,
            static_shared_bytes: self.shared_size,
            local_bytes: f.local_size,
            registers: f.declared_regs,
        })
    }

    /// The module's static shared memory in bytes (what every kernel of it gets).
    pub fn static_shared_size(&self) -> u64 {
        self.shared_size
    }

    /// The module's globals (.global and .const variables, `__device__` and `__constant__`
    /// data), in the order [`Module::bind_globals`] takes their addresses.
    pub fn globals(&self) -> &[Global] {
        &self.decls.globals
    }

    /// The module's texture, surface and sampler references (`.global .texref NAME;`,
    /// `.global .surfref NAME;`, `.global .samplerref NAME;`), in declaration order.
    pub fn references(&self) -> &[Reference] {
        &self.decls.references
    }

    /// Tells the module the device address of each global (same order as
    /// [`Module::globals`]). Launches read and write them through the embedder's memory.
    /// Errors (changing nothing) if the count differs.
    pub fn bind_globals(&mut self, addresses: &[u64]) -> Result<(), String> {
        if addresses.len() != self.decls.globals.len() {
            return Err(format!("{} addresses for {} globals", addresses.len(), self.decls.globals.len()));
        }
        self.global_addrs = addresses.to_vec();
        Ok(())
    }

    /// Bounds every later launch of the module to about `limit` warp instructions (all its
    /// blocks together; blocks running in parallel may overshoot by a few): a launch that
    /// needs more stops and fails with [`Fault::InstructionLimit`](crate::Fault). `None`
    /// (the default) runs kernels to their end, as a GPU does, however long that takes: a
    /// kernel that loops forever never returns. For embedders that run untrusted PTX (a
    /// fuzzer, a sandbox).
    pub fn set_instruction_limit(&mut self, limit: Option<u64>) {
        self.instruction_limit = limit;
    }

    /// Runs the module's kernels with `executor` from now on (a module starts with
    /// [`Executor::from_env`]). Both give the same bits and the same faults.
    pub fn set_executor(&mut self, executor: Executor) {
        self.executor = executor;
    }

    /// The executor that runs the module's kernels.
    pub fn executor(&self) -> Executor {
        self.executor
    }

    /// The initialiser's bytes of global `index` (its first bytes; the rest is zeros) with
    /// address initialisers resolved against `addresses` (the addresses given to
    /// [`Module::bind_globals`]); `None` if out of range.
    pub fn global_image(&self, index: usize, addresses: &[u64]) -> Option<Vec<u8>> {
        let g = self.decls.globals.get(index)?;
        let mut bytes = g.init.clone();
        for &(off, target, add) in &g.relocations {
            let a = addresses.get(target as usize).copied().unwrap_or(0).wrapping_add(add as u64);
            if let Some(dst) = bytes.get_mut(off as usize..off as usize + 8) {
                dst.copy_from_slice(&a.to_le_bytes());
            }
        }
        Some(bytes)
    }
}

/// The registers one scope declares (single names and `%r<N>` ranges) and the slots of
/// those an instruction has named so far.
#[derive(Default)]
struct RegScope {
    names: HashSet<String>,
    /// `%r<N>`: the prefix `%r` and N (it declares `%r0` to `%r{N-1}`).
    ranges: HashMap<String, u32>,
    slots: HashMap<String, u32>,
    /// The values of `slots`, in the order they were handed out.
    order: Vec<u32>,
}

impl RegScope {
    fn declares(&self, name: &str) -> bool {
        if self.names.contains(name) {
            return true;
        }
        if self.ranges.is_empty() {
            return false;
        }
        // `%r12`: %r's 12 or %r1's 2 (a range's names are its prefix and an index in
        // decimal without leading zeros); the longest index first.
        let digits = name.bytes().rev().take_while(u8::is_ascii_digit).count();
        (1..=digits).rev().any(|k| {
            let split = name.len() - k;
            match (name.get(..split), name.get(split..)) {
                (Some(prefix), Some(index)) if k == 1 || !index.starts_with('0') => {
                    index.parse::<u32>().is_ok_and(|i| self.ranges.get(prefix).is_some_and(|&n| i < n))
                }
                _ => false,
            }
        })
    }
}

/// A function's register names to frame slots, scope by scope: the body, then each nested
/// `{ }` block, whose declarations are visible inside it only and shadow outer ones. A
/// declaration anywhere in a scope is visible in all of it. A register gets its slot
/// when an instruction first names it (a declaration costs nothing, whatever its N); the
/// slots of a nested scope are free again once it closes, for the registers of the nested
/// scopes after it (what a register holds before it is written is undefined in PTX; the
/// body's registers still start at zero).
struct Regs {
    /// By scope number: 0 is the body, then one per `{` in text order.
    scopes: Vec<RegScope>,
    /// The open scopes, innermost last.
    open: Vec<usize>,
    /// Scopes opened so far.
    opened: usize,
    /// Slots of closed scopes, free again.
    free: Vec<u32>,
    /// Slots handed out: the frame's registers.
    count: u32,
    /// Register names the declarations declare (what [`KernelInfo::registers`] reports).
    declared: u64,
}

impl Regs {
    fn new(body: &[Stmt]) -> Regs {
        let mut scopes = vec![RegScope::default()];
        let mut open = vec![0usize];
        let mut declared = 0u64;
        for s in body {
            match s {
                Stmt::Open => {
                    open.push(scopes.len());
                    scopes.push(RegScope::default());
                }
                Stmt::Close if open.len() > 1 => {
                    open.pop();
                }
                Stmt::Reg(r) => {
                    let Some(scope) = open.last().and_then(|&id| scopes.get_mut(id)) else { continue };
                    for (name, count) in &r.names {
                        match count {
                            Some(c) => {
                                let n = scope.ranges.entry(name.clone()).or_insert(0);
                                declared += u64::from(c.saturating_sub(*n));
                                *n = (*n).max(*c);
                            }
                            None => {
                                if scope.names.insert(name.clone()) {
                                    declared += 1;
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        Regs { scopes, open: vec![0], opened: 1, free: Vec::new(), count: 0, declared }
    }

    fn enter(&mut self) {
        self.open.push(self.opened);
        self.opened += 1;
    }

    fn close(&mut self) {
        if self.open.len() > 1 {
            if let Some(scope) = self.open.pop().and_then(|id| self.scopes.get_mut(id)) {
                scope.slots.clear();
                self.free.extend(scope.order.drain(..).rev());
            }
        }
    }

    /// Whether an open scope declares register `name`.
    fn knows(&self, name: &str) -> bool {
        self.open
            .iter()
            .filter_map(|&id| self.scopes.get(id))
            .any(|scope| scope.slots.contains_key(name) || scope.declares(name))
    }

    /// The slot of register `name` as the open scopes see it; `None` if no open scope
    /// declares it, `Err` past [`MAX_REGS`] slots.
    fn slot(&mut self, name: &str) -> Result<Option<u32>, ()> {
        for &id in self.open.iter().rev() {
            let Some(scope) = self.scopes.get_mut(id) else { continue };
            if let Some(&s) = scope.slots.get(name) {
                return Ok(Some(s));
            }
            if scope.declares(name) {
                // The body's registers get slots of their own, zero until written, as
                // before any nested scope; a nested scope's may be a closed one's.
                let reused = if id == 0 { None } else { self.free.pop() };
                let s = match reused {
                    Some(s) => s,
                    None if self.count < MAX_REGS => {
                        self.count += 1;
                        self.count - 1
                    }
                    None => return Err(()),
                };
                scope.slots.insert(name.to_string(), s);
                scope.order.push(s);
                return Ok(Some(s));
            }
        }
        Ok(None)
    }
}

struct Syms<'a> {
    globals: &'a HashMap<String, Base>,
    funcs: &'a HashMap<String, u32>,
    regs: Regs,
    /// `.param`/`.local` names and the function's parameters, by open scope (innermost
    /// last), in statement order.
    locals: Vec<HashMap<String, Base>>,
    labels: HashMap<String, u32>,
}

impl Syms<'_> {
    /// The slot of register `name`, if an open scope declares it.
    fn reg(&mut self, name: &str, line: u32, inst: &str) -> Result<Option<u32>, PtxError> {
        self.regs.slot(name).map_err(|()| err(line, inst, format!("more than {MAX_REGS} registers")))
    }

    fn local(&self, name: &str) -> Option<Base> {
        self.locals.iter().rev().find_map(|m| m.get(name)).copied()
    }

    fn declare_local(&mut self, name: &str, b: Base) {
        if let Some(m) = self.locals.last_mut() {
            m.insert(name.to_string(), b);
        }
    }
}

/// Address initialisers: (byte offset, global index, added offset).
type Relocations = Vec<(u64, u32, i64)>;

/// The initial bytes of global `v` of `size` bytes and its address initialisers, and the
/// first item naming no global (its bytes left zero), which [`Module::load`] refuses.
fn init_bytes(v: &Var, size: u64, global_index: &HashMap<String, u32>) -> (Vec<u8>, Relocations, Option<PtxError>) {
    let es = elem_size(&v.ty) as usize;
    let covered = (v.init.len() as u64).saturating_mul(es as u64).min(size);
    let mut out = vec![0u8; covered as usize];
    let mut rel = Vec::new();
    let mut problem = None;
    let ty = Ty::parse(&v.ty).unwrap_or(Ty { k: K::B, bits: 8 });
    for (i, item) in v.init.iter().enumerate() {
        let at = i * es;
        let bytes: u64 = match item {
            Init::Int(n) => *n as u64,
            Init::Float(f) => match (ty.k, ty.bits) {
                (K::F, 32) => u64::from((*f as f32).to_bits()),
                (K::F, 64) => f.to_bits(),
                (K::F, 16) => crate::float::from_f64(*f, Rnd::Rn, Fmt::F16),
                _ => *f as i64 as u64,
            },
            Init::Sym(name, off) => {
                match global_index.get(name) {
                    Some(&idx) => rel.push((at as u64, idx, *off)),
                    None => {
                        problem = problem
                            .or_else(|| Some(err(v.line, &v.name, format!("initialiser names unknown symbol {name}"))))
                    }
                }
                0
            }
        };
        if let Some(dst) = out.get_mut(at..at + es) {
            dst.copy_from_slice(bytes.to_le_bytes().get(..es).unwrap_or(&[]));
        }
    }
    (out, rel, problem)
}

/// The layout of formal parameters `params` (a kernel's in its parameter buffer, a
/// function's at the start of its frame's parameter block): each at the next multiple of
/// its alignment (at least 1), at least one byte each.
fn param_layout(params: &[Var]) -> Vec<KernelParam> {
    let mut offset = 0u64;
    let mut out = Vec::with_capacity(params.len());
    for p in params {
        let size = var_size(p).max(1);
        let align = var_align(p).max(1);
        offset = align_up(offset, align);
        out.push(KernelParam { offset, size, align });
        offset = offset.saturating_add(size);
    }
    out
}

/// A text's declarations, with what decoding its bodies needs too.
struct Declared<'a> {
    decls: Declarations,
    /// The functions, one per name (a declaration followed by a definition is one
    /// function: the definition), in the order the text first names them.
    funcs: Vec<&'a FuncAst>,
    /// Each function's index in `funcs`.
    func_index: HashMap<String, u32>,
}

/// The module-scope declarations of `ast` (what [`Declarations::read`] returns and
/// [`Module::load`] starts from), and the first of them that `Module::load` refuses
/// (a module-scope state space other than .global, .const and .shared; an initialiser
/// naming no global), left out or zeroed in the declarations.
fn declare(ast: &Ast) -> (Declared<'_>, Option<PtxError>) {
    let mut problem: Option<PtxError> = None;
    let mut globals = Vec::new();
    let mut gindex: HashMap<String, u32> = HashMap::new();
    let mut references = Vec::new();
    let mut reference_names: HashSet<&str> = HashSet::new();
    for v in &ast.vars {
        if let (Space::Global, Some(kind)) = (v.space, ReferenceKind::of(&v.ty)) {
            if reference_names.insert(&v.name) {
                references.push(Reference { name: v.name.clone(), kind });
            }
        } else if matches!(v.space, Space::Global | Space::Const) {
            gindex.insert(v.name.clone(), globals.len() as u32);
            globals.push(Global {
                name: v.name.clone(),
                is_const: v.space == Space::Const,
                managed: v.managed,
                size: var_size(v),
                align: var_align(v),
                init: Vec::new(),
                relocations: Vec::new(),
            });
        } else if !matches!(v.space, Space::Shared) {
            problem = problem.or_else(|| Some(err(v.line, &v.name, "unsupported module-level state space")));
        }
    }
    for v in &ast.vars {
        if let Some(&i) = gindex.get(&v.name) {
            let (init, rel, bad) = init_bytes(v, var_size(v), &gindex);
            problem = problem.or(bad);
            if let Some(g) = globals.get_mut(i as usize) {
                g.init = init;
                g.relocations = rel;
            }
        }
    }
    let mut func_index: HashMap<String, u32> = HashMap::new();
    let mut funcs: Vec<&FuncAst> = Vec::new();
    for f in &ast.funcs {
        match func_index.get(&f.name) {
            Some(&i) => {
                if f.body.is_some() {
                    if let Some(slot) = funcs.get_mut(i as usize) {
                        *slot = f;
                    }
                }
            }
            None => {
                func_index.insert(f.name.clone(), funcs.len() as u32);
                funcs.push(f);
            }
        }
    }
    let kernels = funcs
        .iter()
        .filter(|f| f.is_entry)
        .map(|f| KernelDecl { name: f.name.clone(), params: param_layout(&f.params) })
        .collect();
    let decls = Declarations { version: ast.version, targets: ast.targets.clone(), kernels, globals, references };
    (Declared { decls, funcs, func_index }, problem)
}

fn decode_module(ast: Ast) -> Result<Module, PtxError> {
    let mut gsyms: HashMap<String, Base> = HashMap::new();
    let mut shared: u64 = 0;
    let mut extern_shared: Vec<String> = Vec::new();
    // Module-level and function-level shared variables share one static area.
    let mut shared_vars: Vec<&Var> = ast.vars.iter().filter(|v| v.space == Space::Shared).collect();
    for f in &ast.funcs {
        for s in f.body.iter().flatten() {
            if let Stmt::Var(v) = s {
                if v.space == Space::Shared {
                    shared_vars.push(v);
                }
            }
        }
    }
    for v in &shared_vars {
        if v.dims.iter().any(|d| d.is_none()) || (v.is_extern && var_size(v) == 0) {
            extern_shared.push(v.name.clone());
            continue;
        }
        shared = align_up(shared, var_align(v));
        gsyms.insert(v.name.clone(), Base::Shared(shared));
        shared = shared.saturating_add(var_size(v));
    }
    if shared > MAX_STATIC_SHARED {
        return Err(err(
            0,
            "",
            format!("the module uses {shared} bytes of static shared memory ({MAX_STATIC_SHARED} max)"),
        ));
    }
    let dyn_off = align_up(shared, 16);
    for n in extern_shared {
        gsyms.insert(n, Base::Shared(dyn_off));
    }
    let (declared, problem) = declare(&ast);
    if let Some(e) = problem {
        return Err(e);
    }
    for (i, g) in declared.decls.globals.iter().enumerate() {
        gsyms.insert(g.name.clone(), Base::Global(i as u32));
    }
    let mut funcs = Vec::new();
    for f in &declared.funcs {
        funcs.push(decode_func(f, &gsyms, &declared.func_index)?);
    }
    let decls = declared.decls;
    Ok(Module {
        funcs,
        global_addrs: vec![0; decls.globals.len()],
        instruction_limit: None,
        executor: Executor::from_env(),
        decls,
        shared_size: shared,
        dyn_shared_offset: dyn_off,
    })
}

fn decode_func(f: &FuncAst, globals: &HashMap<String, Base>, funcs: &HashMap<String, u32>) -> Result<Func, PtxError> {
    let empty: &[Stmt] = &[];
    let mut syms = Syms {
        globals,
        funcs,
        regs: Regs::new(f.body.as_deref().unwrap_or(empty)),
        locals: vec![HashMap::new()],
        labels: HashMap::new(),
    };
    let mut param_size = 0u64;
    let mut params = Vec::new();
    let mut rets = Vec::new();
    for (p, l) in f.params.iter().zip(param_layout(&f.params)) {
        params.push((l.offset, l.size));
        syms.declare_local(&p.name, if f.is_entry { Base::KParam(l.offset) } else { Base::FParam(l.offset) });
        param_size = l.offset.saturating_add(l.size);
        // The kernel parameter limit of CUDA 12.1+ (32 764 bytes); functions the same here.
        if param_size > 32764 {
            return Err(err(p.line, &p.name, "more than 32764 bytes of parameters"));
        }
    }
    if f.is_entry {
        param_size = 0;
    }
    for p in &f.rets {
        let size = var_size(p).max(1);
        param_size = align_up(param_size, var_align(p).max(1));
        rets.push((param_size, size));
        syms.declare_local(&p.name, Base::FParam(param_size));
        param_size = param_size.saturating_add(size);
        if param_size > MAX_LOCAL {
            return Err(err(p.line, &p.name, "too many bytes of parameters"));
        }
    }
    let builtin = match f.name.as_str() {
        "vprintf" => Some(Builtin::Vprintf),
        "__assertfail" | "__assert_fail" => Some(Builtin::AssertFail),
        _ => None,
    };
    let Some(body) = &f.body else {
        return Ok(Func {
            name: f.name.clone(),
            is_entry: f.is_entry,
            nregs: 0,
            declared_regs: 0,
            code: Vec::new(),
            param_size,
            params,
            rets,
            local_size: 0,
            builtin,
            steps: std::sync::OnceLock::new(),
        });
    };
    // Labels to the index of the instruction they precede, in one pass (the first of two
    // labels of one name counts).
    let mut at = 0u32;
    for s in body {
        match s {
            Stmt::Label(l) => {
                syms.labels.entry(l.clone()).or_insert(at);
            }
            Stmt::Inst(_) => at += 1,
            _ => {}
        }
    }
    let mut code = Vec::new();
    // `.param`/`.local` names in statement order: one declared again later in the same
    // scope is a new variable from there on. A nested scope's variables take the bytes
    // after its enclosing scope's and give them back when it closes (nvcc's call
    // sequences declare `param0` and `retval0` in a `{ }` of their own, one per call):
    // the frame's blocks are the deepest they reach.
    let mut local = 0u64;
    let (mut local_size, mut frame_params) = (0u64, param_size);
    let mut enclosing = Vec::new();
    for s in body {
        match s {
            Stmt::Open => {
                syms.regs.enter();
                syms.locals.push(HashMap::new());
                enclosing.push((param_size, local));
            }
            Stmt::Close => {
                syms.regs.close();
                if let Some((p, l)) = enclosing.pop() {
                    syms.locals.pop();
                    (param_size, local) = (p, l);
                }
            }
            Stmt::Inst(i) => code.push(decode_inst(i, &mut syms)?),
            Stmt::Var(v) => match v.space {
                Space::Local => {
                    local = align_up(local, var_align(v));
                    syms.declare_local(&v.name, Base::Local(local));
                    local = local.saturating_add(var_size(v));
                    if local > MAX_LOCAL {
                        return Err(err(v.line, &v.name, format!("more than {MAX_LOCAL} bytes of local memory")));
                    }
                    local_size = local_size.max(local);
                }
                Space::Param => {
                    param_size = align_up(param_size, var_align(v).max(1));
                    syms.declare_local(&v.name, Base::FParam(param_size));
                    param_size = param_size.saturating_add(var_size(v).max(1));
                    if param_size > MAX_LOCAL {
                        return Err(err(v.line, &v.name, "too many bytes of parameters"));
                    }
                    frame_params = frame_params.max(param_size);
                }
                Space::Shared => {}
                _ => return Err(err(v.line, &v.name, "unsupported state space in a function body")),
            },
            Stmt::Label(_) | Stmt::Reg(_) => {}
        }
    }
    // A body that falls off its end returns.
    code.push(Inst::plain(if f.is_entry { Op::Exit } else { Op::Ret }, f.line, "ret"));
    contract(&mut code);
    Ok(Func {
        name: f.name.clone(),
        is_entry: f.is_entry,
        nregs: syms.regs.count,
        declared_regs: u32::try_from(syms.regs.declared).unwrap_or(u32::MAX),
        code,
        param_size: frame_params,
        params,
        rets,
        local_size,
        builtin,
        steps: std::sync::OnceLock::new(),
    })
}

fn resolve_base(name: &str, syms: &mut Syms, line: u32, inst: &str) -> Result<Option<Base>, PtxError> {
    if let Some(r) = syms.reg(name, line, inst)? {
        return Ok(Some(Base::Reg(r)));
    }
    if let Some(b) = syms.local(name) {
        return Ok(Some(b));
    }
    if name.starts_with("__local_depot") {
        return Ok(Some(Base::Local(0)));
    }
    Ok(syms.globals.get(name).copied())
}

fn imm_for(value: f64, f32_bits: Option<u32>, ty: Ty) -> u64 {
    match (ty.k, ty.bits) {
        (K::F, 64) => value.to_bits(),
        (K::F, 16) | (K::Bf, 16) => crate::float::from_f64(value, Rnd::Rn, ty.fmt()),
        (_, 64) if f32_bits.is_none() => value.to_bits(),
        _ => u64::from(f32_bits.unwrap_or((value as f32).to_bits())),
    }
}

fn decode_operand(o: &Operand, ty: Ty, syms: &mut Syms, line: u32, name: &str) -> Result<Opd, PtxError> {
    Ok(match o {
        Operand::Name(n) => {
            if let Some(r) = syms.reg(n, line, name)? {
                Opd::Reg(r)
            } else if let Some(s) = sreg(n) {
                Opd::Sreg(s)
            } else if let Some(&l) = syms.labels.get(n) {
                Opd::Label(l)
            } else if let Some(&f) = syms.funcs.get(n) {
                Opd::Func(f)
            } else if let Some(b) = resolve_base(n, syms, line, name)? {
                Opd::SymAddr(b, 0)
            } else if n == "WARP_SZ" {
                Opd::Imm(32)
            } else {
                return Err(err(line, name, format!("unknown name {n}")));
            }
        }
        Operand::Not(n) => match syms.reg(n, line, name)? {
            Some(r) => Opd::NotReg(r),
            None => return Err(err(line, name, format!("unknown predicate {n}"))),
        },
        Operand::Neg(n) => return Err(err(line, name, format!("a negated operand -{n} is vmad's only"))),
        Operand::Int(v) => Opd::Imm(*v as u64),
        Operand::Float { value, f32_bits } => Opd::Imm(imm_for(*value, *f32_bits, ty)),
        Operand::Addr(base, off) => {
            let b = match base {
                None => Base::None,
                Some(n) => resolve_base(n, syms, line, name)?
                    .ok_or_else(|| err(line, name, format!("unknown address base {n}")))?,
            };
            Opd::Addr(b, *off)
        }
        Operand::SymOff(n, off) => {
            let b = resolve_base(n, syms, line, name)?.ok_or_else(|| err(line, name, format!("unknown symbol {n}")))?;
            Opd::SymAddr(b, *off)
        }
        Operand::Vector(v) => Opd::Vector(decode_operands(v, ty, syms, line, name)?),
        Operand::List(v) => Opd::List(decode_operands(v, ty, syms, line, name)?),
        Operand::Sink => Opd::Sink,
    })
}

fn decode_operands(v: &[Operand], ty: Ty, syms: &mut Syms, line: u32, name: &str) -> Result<Box<[Opd]>, PtxError> {
    let mut out = Vec::with_capacity(v.len());
    for o in v {
        out.push(decode_operand(o, ty, syms, line, name)?);
    }
    Ok(out.into_boxed_slice())
}

/// An instruction's opcode and modifiers: what the table's decoders read.
pub(crate) struct Mods<'a> {
    opname: &'a str,
    mods: &'a [&'a str],
    /// The first modifier that is none of the types, roundings, flags, spaces and vector
    /// sizes `decode_inst` reads itself; or the last comparison, or `to`.
    aux: Option<&'a str>,
    sp: Sp,
    vec: u32,
}

impl Mods<'_> {
    fn has(&self, m: &str) -> bool {
        self.mods.contains(&m)
    }

    /// The first of `names` (modifier, value) whose modifier is given.
    fn first_of<T: Copy>(&self, names: &[(&str, T)]) -> Option<T> {
        names.iter().find(|(m, _)| self.has(m)).map(|&(_, v)| v)
    }
}

/// Why a decoder refuses an instruction.
pub(crate) enum Refusal {
    /// A form the executor does not run ("instruction not supported by the PTX executor").
    Unsupported,
    /// This.
    Because(String),
}

/// A sub-operation (a named enum of an `Op`) read from an instruction's modifiers.
trait FromMods: Sized {
    fn from_mods(m: &Mods) -> Result<Self, Refusal>;
}

impl FromMods for MulMode {
    /// `.lo` (the default), `.hi`, `.wide`: the last given.
    fn from_mods(m: &Mods) -> Result<Self, Refusal> {
        let named = [("lo", MulMode::Lo), ("hi", MulMode::Hi), ("wide", MulMode::Wide)];
        Ok(m.mods.iter().rev().find_map(|x| named.iter().find(|(n, _)| n == x).map(|&(_, v)| v)).unwrap_or(MulMode::Lo))
    }
}

impl FromMods for Half {
    fn from_mods(m: &Mods) -> Result<Self, Refusal> {
        Ok(if m.has("hi") { Half::Hi } else { Half::Lo })
    }
}

impl FromMods for Funnel {
    fn from_mods(m: &Mods) -> Result<Self, Refusal> {
        Ok(Funnel {
            dir: if m.has("l") { FunnelDir::Left } else { FunnelDir::Right },
            amount: if m.has("clamp") { FunnelAmount::Clamp } else { FunnelAmount::Wrap },
        })
    }
}

impl FromMods for BfindMode {
    fn from_mods(m: &Mods) -> Result<Self, Refusal> {
        Ok(if m.has("shiftamt") { BfindMode::ShiftAmount } else { BfindMode::Position })
    }
}

impl FromMods for PrmtMode {
    fn from_mods(m: &Mods) -> Result<Self, Refusal> {
        Ok(match m.aux {
            Some("f4e") => PrmtMode::F4e,
            Some("b4e") => PrmtMode::B4e,
            Some("rc8") => PrmtMode::Rc8,
            Some("ecl") => PrmtMode::Ecl,
            Some("ecr") => PrmtMode::Ecr,
            Some("rc16") => PrmtMode::Rc16,
            _ => PrmtMode::Select,
        })
    }
}

impl FromMods for TestpKind {
    fn from_mods(m: &Mods) -> Result<Self, Refusal> {
        Ok(match m.aux {
            Some("finite") => TestpKind::Finite,
            Some("infinite") => TestpKind::Infinite,
            Some("number") => TestpKind::Number,
            Some("notanumber") => TestpKind::NotANumber,
            Some("normal") => TestpKind::Normal,
            Some("subnormal") => TestpKind::Subnormal,
            _ => return Err(Refusal::Because("unknown testp operator".into())),
        })
    }
}

impl FromMods for AtomOp {
    /// The operation; a vector atomic is refused.
    fn from_mods(m: &Mods) -> Result<Self, Refusal> {
        let a = m
            .first_of(&[
                ("add", AtomOp::Add),
                ("min", AtomOp::Min),
                ("max", AtomOp::Max),
                ("inc", AtomOp::Inc),
                ("dec", AtomOp::Dec),
                ("and", AtomOp::And),
                ("or", AtomOp::Or),
                ("xor", AtomOp::Xor),
                ("exch", AtomOp::Exch),
                ("cas", AtomOp::Cas),
            ])
            .ok_or(Refusal::Unsupported)?;
        if m.vec > 1 {
            return Err(Refusal::Unsupported);
        }
        Ok(a)
    }
}

impl FromMods for Sp {
    /// The state space (generic when none is given).
    fn from_mods(m: &Mods) -> Result<Self, Refusal> {
        Ok(m.sp)
    }
}

impl FromMods for ShflMode {
    fn from_mods(m: &Mods) -> Result<Self, Refusal> {
        Ok(m.first_of(&[("up", ShflMode::Up), ("down", ShflMode::Down), ("bfly", ShflMode::Bfly)])
            .unwrap_or(ShflMode::Idx))
    }
}

impl FromMods for VoteMode {
    fn from_mods(m: &Mods) -> Result<Self, Refusal> {
        if !["sync", "ballot", "all", "any", "uni"].iter().any(|x| m.has(x)) {
            return Err(Refusal::Unsupported);
        }
        Ok(m.first_of(&[("all", VoteMode::All), ("any", VoteMode::Any), ("uni", VoteMode::Uni)])
            .unwrap_or(VoteMode::Ballot))
    }
}

impl FromMods for MatchMode {
    fn from_mods(m: &Mods) -> Result<Self, Refusal> {
        Ok(if m.has("all") { MatchMode::All } else { MatchMode::Any })
    }
}

impl FromMods for ReduxOp {
    fn from_mods(m: &Mods) -> Result<Self, Refusal> {
        Ok(m.first_of(&[
            ("add", ReduxOp::Add),
            ("min", ReduxOp::Min),
            ("max", ReduxOp::Max),
            ("and", ReduxOp::And),
            ("or", ReduxOp::Or),
        ])
        .unwrap_or(ReduxOp::Xor))
    }
}

impl FromMods for Query {
    fn from_mods(m: &Mods) -> Result<Self, Refusal> {
        m.mods.iter().find_map(|x| Query::parse(x)).ok_or(Refusal::Unsupported)
    }
}

impl FromMods for Video {
    fn from_mods(m: &Mods) -> Result<Self, Refusal> {
        Video::decode(m.opname, m.mods).map_err(Refusal::Because)
    }
}

/// `cvta[.to].space`.
fn cvta_op(m: &Mods) -> Result<Op, Refusal> {
    Ok(Op::Cvta { to: m.has("to"), sp: m.sp })
}

/// `bar`/`barrier`: `.sync`, `.arrive`, `.red.{popc,and,or}`; `.warp.sync` waits for
/// nothing here (a warp runs in lockstep); a cluster barrier is refused.
fn bar_op(m: &Mods) -> Result<Op, Refusal> {
    if m.has("cluster") {
        return Err(Refusal::Unsupported);
    }
    if m.has("warp") {
        return Ok(Op::Nop);
    }
    let red = if m.has("red") {
        Some(m.first_of(&[("popc", BarRed::Popc), ("and", BarRed::And)]).unwrap_or(BarRed::Or))
    } else {
        None
    };
    Ok(Op::Bar { arrive: m.has("arrive"), red })
}

/// The `Op` of one row's decoding (`instructions::table!`'s fourth column).
macro_rules! decode_op {
    ($m:ident, (fn $f:ident)) => {
        $f($m)?
    };
    ($m:ident, ($variant:ident $sub:ident)) => {
        Op::$variant(<$sub as FromMods>::from_mods($m)?)
    };
    ($m:ident, ($variant:ident)) => {
        Op::$variant
    };
}

/// `decode_op`: the name-to-operation mapping, one arm per row of the table.
macro_rules! decoders {
    ($($op:literal $types:ident $shape:tt $decode:tt $tested:ident $semantics:literal;)*) => {
        /// The operation of the instruction `m` names: its row's decoding.
        fn decode_op(m: &Mods) -> Result<Op, Refusal> {
            Ok(match m.opname {
                $($op => decode_op!(m, $decode),)*
                _ => return Err(Refusal::Unsupported),
            })
        }
    };
}

crate::instructions::table!(decoders);

fn decode_inst(i: &InstAst, syms: &mut Syms) -> Result<Inst, PtxError> {
    let name = i.name.as_str();
    let line = i.line;
    if crate::instructions::not_run(name) {
        return Err(err(line, name, "instruction not supported by the PTX executor"));
    }
    let mut parts = name.split('.');
    let opname = parts.next().unwrap_or("");
    let mods: Vec<&str> = parts.collect();
    // Modifiers whose meaning the executor does not implement: refused, never ignored.
    const UNSUPPORTED_MODS: &[&str] = &[
        "relu",
        "xorsign",
        "satfinite",
        "tf32",
        "e4m3x2",
        "e5m2x2",
        "e2m1x2",
        "e2m3x2",
        "e3m2x2",
        "ue8m0x2",
        "oob",
        "mmio",
        "multicast",
        "b128",
        "f8x4",
        "e4m3",
        "e5m2",
        "s2f6x2",
        "emulation",
    ];
    if let Some(m) = mods.iter().find(|m| UNSUPPORTED_MODS.contains(m)) {
        return Err(err(line, name, format!("the .{m} modifier is not supported by the PTX executor")));
    }
    let mut inst = Inst::plain(Op::Nop, line, name);
    let Some(row) = crate::instructions::row(opname) else {
        return Err(err(line, name, "instruction not supported by the PTX executor"));
    };
    let mut types = Vec::new();
    let mut first_type: Option<&str> = None;
    let mut aux: Option<&str> = None;
    for m in &mods {
        if let Some(t) = Ty::parse(m) {
            types.push(t);
            first_type = first_type.or(Some(m));
            continue;
        }
        match *m {
            "rn" | "rni" => {
                inst.rnd = Rnd::Rn;
                inst.has_rnd = true;
                inst.irnd = m.ends_with('i');
            }
            "rz" | "rzi" => {
                inst.rnd = Rnd::Rz;
                inst.has_rnd = true;
                inst.irnd = m.ends_with('i');
            }
            "rm" | "rmi" => {
                inst.rnd = Rnd::Rm;
                inst.has_rnd = true;
                inst.irnd = m.ends_with('i');
            }
            "rp" | "rpi" => {
                inst.rnd = Rnd::Rp;
                inst.has_rnd = true;
                inst.irnd = m.ends_with('i');
            }
            "ftz" => inst.ftz = true,
            "sat" => inst.sat = true,
            "approx" => inst.approx = true,
            "full" => {
                inst.approx = true;
                inst.full = true;
            }
            "NaN" => inst.nan = true,
            "cc" => inst.cc = true,
            // A product's part (`mul`, `mad`, `mul24`, `dp2a`: [`MulMode`], [`Half`]); `lo`
            // and `hi` are also integer `setp`'s unsigned lower and higher.
            "lo" | "hi" | "wide" => {}
            "v2" => inst.vec = 2,
            "v4" => inst.vec = 4,
            "v8" => inst.vec = 8,
            "global" => inst.sp = Sp::Global,
            "const" => inst.sp = Sp::Const,
            "shared" => inst.sp = Sp::Shared,
            "local" => inst.sp = Sp::Local,
            "param" => inst.sp = Sp::Param,
            "to" => aux = Some("to"),
            "eq" | "ne" | "lt" | "le" | "gt" | "ge" | "ls" | "hs" | "equ" | "neu" | "ltu" | "leu" | "gtu" | "geu"
            | "num" | "nan" => {
                inst.cmp = match *m {
                    "eq" => Cmp::Eq,
                    "ne" => Cmp::Ne,
                    "lt" => Cmp::Lt,
                    "le" => Cmp::Le,
                    "gt" => Cmp::Gt,
                    "ge" => Cmp::Ge,
                    "ls" => Cmp::Ls,
                    "hs" => Cmp::Hs,
                    "equ" => Cmp::Equ,
                    "neu" => Cmp::Neu,
                    "ltu" => Cmp::Ltu,
                    "leu" => Cmp::Leu,
                    "gtu" => Cmp::Gtu,
                    "geu" => Cmp::Geu,
                    "num" => Cmp::Num,
                    _ => Cmp::Nan,
                };
                aux = Some(m);
            }
            _ => aux = aux.or(Some(m)),
        }
    }
    let first_ty = types.first().copied().unwrap_or(Ty::NONE);
    inst.ty = first_ty;
    inst.ty2 = types.get(1).copied().unwrap_or(first_ty);
    let has = |s: &str| mods.contains(&s);
    let unsupported = || err(line, name, "instruction not supported by the PTX executor");
    let modifiers = Mods { opname, mods: &mods, aux, sp: inst.sp, vec: inst.vec };
    inst.op = decode_op(&modifiers).map_err(|r| match r {
        Refusal::Unsupported => unsupported(),
        Refusal::Because(why) => err(line, name, why),
    })?;
    match inst.op {
        Op::Setp | Op::Set => {
            // `lo` and `hi` are also comparison operators of integer setp (unsigned
            // lower/higher).
            if has("lo") {
                inst.cmp = Cmp::Lo;
            } else if has("hi") {
                inst.cmp = Cmp::Hi;
            }
            if has("and") {
                inst.bop = BoolOp::And;
            } else if has("or") {
                inst.bop = BoolOp::Or;
            } else if has("xor") {
                inst.bop = BoolOp::Xor;
            }
        }
        Op::Cvt => {
            if let Some(why) = cvt_refused(inst.ty, inst.ty2, inst.sat) {
                return Err(err(line, name, why));
            }
        }
        _ => {}
    }
    if let Some(t) = first_type.filter(|t| !row.types.is_empty() && !row.types.contains(t)) {
        return Err(err(line, name, format!("{opname} of type .{t} is not supported by the PTX executor")));
    }
    if matches!(inst.op, Op::Setp | Op::Set) && matches!(inst.ty2.k, K::F16x2 | K::Bf16x2) {
        return Err(err(line, name, "packed half comparisons are not supported by the PTX executor"));
    }
    if inst.op == Op::Set {
        // set.CmpOp.dtype.stype: types[0] is the destination, types[1] the compared.
        inst.ty2 = types.get(1).copied().unwrap_or(first_ty);
    }
    if let Some((g, neg)) = &i.guard {
        let r = syms.reg(g, line, name)?.ok_or_else(|| err(line, name, format!("unknown predicate {g}")))?;
        inst.guard = Some((r, *neg));
    }
    // Operand typing: each as its row's shape says (the second type for cvt's source,
    // set's compared values and slct's selector).
    let mut ops = Vec::with_capacity(i.operands.len());
    for (k, o) in i.operands.iter().enumerate() {
        // A video instruction's selectors (`%r1.h0`) and negations (`-%r3`) go to its op.
        let bare;
        let o = match &mut inst.op {
            Op::Video(v) => {
                bare = v.operand(k, o, |n| syms.regs.knows(n)).map_err(|e| err(line, name, e))?;
                &bare
            }
            _ => o,
        };
        let ty = if row.shape.arg(k) == Arg::T2 { inst.ty2 } else { inst.ty };
        ops.push(decode_operand(o, ty, syms, line, name)?);
    }
    if inst.op == Op::Call {
        // call[.uni] (rets), func, (args)  |  call func, (args)  |  call func
        let target = ops.iter().find_map(|o| if let Opd::Func(f) = o { Some(*f) } else { None });
        if target.is_none() {
            return Err(err(line, name, "indirect calls are not supported by the PTX executor"));
        }
    }
    if let Op::Video(v) = &inst.op {
        v.check(ops.len()).map_err(|e| err(line, name, e))?;
    }
    inst.ops = ops.into_boxed_slice();
    check_operands(&inst, row)?;
    Ok(inst)
}

/// Why ptxas refuses a `cvt` from `sty` to `dty` (the instruction suite's recording): `.sat`
/// between integers where the destination holds every source value, and
/// conversions between bf16 and 8-bit integers.
fn cvt_refused(dty: Ty, sty: Ty, sat: bool) -> Option<&'static str> {
    let int = |t: Ty| matches!(t.k, K::U | K::S | K::B) && t.bits > 0;
    if sat && int(dty) && int(sty) {
        let range = |t: Ty| -> (i128, i128) {
            if t.k == K::S {
                (-(1i128 << (t.bits - 1)), (1i128 << (t.bits - 1)) - 1)
            } else {
                (0, (1i128 << t.bits) - 1)
            }
        };
        let ((dl, dh), (sl, sh)) = (range(dty), range(sty));
        if dl <= sl && sh <= dh {
            return Some("the .sat modifier of an integer cvt that cannot overflow is refused (as ptxas refuses it)");
        }
    }
    let bf16 = |t: Ty| t.k == K::Bf && t.bits == 16;
    if (bf16(dty) && int(sty) && sty.bits == 8) || (bf16(sty) && int(dty) && dty.bits == 8) {
        return Some("cvt between bf16 and an 8-bit integer is refused (as ptxas refuses it)");
    }
    None
}

/// A texture or surface instruction's operation from its modifiers; `None` for forms the
/// executor does not run (multisample geometries, `sust.p`, `tld4` other than 2D).
fn texture_op(m: &Mods) -> Result<Op, Refusal> {
    texture_form(m.opname, m.mods).ok_or(Refusal::Unsupported)
}

fn texture_form(opname: &str, mods: &[&str]) -> Option<Op> {
    let geom = mods.iter().find_map(|m| Geom::parse(m))?;
    let oob = if mods.contains(&"clamp") {
        Oob::Clamp
    } else if mods.contains(&"zero") {
        Oob::Zero
    } else {
        Oob::Trap
    };
    Some(match opname {
        "tex" => Op::Tex { geom, level: mods.contains(&"level") },
        "tld4" => {
            if geom != Geom::D2 {
                return None;
            }
            Op::Tld4(
                [("r", Component::R), ("g", Component::G), ("b", Component::B), ("a", Component::A)]
                    .into_iter()
                    .find_map(|(m, c)| mods.contains(&m).then_some(c))?,
            )
        }
        _ if !mods.contains(&"b") => return None,
        "suld" => Op::Suld { geom, oob },
        _ => Op::Sust { geom, oob },
    })
}

/// Refuses an instruction with fewer operands than its row's shape.
fn check_operands(inst: &Inst, row: &Row) -> Result<(), PtxError> {
    let need = row.shape.operands();
    if inst.ops.len() < need {
        return Err(err(inst.line, &inst.name, format!("expected {need} operands, found {}", inst.ops.len())));
    }
    Ok(())
}

/// The registers an instruction writes.
fn dest_regs(inst: &Inst) -> Vec<u32> {
    if matches!(
        inst.op,
        Op::St | Op::Sust { .. } | Op::Red(_) | Op::Bra | Op::Call | Op::Ret | Op::Exit | Op::Trap | Op::Nop
    ) {
        return Vec::new();
    }
    if matches!(inst.op, Op::Bar { red: None, .. }) {
        return Vec::new();
    }
    match inst.ops.first() {
        Some(Opd::Reg(r)) => vec![*r],
        Some(Opd::Vector(v)) => v.iter().filter_map(|o| if let Opd::Reg(r) = o { Some(*r) } else { None }).collect(),
        _ => Vec::new(),
    }
}

fn count_reg_uses(o: &Opd, uses: &mut HashMap<u32, u32>) {
    match o {
        Opd::Reg(r) | Opd::NotReg(r) | Opd::Addr(Base::Reg(r), _) | Opd::SymAddr(Base::Reg(r), _) => {
            *uses.entry(*r).or_insert(0) += 1;
        }
        Opd::Vector(v) | Opd::List(v) => v.iter().for_each(|o| count_reg_uses(o, uses)),
        _ => {}
    }
}

/// ptxas contracts a `mul` and an `add`/`sub` of f32/f64 without rounding modifiers into one
/// fused multiply-add (its default `--fmad=true`); the H200 computes what that code gives.
/// This pass does the same where the product is used once, by an add or sub later in the
/// same basic block, with no operand of the multiply redefined in between. (A best
/// emulation of ptxas's choice: the corpus's recorded outputs check it.)
fn contract(code: &mut [Inst]) {
    let n = code.len();
    let mut leader = vec![false; n + 1];
    for (i, inst) in code.iter().enumerate() {
        for o in inst.ops.iter() {
            if let Opd::Label(l) = o {
                if let Some(x) = leader.get_mut(*l as usize) {
                    *x = true;
                }
            }
        }
        if matches!(inst.op, Op::Bra | Op::Call | Op::Ret | Op::Exit | Op::Bar { .. }) {
            if let Some(x) = leader.get_mut(i + 1) {
                *x = true;
            }
        }
    }
    let mut uses: HashMap<u32, u32> = HashMap::new();
    for inst in code.iter() {
        let dests = dest_regs(inst);
        for (k, o) in inst.ops.iter().enumerate() {
            if k == 0 && !dests.is_empty() {
                continue;
            }
            count_reg_uses(o, &mut uses);
        }
        if let Some((p, _)) = inst.guard {
            *uses.entry(p).or_insert(0) += 1;
        }
    }
    let contractible = |inst: &Inst| {
        inst.ty.k == K::F && (inst.ty.bits == 32 || inst.ty.bits == 64) && !inst.has_rnd && !inst.sat && !inst.approx
    };
    // The last instruction of the current basic block (before i) that wrote each register:
    // (block number, index); an entry of an earlier block is stale. One pass, whatever the
    // length of the blocks.
    let mut last_def: HashMap<u32, (usize, usize)> = HashMap::new();
    // The last instruction of the block that read each register, likewise.
    let mut last_read: HashMap<u32, (usize, usize)> = HashMap::new();
    let mut block = 0usize;
    for i in 0..n {
        if i > 0 && leader.get(i).copied().unwrap_or(true) {
            block += 1;
        }
        let def_in_block = |r: u32| last_def.get(&r).filter(|d| d.0 == block).map(|d| d.1);
        let mut done = None;
        if let Some(add) = code.get(i).filter(|a| matches!(a.op, Op::Add | Op::Sub) && contractible(a)) {
            for k in [1usize, 2] {
                let Some(Opd::Reg(x)) = add.ops.get(k) else { continue };
                // The product is used once: x is read nowhere else, or the add overwrites x
                // (the product's value dies there), reads it once and nothing read it since
                // the multiply.
                let overwritten = add.ops.first() == Some(&Opd::Reg(*x)) && add.ops.get(3 - k) != Some(&Opd::Reg(*x));
                if uses.get(x).copied() != Some(1) && !overwritten {
                    continue;
                }
                // The nearest definition of x before i, within the block.
                let Some(j) = def_in_block(*x) else { continue };
                if last_read.get(x).is_some_and(|&(b, r)| b == block && r > j) {
                    continue;
                }
                let Some(mul) = code.get(j) else { continue };
                if mul.op != Op::Mul(MulMode::Lo)
                    || !contractible(mul)
                    || mul.ty != add.ty
                    || mul.ftz != add.ftz
                    || mul.guard.is_some()
                    || add.guard.is_some()
                {
                    continue;
                }
                let (Some(a), Some(b)) = (mul.ops.get(1), mul.ops.get(2)) else { continue };
                // A source of the multiply written again between it and the add.
                let clobbered =
                    [a, b].iter().any(|o| matches!(o, Opd::Reg(r) if def_in_block(*r).is_some_and(|d| d > j)));
                if clobbered {
                    continue;
                }
                let other = add.ops.get(3 - k).cloned().unwrap_or(Opd::Imm(0));
                let neg = match (add.op, k) {
                    (Op::Add, _) => Negated::Neither,
                    (_, 1) => Negated::Addend, // a*b - y
                    _ => Negated::Factor,      // x - a*b = (-a)*b + x
                };
                let d = add.ops.first().cloned().unwrap_or(Opd::Sink);
                done = Some((vec![d, a.clone(), b.clone(), other], neg));
                break;
            }
        }
        if let (Some((ops, neg)), Some(add)) = (done, code.get_mut(i)) {
            add.op = Op::Fma;
            add.ops = ops.into_boxed_slice();
            add.neg = neg;
            add.rnd = Rnd::Rn;
        }
        if let Some(inst) = code.get(i) {
            let dests = dest_regs(inst);
            let mut read = HashMap::new();
            inst.ops.iter().skip(usize::from(!dests.is_empty())).for_each(|o| count_reg_uses(o, &mut read));
            for r in read.into_keys() {
                last_read.insert(r, (block, i));
            }
            for r in dests {
                last_def.insert(r, (block, i));
            }
        }
    }
}
