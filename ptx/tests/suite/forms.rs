//! The forms of the instruction suite: every instruction, type and modifier combination the
//! suite runs, each with the kinds of its operands.

use cudrv_ptx::instructions::{Arg, Forms, Shape, Tested, ROWS};

use super::gen::{Form, Kind};

/// The kind of a PTX type's operand.
pub fn kind(t: &str) -> Kind {
    match t {
        "u8" | "s8" => Kind::I8,
        "u16" | "s16" | "b16" => Kind::I16,
        "u64" | "s64" | "b64" => Kind::I64,
        "f16" => Kind::F16,
        "bf16" => Kind::Bf16,
        "f16x2" => Kind::F16x2,
        "bf16x2" => Kind::Bf16x2,
        "f32" => Kind::F32,
        "f64" => Kind::F64,
        "pred" => Kind::Pred,
        _ => Kind::I32,
    }
}

#[derive(Default)]
struct List(Vec<Form>);

const OPS: [&str; 4] = ["%a", "%b", "%c", "%e"];

impl List {
    /// `inst %d0, %a[, %b[, %c[, %e]]];`
    fn plain(&mut self, inst: &str, srcs: &[Kind], dst: Kind) {
        let body = format!("{inst} %d0, {};", OPS[..srcs.len()].join(", "));
        self.custom(inst, &body, srcs, &[dst]);
    }
    fn custom(&mut self, id: &str, body: &str, srcs: &[Kind], dsts: &[Kind]) {
        self.0.push(Form { id: id.to_string(), body: body.to_string(), srcs: srcs.to_vec(), dsts: dsts.to_vec() });
    }
}

const INTS: [&str; 6] = ["u16", "s16", "u32", "s32", "u64", "s64"];
const CVT_INTS: [&str; 8] = ["u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64"];
const RND: [&str; 4] = ["rn", "rz", "rm", "rp"];
const IRND: [&str; 4] = ["rni", "rzi", "rmi", "rpi"];
const FCMP: [&str; 14] = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"];

/// Every concatenation of one part from each list (`""` for none) but the one of no
/// modifier at all: the bare form is the table's ([`bare`]).
fn with_modifiers(lists: &[&[&str]]) -> Vec<String> {
    let mut out = vec![String::new()];
    for list in lists {
        out = out.iter().flat_map(|s| list.iter().map(move |m| format!("{s}{m}"))).collect();
    }
    out.retain(|s| !s.is_empty());
    out
}

/// `opcode.type %d0, %a, ...` for every type of every row the decoder's table marks
/// [`Forms::Bare`]: the operands' kinds from its shape (the type's values, a predicate's, a
/// shift amount's or bit position's for a u32 source, a u32 for a u32 destination).
fn bare(l: &mut List) {
    for row in ROWS.iter().filter(|r| r.tested == Tested::Suite(Forms::Bare)) {
        let Shape::Operands { dsts: [dst], srcs } = row.shape else {
            panic!("{}: a bare suite form has one destination", row.opcode)
        };
        for t in row.types {
            let of = |a: &Arg, is_dst: bool| match a {
                Arg::T | Arg::T2 => kind(t),
                Arg::Pred => Kind::Pred,
                Arg::U32 if is_dst => Kind::I32,
                Arg::U32 => Kind::Pos,
                Arg::Addr | Arg::Label => panic!("{}: no memory or label operand in a bare form", row.opcode),
            };
            let srcs: Vec<Kind> = srcs.iter().map(|a| of(a, false)).collect();
            l.plain(&format!("{}.{t}", row.opcode), &srcs, of(dst, true));
        }
    }
}

fn wide(t: &str) -> Kind {
    if t.ends_with("16") {
        Kind::I32
    } else {
        Kind::I64
    }
}

