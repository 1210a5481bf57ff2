//! The instruction suite's generator: one PTX module per instruction form, each lane of
//! which loads its operands from global arrays the module initialises (no immediates, so
//! that ptxas cannot fold the instruction away), executes the form once and stores every
//! destination in its own 8-byte slot. The same text runs on the H200 (through the driver,
//! `scripts/probes/instructions/run.c`) and on the executor (`ptx/tests/instruction_suite.rs`).

use super::values as v;

/// What an operand or destination holds: its register width and the edge values it takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    F16,
    Bf16,
    F16x2,
    Bf16x2,
    F32,
    F32Cvt,
    F64,
    F64Cvt,
    I8,
    I16,
    I32,
    I64,
    Pos,
    Pred,
}

impl Kind {
    /// Bits of the register that holds it (a predicate: 0).
    pub fn bits(self) -> u32 {
        match self {
            Kind::F16 | Kind::Bf16 | Kind::I8 | Kind::I16 => 16,
            Kind::F16x2 | Kind::Bf16x2 | Kind::F32 | Kind::F32Cvt | Kind::I32 | Kind::Pos => 32,
            Kind::F64 | Kind::F64Cvt | Kind::I64 => 64,
            Kind::Pred => 0,
        }
    }
    /// The values an operand of this kind takes.
    pub fn values(self) -> Vec<u64> {
        let pair = |s: &[u64]| -> Vec<u64> { (0..s.len()).map(|k| s[k] | s[(k * 7 + 3) % s.len()] << 16).collect() };
        match self {
            Kind::F16 => v::F16.to_vec(),
            Kind::Bf16 => v::BF16.to_vec(),
            Kind::F16x2 => pair(v::F16),
            Kind::Bf16x2 => pair(v::BF16),
            Kind::F32 => v::F32.to_vec(),
            Kind::F32Cvt => [v::F32, v::F32_CVT].concat(),
            Kind::F64 => v::F64.to_vec(),
            Kind::F64Cvt => [v::F64, v::F64_CVT].concat(),
            Kind::I8 => v::I8.to_vec(),
            Kind::I16 => v::I16.to_vec(),
            Kind::I32 => v::I32.to_vec(),
            Kind::I64 => v::I64.to_vec(),
            Kind::Pos => v::POS.to_vec(),
            Kind::Pred => v::PRED.to_vec(),
        }
    }
    /// The bit type of its global array, loads and stores.
    pub fn array_type(self) -> &'static str {
        match self.bits() {
            16 => "b16",
            64 => "b64",
            _ => "b32",
        }
    }
    fn reg_type(self) -> &'static str {
        match self.bits() {
            0 => "pred",
            16 => "b16",
            64 => "b64",
            _ => "b32",
        }
    }
}

/// One form: its name, the instruction text (operands `%a %b %c %e`, destinations `%d0..`),
/// the kinds of its sources and destinations.
#[derive(Clone, Debug)]
pub struct Form {
    pub id: String,
    pub body: String,
    pub srcs: Vec<Kind>,
    pub dsts: Vec<Kind>,
}

/// The lanes' operand tuples: the full cross product of the sources' values, or where it
/// would pass 2048 lanes, of an evenly spread subset of each list (its first and last
/// values and as many between as fit), so that every kind of edge value stays in.
pub fn tuples(srcs: &[Kind]) -> Vec<Vec<u64>> {
    let full: Vec<Vec<u64>> = srcs.iter().map(|k| k.values()).collect();
    let product: usize = full.iter().map(Vec::len).product();
    let lists: Vec<Vec<u64>> = if product <= 2048 {
        full
    } else {
        let mut keep = full.iter().map(Vec::len).max().unwrap_or(1);
        while full.iter().map(|l| l.len().min(keep)).product::<usize>() > 2048 {
            keep -= 1;
        }
        let spread = |l: &Vec<u64>| -> Vec<u64> {
            if l.len() <= keep || keep < 2 {
                return l.clone();
            }
            (0..keep).map(|j| l[(j * (l.len() - 1) + (keep - 1) / 2) / (keep - 1)]).collect()
        };
        full.iter().map(spread).collect()
    };
    let mut out = vec![Vec::new()];
    for list in &lists {
        out = out.iter().flat_map(|t| list.iter().map(move |x| [t.clone(), vec![*x]].concat())).collect();
    }
    out
}