fn integer(l: &mut List) {
    use Kind::*;
    for t in INTS {
        let k = kind(t);
        for op in ["div", "mul.lo", "mul.hi"] {
            l.plain(&format!("{op}.{t}"), &[k, k], k);
        }
        for op in ["mad.lo", "mad.hi"] {
            l.plain(&format!("{op}.{t}"), &[k, k, k], k);
        }
        if !t.ends_with("64") {
            l.plain(&format!("mul.wide.{t}"), &[k, k], wide(t));
            l.plain(&format!("mad.wide.{t}"), &[k, k, wide(t)], wide(t));
        }
    }
    l.plain("add.sat.s32", &[I32, I32], I32);
    l.plain("sub.sat.s32", &[I32, I32], I32);
    l.plain("mad.hi.sat.s32", &[I32, I32, I32], I32);
    for t in ["u32", "s32"] {
        for h in ["lo", "hi"] {
            l.plain(&format!("mul24.{h}.{t}"), &[I32, I32], I32);
            l.plain(&format!("mad24.{h}.{t}"), &[I32, I32, I32], I32);
        }
    }
    l.plain("mad24.hi.sat.s32", &[I32, I32, I32], I32);
    for t in ["u32", "s32", "u64", "s64"] {
        let k = kind(t);
        l.custom(
            &format!("addc.cc.{t} (after add.cc)"),
            &format!("add.cc.{t} %d0, %a, %b;\naddc.cc.{t} %d1, %a, %b;\naddc.{t} %d2, 0, 0;"),
            &[k, k],
            &[k, k, k],
        );
        l.custom(
            &format!("subc.cc.{t} (after sub.cc)"),
            &format!("sub.cc.{t} %d0, %a, %b;\nsubc.cc.{t} %d1, %a, %b;\nsubc.{t} %d2, 0, 0;"),
            &[k, k],
            &[k, k, k],
        );
        l.custom(
            &format!("madc.hi.cc.{t} (after mad.lo.cc)"),
            &format!("mad.lo.cc.{t} %d0, %a, %b, %c;\nmadc.hi.cc.{t} %d1, %a, %b, %c;\naddc.{t} %d2, 0, 0;"),
            &[k, k, k],
            &[k, k, k],
        );
    }
}

fn bits(l: &mut List) {
    use Kind::*;
    for t in ["u32", "s32", "u64", "s64"] {
        l.plain(&format!("bfind.shiftamt.{t}"), &[kind(t)], I32);
    }
    for d in ["l", "r"] {
        for m in ["wrap", "clamp"] {
            l.plain(&format!("shf.{d}.{m}.b32"), &[I32, I32, Pos], I32);
        }
    }
    for lut in ["0x96", "0xe8", "0x3c", "0xfe", "0x01", "0xca"] {
        l.custom(&format!("lop3.b32.{lut}"), &format!("lop3.b32 %d0, %a, %b, %c, {lut};"), &[I32, I32, I32], &[I32]);
    }
    for m in [".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"] {
        l.plain(&format!("prmt.b32{m}"), &[I32, I32, I32], I32);
    }
    for a in ["u32", "s32"] {
        for b in ["u32", "s32"] {
            l.plain(&format!("dp4a.{a}.{b}"), &[I32, I32, I32], I32);
            l.plain(&format!("dp2a.lo.{a}.{b}"), &[I32, I32, I32], I32);
            l.plain(&format!("dp2a.hi.{a}.{b}"), &[I32, I32, I32], I32);
        }
    }
}

fn compare(l: &mut List) {
    use Kind::*;
    for t in ["b16", "b32", "b64", "u16", "s16", "u32", "s32", "u64", "s64"] {
        let k = kind(t);
        let ops: &[&str] = match t.as_bytes().first() {
            Some(b'b') => &["eq", "ne"],
            Some(b'u') => &["eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"],
            _ => &["eq", "ne", "lt", "le", "gt", "ge"],
        };
        for op in ops {
            l.plain(&format!("setp.{op}.{t}"), &[k, k], Pred);
        }
    }
    for b in ["and", "or", "xor"] {
        l.custom(
            &format!("setp.lt.{b}.s32 (p|q)"),
            &format!("setp.lt.{b}.s32 %d0|%d1, %a, %b, %c;"),
            &[I32, I32, Pred],
            &[Pred, Pred],
        );
        l.custom(
            &format!("setp.ltu.{b}.f32 (p|q)"),
            &format!("setp.ltu.{b}.f32 %d0|%d1, %a, %b, !%c;"),
            &[F32, F32, Pred],
            &[Pred, Pred],
        );
    }
    for t in ["f32", "f64"] {
        let k = kind(t);
        for op in FCMP {
            l.plain(&format!("setp.{op}.{t}"), &[k, k], Pred);
        }
        l.plain(&format!("testp.finite.{t}"), &[k], Pred);
        for op in ["infinite", "number", "notanumber", "normal", "subnormal"] {
            l.plain(&format!("testp.{op}.{t}"), &[k], Pred);
        }
    }
    for op in ["lt", "equ", "nan", "geu"] {
        l.plain(&format!("setp.{op}.ftz.f32"), &[F32, F32], Pred);
    }
    for op in FCMP {
        l.plain(&format!("setp.{op}.f16"), &[F16, F16], Pred);
    }
    for op in ["lt", "equ", "nan"] {
        l.plain(&format!("setp.{op}.bf16"), &[Bf16, Bf16], Pred);
        l.plain(&format!("setp.{op}.ftz.f16"), &[F16, F16], Pred);
    }
    for d in ["u32", "s32", "f32"] {
        for (s, k) in [("s32", I32), ("u32", I32), ("f32", F32), ("f64", F64)] {
            for op in ["lt", "eq", "ne"] {
                l.plain(&format!("set.{op}.{d}.{s}"), &[k, k], if d == "f32" { F32 } else { I32 });
            }
        }
    }
    for d in ["b16", "b32", "b64", "u16", "s16", "u32", "s32", "u64", "s64", "f32", "f64"] {
        l.plain(&format!("slct.{d}.s32"), &[kind(d), kind(d), I32], kind(d));
        l.plain(&format!("slct.{d}.f32"), &[kind(d), kind(d), F32], kind(d));
        l.plain(&format!("slct.ftz.{d}.f32"), &[kind(d), kind(d), F32], kind(d));
    }
}

fn float32(l: &mut List) {
    use Kind::*;
    l.plain("mul.f32", &[F32, F32], F32);
    for op in ["add", "sub", "mul"] {
        for m in with_modifiers(&[&["", ".rn", ".rz", ".rm", ".rp"], &["", ".ftz"], &["", ".sat"]]) {
            l.plain(&format!("{op}{m}.f32"), &[F32, F32], F32);
        }
    }
    for r in RND {
        for ftz in ["", ".ftz"] {
            for sat in ["", ".sat"] {
                l.plain(&format!("fma.{r}{ftz}{sat}.f32"), &[F32, F32, F32], F32);
            }
            l.plain(&format!("div.{r}{ftz}.f32"), &[F32, F32], F32);
            l.plain(&format!("rcp.{r}{ftz}.f32"), &[F32], F32);
            l.plain(&format!("sqrt.{r}{ftz}.f32"), &[F32], F32);
        }
    }
    l.plain("mad.rn.f32", &[F32, F32, F32], F32);
    l.plain("mad.rn.ftz.sat.f32", &[F32, F32, F32], F32);
    for ftz in ["", ".ftz"] {
        l.plain(&format!("div.approx{ftz}.f32"), &[F32, F32], F32);
        l.plain(&format!("div.full{ftz}.f32"), &[F32, F32], F32);
        for op in ["rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos"] {
            l.plain(&format!("{op}.approx{ftz}.f32"), &[F32], F32);
        }
    }
    for m in with_modifiers(&[&["", ".ftz"], &["", ".NaN"]]) {
        l.plain(&format!("min{m}.f32"), &[F32, F32], F32);
        l.plain(&format!("max{m}.f32"), &[F32, F32], F32);
    }
    l.plain("abs.ftz.f32", &[F32], F32);
    l.plain("neg.ftz.f32", &[F32], F32);
    l.plain("tanh.approx.f32", &[F32], F32);
    l.custom("mul.f32+add.f32 (contraction)", "mul.f32 %d0, %a, %b;\nadd.f32 %d0, %d0, %c;", &[F32, F32, F32], &[F32]);
    l.custom(
        "mul.rn.f32+add.rn.f32 (no contraction)",
        "mul.rn.f32 %d0, %a, %b;\nadd.rn.f32 %d0, %d0, %c;",
        &[F32, F32, F32],
        &[F32],
    );
}