const NAMES: [&str; 4] = ["a", "b", "c", "e"];

/// The PTX module of one form: kernel `k(.param .u64 out)`, lane `i` writing slot `j` at
/// `out + (i * dsts + j) * 8`.
pub fn module(form: &Form) -> (String, usize) {
    let lanes = tuples(&form.srcs);
    let n = lanes.len();
    let mut s = String::from(".version 9.0\n.target sm_90\n.address_size 64\n");
    for (j, k) in form.srcs.iter().enumerate() {
        let vals: Vec<String> = lanes.iter().map(|t| format!("{:#x}", t[j])).collect();
        s += &format!(".global .align 8 .{} in{j}[{n}] = {{{}}};\n", k.array_type(), vals.join(","));
    }
    s += ".visible .entry k(.param .u64 out)\n{\n";
    s += ".reg .b64 %o, %x, %w;\n.reg .b32 %i, %n, %t;\n.reg .b16 %h;\n.reg .pred %q;\n";
    for (j, k) in form.srcs.iter().enumerate() {
        s += &format!(".reg .{} %{};\n", k.reg_type(), NAMES[j]);
    }
    for (j, k) in form.dsts.iter().enumerate() {
        s += &format!(".reg .{} %d{j};\n", k.reg_type());
    }
    s += "ld.param.u64 %o, [out];\ncvta.to.global.u64 %o, %o;\n";
    s += "mov.u32 %i, %ctaid.x;\nmov.u32 %n, %ntid.x;\nmov.u32 %t, %tid.x;\nmad.lo.u32 %i, %i, %n, %t;\n";
    s += &format!("setp.ge.u32 %q, %i, {n};\n@%q bra DONE;\n");
    for (j, k) in form.srcs.iter().enumerate() {
        let bytes = match k.bits() {
            16 => 2,
            64 => 8,
            _ => 4,
        };
        s += &format!("mov.u64 %x, in{j};\nmul.wide.u32 %w, %i, {bytes};\nadd.s64 %x, %x, %w;\n");
        let r = NAMES[j];
        match k {
            Kind::Pred => s += &format!("ld.global.b32 %t, [%x];\nsetp.ne.b32 %{r}, %t, 0;\n"),
            _ => s += &format!("ld.global.{} %{r}, [%x];\n", k.array_type()),
        }
    }
    // %x: this lane's output record (atomic forms use its second slot as their location).
    s += &format!("mul.wide.u32 %w, %i, {};\nadd.s64 %x, %o, %w;\n", form.dsts.len() * 8);
    s += &form.body;
    s += "\n";
    for (j, k) in form.dsts.iter().enumerate() {
        match k {
            Kind::Pred => s += &format!("selp.b32 %t, 1, 0, %d{j};\nst.global.b32 [%x+{}], %t;\n", j * 8),
            _ => s += &format!("st.global.{} [%x+{}], %d{j};\n", k.array_type(), j * 8),
        }
    }
    s += "DONE:\nret;\n}\n";
    (s, n)
}

/// The suite's text: each form's module after a line `//@@ ID<tab>LANES<tab>W,W..` (the
/// bytes of each destination slot that are printed).
pub fn suite_text(forms: &[Form]) -> String {
    let mut s = String::new();
    for f in forms {
        let (m, n) = module(f);
        let widths: Vec<String> = f.dsts.iter().map(|k| slot_bytes(*k).to_string()).collect();
        s += &format!("//@@ {}\t{}\t{}\n{m}", f.id, n, widths.join(","));
    }
    s
}

/// The bytes each destination slot of a kind holds (a predicate is stored as a u32).
pub fn slot_bytes(k: Kind) -> usize {
    match k.bits() {
        0 | 32 => 4,
        16 => 2,
        _ => 8,
    }
}