fn float64(l: &mut List) {
    use Kind::*;
    l.plain("mul.f64", &[F64, F64], F64);
    for op in ["add", "sub", "mul"] {
        for r in RND {
            l.plain(&format!("{op}.{r}.f64"), &[F64, F64], F64);
        }
    }
    for r in RND {
        l.plain(&format!("fma.{r}.f64"), &[F64, F64, F64], F64);
        l.plain(&format!("div.{r}.f64"), &[F64, F64], F64);
        l.plain(&format!("rcp.{r}.f64"), &[F64], F64);
        l.plain(&format!("sqrt.{r}.f64"), &[F64], F64);
    }
    l.plain("mad.rn.f64", &[F64, F64, F64], F64);
    l.plain("rcp.approx.ftz.f64", &[F64], F64);
    l.plain("rsqrt.approx.f64", &[F64], F64);
    l.plain("rsqrt.approx.ftz.f64", &[F64], F64);
    l.custom("mul.f64+add.f64 (contraction)", "mul.f64 %d0, %a, %b;\nadd.f64 %d0, %d0, %c;", &[F64, F64, F64], &[F64]);
}

fn half(l: &mut List) {
    for t in ["f16", "f16x2"] {
        let k = kind(t);
        l.plain(&format!("mul.{t}"), &[k, k], k);
        for op in ["add", "sub", "mul"] {
            for m in with_modifiers(&[&["", ".rn"], &["", ".ftz"], &["", ".sat"]]) {
                l.plain(&format!("{op}{m}.{t}"), &[k, k], k);
            }
        }
        for ftz in ["", ".ftz"] {
            for sat in ["", ".sat"] {
                l.plain(&format!("fma.rn{ftz}{sat}.{t}"), &[k, k, k], k);
            }
        }
        for m in with_modifiers(&[&["", ".ftz"], &["", ".NaN"]]) {
            l.plain(&format!("min{m}.{t}"), &[k, k], k);
            l.plain(&format!("max{m}.{t}"), &[k, k], k);
        }
        l.plain(&format!("abs.ftz.{t}"), &[k], k);
        l.plain(&format!("neg.ftz.{t}"), &[k], k);
        l.plain(&format!("ex2.approx.{t}"), &[k], k);
        l.plain(&format!("tanh.approx.{t}"), &[k], k);
    }
    for t in ["bf16", "bf16x2"] {
        let k = kind(t);
        l.plain(&format!("mul.{t}"), &[k, k], k);
        for op in ["add", "sub", "mul"] {
            l.plain(&format!("{op}.rn.{t}"), &[k, k], k);
        }
        l.plain(&format!("fma.rn.{t}"), &[k, k, k], k);
        l.plain(&format!("min.NaN.{t}"), &[k, k], k);
        l.plain(&format!("max.NaN.{t}"), &[k, k], k);
        l.plain(&format!("ex2.approx.ftz.{t}"), &[k], k);
        l.plain(&format!("tanh.approx.{t}"), &[k], k);
    }
}

fn conversions(l: &mut List) {
    use Kind::*;
    for d in CVT_INTS {
        for s in CVT_INTS {
            if d != s {
                l.plain(&format!("cvt.{d}.{s}"), &[kind(s)], kind(d));
            }
            l.plain(&format!("cvt.sat.{d}.{s}"), &[kind(s)], kind(d));
        }
    }
    for r in RND {
        for ftz in ["", ".ftz"] {
            for sat in ["", ".sat"] {
                l.plain(&format!("cvt.{r}{ftz}{sat}.f32.f64"), &[F64Cvt], F32);
            }
        }
        l.plain(&format!("cvt.{r}.f16.f32"), &[F32Cvt], F16);
        l.plain(&format!("cvt.{r}.sat.f16.f32"), &[F32Cvt], F16);
        l.plain(&format!("cvt.{r}.f16.f64"), &[F64Cvt], F16);
        l.plain(&format!("cvt.{r}.bf16.f32"), &[F32Cvt], Bf16);
        l.plain(&format!("cvt.{r}.bf16.f64"), &[F64Cvt], Bf16);
        for s in CVT_INTS {
            for d in ["f16", "f32", "f64"] {
                l.plain(&format!("cvt.{r}.{d}.{s}"), &[kind(s)], kind(d));
            }
            l.plain(&format!("cvt.{r}.bf16.{s}"), &[kind(s)], Bf16);
        }
    }
    for ftz in ["", ".ftz"] {
        for sat in ["", ".sat"] {
            l.plain(&format!("cvt{ftz}{sat}.f64.f32"), &[F32Cvt], F64);
            l.plain(&format!("cvt{ftz}{sat}.f32.f16"), &[F16], F32);
            l.plain(&format!("cvt{ftz}{sat}.f32.f32"), &[F32Cvt], F32);
        }
    }
    l.plain("cvt.f64.f16", &[F16], F64);
    l.plain("cvt.f32.bf16", &[Bf16], F32);
    l.plain("cvt.f64.bf16", &[Bf16], F64);
    l.plain("cvt.rn.f16.bf16", &[Bf16], F16);
    l.plain("cvt.rn.bf16.f16", &[F16], Bf16);
    l.plain("cvt.rn.f16x2.f32", &[F32, F32], F16x2);
    l.plain("cvt.rn.bf16x2.f32", &[F32, F32], Bf16x2);
    for r in IRND {
        for ftz in ["", ".ftz"] {
            for sat in ["", ".sat"] {
                l.plain(&format!("cvt.{r}{ftz}{sat}.f32.f32"), &[F32Cvt], F32);
            }
            for d in CVT_INTS {
                l.plain(&format!("cvt.{r}{ftz}.{d}.f32"), &[F32Cvt], kind(d));
            }
        }
        l.plain(&format!("cvt.{r}.f64.f64"), &[F64Cvt], F64);
        l.plain(&format!("cvt.{r}.f16.f16"), &[F16], F16);
        for d in CVT_INTS {
            l.plain(&format!("cvt.{r}.{d}.f64"), &[F64Cvt], kind(d));
            l.plain(&format!("cvt.{r}.{d}.f16"), &[F16], kind(d));
            l.plain(&format!("cvt.{r}.{d}.bf16"), &[Bf16], kind(d));
        }
        l.plain(&format!("cvt.{r}.sat.s32.f32"), &[F32Cvt], I32);
    }
    l.custom("mov.b32 {lo,hi}", "mov.b32 %d0, {%a, %b};", &[I16, I16], &[I32]);
    l.custom("mov.b64 {lo,hi}", "mov.b64 {%d0, %d1}, %a;", &[I64], &[I32, I32]);
}

fn atomics(l: &mut List) {
    let mut at = |op: &str, t: &str, n: usize| {
        let k = kind(t);
        let st = k.array_type();
        let (srcs, ops): (Vec<Kind>, &str) = if n == 3 { (vec![k, k, k], "%b, %c") } else { (vec![k, k], "%b") };
        l.custom(
            &format!("atom.global.{op}.{t}"),
            &format!(
                "st.global.{st} [%x+8], %a;\natom.global.{op}.{t} %d0, [%x+8], {ops};\nld.global.{st} %d1, [%x+8];"
            ),
            &srcs,
            &[k, k],
        );
        if n == 2 && op != "exch" {
            l.custom(
                &format!("red.global.{op}.{t}"),
                &format!("st.global.{st} [%x+8], %a;\nred.global.{op}.{t} [%x+8], %b;\nld.global.{st} %d1, [%x+8];\nmov.{st} %d0, 0;"),
                &srcs,
                &[k, k],
            );
        }
    };
    for t in ["u32", "s32", "u64", "f32", "f64"] {
        at("add", t, 2);
    }
    at("add.noftz", "f16", 2);
    at("add.noftz", "bf16", 2);
    at("add.noftz", "f16x2", 2);
    for t in ["u32", "s32", "u64", "s64"] {
        at("min", t, 2);
        at("max", t, 2);
    }
    at("inc", "u32", 2);
    at("dec", "u32", 2);
    for t in ["b32", "b64"] {
        for op in ["and", "or", "xor", "exch"] {
            at(op, t, 2);
        }
        at("cas", t, 3);
    }
}

fn video(l: &mut List) {
    use Kind::*;
    let sign = ["u32.u32.u32", "s32.s32.s32", "u32.s32.u32", "s32.u32.s32"];
    for op in ["vadd", "vsub", "vabsdiff", "vmin", "vmax"] {
        for t in sign {
            l.plain(&format!("{op}.{t}"), &[I32, I32], I32);
            l.plain(&format!("{op}.{t}.sat"), &[I32, I32], I32);
            for second in ["add", "min", "max"] {
                l.plain(&format!("{op}.{t}.{second}"), &[I32, I32, I32], I32);
            }
        }
        l.custom(
            &format!("{op}.s32.u32.s32 (selectors)"),
            &format!("{op}.s32.u32.s32 %d0, %a.b3, %b.h1;"),
            &[I32, I32],
            &[I32],
        );
        l.custom(
            &format!("{op}.u32.s32.s32.sat (merge into c.h1)"),
            &format!("{op}.u32.s32.s32.sat %d0.h1, %a.b2, %b.b1, %c;"),
            &[I32, I32, I32],
            &[I32],
        );
    }
    for op in ["vshl", "vshr"] {
        for t in ["u32.u32.u32", "s32.s32.u32"] {
            for m in ["clamp", "wrap"] {
                l.plain(&format!("{op}.{t}.{m}"), &[I32, Pos], I32);
                l.plain(&format!("{op}.{t}.{m}.sat"), &[I32, Pos], I32);
                l.plain(&format!("{op}.{t}.{m}.add"), &[I32, Pos, I32], I32);
            }
        }
    }
    for t in ["u32.u32", "s32.s32", "s32.u32"] {
        for c in ["eq", "ne", "lt", "le", "gt", "ge"] {
            l.plain(&format!("vset.{t}.{c}"), &[I32, I32], I32);
        }
        l.plain(&format!("vset.{t}.lt.add"), &[I32, I32, I32], I32);
    }
    for t in ["u32.u32.u32", "s32.s32.s32", "s32.u32.s32"] {
        l.plain(&format!("vmad.{t}"), &[I32, I32, I32], I32);
        l.plain(&format!("vmad.{t}.sat"), &[I32, I32, I32], I32);
        l.plain(&format!("vmad.{t}.shr7"), &[I32, I32, I32], I32);
        l.plain(&format!("vmad.{t}.shr15.sat"), &[I32, I32, I32], I32);
    }
    l.custom("vmad.s32.s32.s32 (-a)", "vmad.s32.s32.s32 %d0, -%a, %b, %c;", &[I32, I32, I32], &[I32]);
    l.custom("vmad.s32.u32.u32 (-c)", "vmad.s32.u32.u32 %d0, %a.h1, %b.b0, -%c;", &[I32, I32, I32], &[I32]);
    l.plain("vmad.u32.u32.u32.po", &[I32, I32, I32], I32);
    for n in ["2", "4"] {
        for op in ["vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax"] {
            for t in ["u32.u32.u32", "s32.s32.s32", "s32.u32.s32", "u32.s32.u32"] {
                l.plain(&format!("{op}{n}.{t}"), &[I32, I32, I32], I32);
                l.plain(&format!("{op}{n}.{t}.sat"), &[I32, I32, I32], I32);
                l.plain(&format!("{op}{n}.{t}.add"), &[I32, I32, I32], I32);
            }
        }
        for t in ["u32.u32", "s32.s32", "u32.s32"] {
            for c in ["eq", "ne", "lt", "le", "gt", "ge"] {
                l.plain(&format!("vset{n}.{t}.{c}"), &[I32, I32, I32], I32);
            }
            l.plain(&format!("vset{n}.{t}.lt.add"), &[I32, I32, I32], I32);
        }
    }
    l.custom(
        "vadd4.u32.u32.u32 (mask, selectors)",
        "vadd4.u32.u32.u32 %d0.b20, %a.b7531, %b.b6420, %c;",
        &[I32, I32, I32],
        &[I32],
    );
    l.custom(
        "vsub2.s32.s32.s32 (mask, selectors)",
        "vsub2.s32.s32.s32 %d0.h1, %a.h21, %b.h03, %c;",
        &[I32, I32, I32],
        &[I32],
    );
}

/// Every form of the suite.
pub fn forms() -> Vec<Form> {
    let mut l = List::default();
    bare(&mut l);
    integer(&mut l);
    bits(&mut l);
    compare(&mut l);
    float32(&mut l);
    float64(&mut l);
    half(&mut l);
    conversions(&mut l);
    atomics(&mut l);
    video(&mut l);
    l.0
}
