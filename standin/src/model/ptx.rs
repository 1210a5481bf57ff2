//! Just enough of PTX to tell PTX text and find its kernels: the `.version` directive
//! first (after comments), a `.target` directive, each `.entry NAME(...)` with the
//! sizes and alignments of its parameters, the module-scope `.global` and `.const`
//! variables (with their sizes, whether they are managed, and simple initialisers), the
//! names of PTX instructions (for the JIT's error log), and the version and target gating.

/// One `.entry` of a PTX text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) name: String,
    /// The size in bytes of each parameter, if every declaration was understood.
    pub(crate) param_sizes: Option<Vec<usize>>,
    /// The offset and size of each parameter in the parameter buffer (each at its
    /// alignment: `.align N`, else its type's size), if every declaration was understood.
    pub(crate) layout: Option<Vec<(usize, usize)>>,
}

/// A module-scope `.global` or `.const` variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Global {
    pub(crate) name: String,
    /// Its size in bytes.
    pub(crate) size: usize,
    /// Declared with `.attribute(.managed)`.
    pub(crate) managed: bool,
    /// Its initial bytes (empty: zeroed), from an initialiser of numbers.
    pub(crate) init: Vec<u8>,
}

/// The entries of `text`, or `None` if it is not PTX (it must start, after comments and
/// white space, with `.version`, and have a `.target` directive).
pub(crate) fn entries(text: &str) -> Option<Vec<Entry>> {
    let code = strip_comments(text);
    let tokens = tokenize(&code);
    if tokens.first().copied() != Some(".version") || !tokens.contains(&".target") {
        return None;
    }
    let mut out: Vec<Entry> = Vec::new();
    let mut rest = tokens.as_slice();
    while let Some(pos) = rest.iter().position(|t| *t == ".entry") {
        rest = rest.get(pos + 1..).unwrap_or(&[]);
        let Some((name, after)) = rest.split_first() else {
            break;
        };
        rest = after;
        let decls = match rest.split_first() {
            Some((&"(", after)) => {
                let close = after.iter().position(|t| *t == ")").unwrap_or(after.len());
                let list = after.get(..close).unwrap_or(&[]);
                rest = after.get(close..).unwrap_or(&[]);
                params(list)
            }
            _ => Some(Vec::new()),
        };
        let param_sizes = decls.as_ref().map(|d| d.iter().map(|&(size, _)| size).collect());
        let layout = decls.and_then(|d| layout(&d));
        if !out.iter().any(|e| e.name == *name) {
            out.push(Entry { name: (*name).to_string(), param_sizes, layout });
        }
    }
    Some(out)
}

/// Offsets of parameters of these sizes and alignments, each at its alignment.
fn layout(decls: &[(usize, usize)]) -> Option<Vec<(usize, usize)>> {
    let mut offset = 0usize;
    let mut out = Vec::with_capacity(decls.len());
    for &(size, align) in decls {
        offset = offset.checked_next_multiple_of(align.max(1))?;
        out.push((offset, size));
        offset = offset.checked_add(size)?;
    }
    Some(out)
}

/// The module-scope `.global` and `.const` variables of PTX `text` (declarations
/// `.extern` are left out; one not understood is left out too).
pub(crate) fn globals(text: &str) -> Vec<Global> {
    let code = strip_comments(text);
    let tokens = tokenize(&code);
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut statement: Vec<&str> = Vec::new();
    for t in tokens {
        match t {
            "{" if statement.is_empty() || depth > 0 || !statement.contains(&"=") => {
                depth += 1;
                statement.clear();
            }
            "}" if depth > 0 => {
                depth -= 1;
                statement.clear();
            }
            ";" if depth == 0 => {
                if let Some(g) = global(&statement) {
                    out.push(g);
                }
                statement.clear();
            }
            t if depth == 0 => statement.push(t),
            _ => {}
        }
    }
    out
}

/// One module-scope statement as a global, if it declares one.
fn global(st: &[&str]) -> Option<Global> {
    let space = st.iter().position(|t| *t == ".global" || *t == ".const")?;
    if st.get(..space)?.contains(&".extern") {
        return None;
    }
    let (decl, init) = match st.iter().position(|t| *t == "=") {
        Some(eq) => (st.get(..eq)?, st.get(eq + 1..)?),
        None => (st, &[][..]),
    };
    let managed = decl.contains(&".managed");
    let (ty, elem) = decl.iter().find_map(|t| type_size(t).map(|s| (*t, s)))?;
    let name_at = decl.iter().rposition(|t| !t.starts_with('.') && !matches!(*t, "(" | ")" | "[" | "]"))?;
    let joined = decl.get(name_at..)?.concat();
    let (name, count) = match (joined.find('['), joined.find(']')) {
        (Some(open), Some(close)) if open < close => {
            (joined.get(..open)?.to_string(), joined.get(open + 1..close)?.trim().parse().ok()?)
        }
        _ => (joined, 1usize),
    };
    if name.parse::<f64>().is_ok() {
        return None;
    }
    let size = elem.checked_mul(count)?;
    let init = initial_bytes(ty, elem, init).filter(|b| b.len() <= size).unwrap_or_default();
    Some(Global { name, size, managed, init })
}

/// The bytes of an initialiser of numbers (`= 5`, `= {1, 2, 3}`, `= {1.5, 2.0}`) for
/// elements of type `ty` and size `elem`, or `None` if it is something else.
fn initial_bytes(ty: &str, elem: usize, init: &[&str]) -> Option<Vec<u8>> {
    let float = ty.starts_with(".f");
    let mut out = Vec::new();
    for t in init.iter().filter(|t| !matches!(**t, "{" | "}" | ",")) {
        let bytes = if float {
            let v: f64 = t.trim_end_matches(['f', 'F']).parse().ok()?;
            match elem {
                4 => (v as f32).to_ne_bytes().to_vec(),
                8 => v.to_ne_bytes().to_vec(),
                _ => return None,
            }
        } else {
            let v: i128 = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                Some(hex) => i128::from_str_radix(hex.trim_end_matches(['U', 'u']), 16).ok()?,
                None => t.trim_end_matches(['U', 'u']).parse().ok()?,
            };
            v.to_ne_bytes().get(..elem)?.to_vec()
        };
        out.extend(bytes);
    }
    Some(out)
}

/// PTX instructions (the part of an opcode before its first `.`).
const INSTRUCTIONS: &[&str] = &[
    "abs",
    "activemask",
    "add",
    "addc",
    "alloca",
    "and",
    "applypriority",
    "atom",
    "bar",
    "barrier",
    "bfe",
    "bfi",
    "bfind",
    "bmsk",
    "bra",
    "brev",
    "brkpt",
    "brx",
    "call",
    "clusterlaunchcontrol",
    "clz",
    "cnot",
    "copysign",
    "cos",
    "cp",
    "createpolicy",
    "cvt",
    "cvta",
    "discard",
    "div",
    "dp2a",
    "dp4a",
    "elect",
    "ex2",
    "exit",
    "fence",
    "fma",
    "fns",
    "getctarank",
    "griddepcontrol",
    "isspacep",
    "istypeof",
    "ld",
    "ldmatrix",
    "ldu",
    "lg2",
    "lop3",
    "mad",
    "mad24",
    "madc",
    "mapa",
    "match",
    "max",
    "mbarrier",
    "membar",
    "min",
    "mma",
    "mov",
    "movmatrix",
    "mul",
    "mul24",
    "multimem",
    "nanosleep",
    "neg",
    "not",
    "or",
    "pmevent",
    "popc",
    "prefetch",
    "prefetchu",
    "prmt",
    "rcp",
    "red",
    "redux",
    "rem",
    "ret",
    "rsqrt",
    "sad",
    "selp",
    "set",
    "setmaxnreg",
    "setp",
    "shf",
    "shfl",
    "shl",
    "shr",
    "sin",
    "slct",
    "sqrt",
    "st",
    "stackrestore",
    "stacksave",
    "stmatrix",
    "sub",
    "subc",
    "suld",
    "suq",
    "sured",
    "sust",
    "szext",
    "tanh",
    "tcgen05",
    "tensormap",
    "testp",
    "tex",
    "tld4",
    "trap",
    "txq",
    "vabsdiff",
    "vabsdiff2",
    "vabsdiff4",
    "vadd",
    "vadd2",
    "vadd4",
    "vavrg2",
    "vavrg4",
    "vmad",
    "vmax",
    "vmax2",
    "vmax4",
    "vmin",
    "vmin2",
    "vmin4",
    "vote",
    "vset",
    "vset2",
    "vset4",
    "vshl",
    "vshr",
    "vsub",
    "vsub2",
    "vsub4",
    "wgmma",
    "wmma",
    "xor",
];

/// Whether `opcode` (the part of an instruction's name before its first `.`) is a PTX
/// instruction.
pub(crate) fn is_instruction(opcode: &str) -> bool {
    INSTRUCTIONS.contains(&opcode)
}

/// The newest PTX ISA version (major, minor) the JIT of driver `version` (driver form,
/// `12040`) accepts: the PTX ISA document's release notes (11.x: 7.x; 12.0-12.4: 8.0-8.4;
/// 12.5 and 12.6: 8.5; 12.7: 8.6; 12.8: 8.7; 12.9: 8.8; 13.x: 9.x).
pub(crate) fn max_isa(version: u32) -> (u32, u32) {
    let (major, minor) = (version / 1000, (version % 1000) / 10);
    match (major, minor) {
        (0..=10, _) => (6, 5),
        (11, m) => (7, m),
        (12, 0..=4) => (8, minor),
        (12, 5 | 6) => (8, 5),
        (12, m) => (8, (m - 1).min(8)),
        (13, m) => (9, m),
        _ => (9, minor),
    }
}

/// The device's compute capability as a `.target` number (`sm_90`).
pub(crate) const DEVICE_SM: u32 = 90;

/// Why the JIT of a driver that accepts PTX ISA up to `max` refuses PTX `text`: its
/// `.version` is newer (CUDA_ERROR_UNSUPPORTED_PTX_VERSION), or a `.target` names a
/// compute capability above the device's (CUDA_ERROR_INVALID_PTX); the status and the
/// error log ptxas writes. `None` when neither.
pub(crate) fn gate(text: &str, max: (u32, u32)) -> Option<(cudrv::sys::CUresult, String)> {
    const ABORTED: &str = "ptxas fatal   : Ptx assembly aborted due to errors";
    let code = strip_comments(text);
    for (i, line) in code.lines().enumerate() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some(".version") => {
                let v = words.next().unwrap_or("");
                let (major, minor) = v.split_once('.').unwrap_or((v, "0"));
                let parsed = (major.parse::<u32>(), minor.trim_end_matches(';').parse::<u32>());
                if let (Ok(major), Ok(minor)) = parsed {
                    if (major, minor) > max {
                        let log = format!(
                            "ptxas application ptx input, line {}; fatal   : Unsupported .version {major}.{minor}; \
                             current version is '{}.{}'\n{ABORTED}",
                            i + 1,
                            max.0,
                            max.1
                        );
                        return Some((cudrv::sys::CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION, log));
                    }
                }
            }
            Some(".target") => {
                let above = line
                    .split(|c: char| c.is_whitespace() || c == ',')
                    .filter_map(|t| t.strip_prefix("sm_"))
                    .filter_map(|t| t.trim_end_matches(|c: char| c.is_ascii_alphabetic()).parse::<u32>().ok())
                    .any(|sm| sm > DEVICE_SM);
                if above {
                    // The H200's first line (conformance jit.ptx_target_sm_100): no line number.
                    let log = "ptxas fatal   : SM version specified by .target is higher than default SM version \
                               assumed"
                        .to_string();
                    return Some((cudrv::sys::CUresult::CUDA_ERROR_INVALID_PTX, log));
                }
            }
            _ => {}
        }
    }
    None
}

/// `text` without `//` and `/* */` comments (each replaced by a space; a block comment
/// keeps its line breaks, so lines keep their numbers).
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let line = rest.find("//");
        let block = rest.find("/*");
        match (line, block) {
            (Some(l), b) if b.is_none_or(|b| l < b) => {
                out.push_str(rest.get(..l).unwrap_or(""));
                out.push(' ');
                rest = rest.get(l..).and_then(|r| r.find('\n').and_then(|n| r.get(n..))).unwrap_or("");
            }
            (_, Some(b)) => {
                out.push_str(rest.get(..b).unwrap_or(""));
                out.push(' ');
                let after = rest.get(b + 2..).unwrap_or("");
                let end = after.find("*/").unwrap_or(after.len());
                out.extend(after.get(..end).unwrap_or("").chars().filter(|c| *c == '\n'));
                rest = after.get(end + 2..).unwrap_or("");
            }
            _ => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

/// Words, with `(`, `)`, `,`, `;`, `{` and `}` as tokens of their own.
fn tokenize(code: &str) -> Vec<&str> {
    let mut tokens = Vec::new();
    let mut start = None;
    for (i, c) in code.char_indices() {
        let punct = matches!(c, '(' | ')' | ',' | ';' | '{' | '}');
        if c.is_whitespace() || punct {
            if let Some(s) = start.take() {
                tokens.extend(code.get(s..i));
            }
            if punct {
                tokens.extend(code.get(i..i + c.len_utf8()));
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        tokens.extend(code.get(s..));
    }
    tokens
}

/// The size and alignment of each of a parameter list's declarations (`.param .u64
/// name`, `.param .align 8 .b8 name[16]`), or `None` if one is not understood.
fn params(list: &[&str]) -> Option<Vec<(usize, usize)>> {
    if list.is_empty() {
        return Some(Vec::new());
    }
    list.split(|t| *t == ",").map(param_size).collect()
}

fn param_size(decl: &[&str]) -> Option<(usize, usize)> {
    let size = decl.iter().find_map(|t| type_size(t))?;
    let align = match decl.iter().position(|t| *t == ".align") {
        Some(i) => decl.get(i + 1)?.parse().ok()?,
        None => size,
    };
    let joined = decl.concat();
    let count = match (joined.find('['), joined.find(']')) {
        (Some(open), Some(close)) if open < close => joined.get(open + 1..close)?.trim().parse().ok()?,
        _ => 1usize,
    };
    Some((size.checked_mul(count)?, align))
}

fn type_size(token: &str) -> Option<usize> {
    Some(match token {
        ".b8" | ".s8" | ".u8" => 1,
        ".b16" | ".s16" | ".u16" | ".f16" | ".bf16" => 2,
        ".b32" | ".s32" | ".u32" | ".f32" | ".f16x2" | ".bf16x2" => 4,
        ".b64" | ".s64" | ".u64" | ".f64" => 8,
        ".b128" => 16,
        _ => return None,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    const VECTOR_ADD: &str = "//\n// Generated by NVIDIA NVVM Compiler\n/* block\ncomment */\n.version 8.0\n\
        .target sm_90\n.address_size 64\n\n\t// .globl\tvector_add\n\
        .visible .entry vector_add(\n\t.param .u64 vector_add_param_0,\n\t.param .u64 .ptr .align 1 p1,\n\
        \t.param .u64 vector_add_param_2,\n\t.param .u32 vector_add_param_3\n)\n{\n\tret;\n}\n\
        .entry noargs\n{\n\tret;\n}\n.entry st(.param .align 8 .b8 s[24], .param .f32 x)\n{ ret; }\n";

    #[test]
    fn finds_entries_and_their_parameter_sizes() {
        let e = entries(VECTOR_ADD).unwrap();
        assert_eq!(
            e,
            vec![
                Entry {
                    name: "vector_add".into(),
                    param_sizes: Some(vec![8, 8, 8, 4]),
                    layout: Some(vec![(0, 8), (8, 8), (16, 8), (24, 4)])
                },
                Entry { name: "noargs".into(), param_sizes: Some(vec![]), layout: Some(vec![]) },
                Entry { name: "st".into(), param_sizes: Some(vec![24, 4]), layout: Some(vec![(0, 24), (24, 4)]) },
            ]
        );
    }

    #[test]
    fn only_ptx_with_version_first_and_a_target() {
        assert_eq!(entries(".version 8.0\n.target sm_90\n"), Some(vec![]));
        assert_eq!(entries(".version 8.0\n"), None);
        assert_eq!(entries(".target sm_90\n.version 8.0\n"), None);
        assert_eq!(entries("hello .version 8.0 .target sm_90"), None);
        assert_eq!(entries("// .entry\n.version 8.0 .target sm_90 // .entry hidden\n"), Some(vec![]));
        let weird = entries(".version 8.0 .target sm_90 .entry k(.param .mystery x)").unwrap();
        assert_eq!(weird, vec![Entry { name: "k".into(), param_sizes: None, layout: None }]);
    }

    #[test]
    fn layout_aligns_each_parameter() {
        let text = ".version 9.0 .target sm_90 .entry m(.param .u64 a, .param .u32 b, .param .f64 c, \
            .param .u8 d, .param .f32 e) { ret; } .entry s(.param .u8 a, .param .align 16 .b8 b[20]) { ret; }";
        let e = entries(text).unwrap();
        assert_eq!(e[0].layout, Some(vec![(0, 8), (8, 4), (16, 8), (24, 1), (28, 4)]));
        assert_eq!(e[1].layout, Some(vec![(0, 1), (16, 20)]));
    }

    #[test]
    fn finds_globals_with_sizes_managed_and_initialisers() {
        let text = ".version 9.0\n.target sm_90\n.global .align 4 .b8 table[1024];\n\
            .const .align 4 .b8 coeffs[16];\n.global .align 4 .u32 counter;\n\
            .global .attribute(.managed) .align 4 .u32 managed_value;\n.extern .global .u32 elsewhere;\n\
            .visible .global .align 4 .u32 init = 7;\n.const .align 4 .f32 fs[2] = {1.5, 2.0};\n\
            .visible .entry k() { .reg .b32 %r<2>; ld.global.u32 %r1, [counter]; ret; }\n";
        let g = globals(text);
        let names: Vec<(&str, usize, bool)> = g.iter().map(|g| (g.name.as_str(), g.size, g.managed)).collect();
        assert_eq!(
            names,
            vec![
                ("table", 1024, false),
                ("coeffs", 16, false),
                ("counter", 4, false),
                ("managed_value", 4, true),
                ("init", 4, false),
                ("fs", 8, false)
            ]
        );
        assert_eq!(g[4].init, 7u32.to_ne_bytes());
        assert_eq!(g[5].init, [1.5f32.to_ne_bytes(), 2.0f32.to_ne_bytes()].concat());
        assert!(g[0].init.is_empty());
    }

    #[test]
    fn gates_the_ptx_version_and_the_target() {
        use cudrv::sys::CUresult as R;
        let table = [
            (11030, (7, 3)),
            (11080, (7, 8)),
            (12000, (8, 0)),
            (12040, (8, 4)),
            (12050, (8, 5)),
            (12060, (8, 5)),
            (12070, (8, 6)),
            (12080, (8, 7)),
            (12090, (8, 8)),
            (13000, (9, 0)),
            (13050, (9, 5)),
        ];
        for (v, isa) in table {
            assert_eq!(max_isa(v), isa, "{v}");
        }
        let ptx =
            |version: &str, target: &str| format!("// c\n.version {version}\n.target {target}\n.address_size 64\n");
        assert_eq!(gate(&ptx("9.0", "sm_90"), (9, 0)), None);
        assert_eq!(gate(&ptx("7.0", "sm_50"), (7, 3)), None);
        assert_eq!(gate(&ptx("9.0", "sm_90a"), (9, 0)), None);
        let (code, log) = gate(&ptx("9.9", "sm_90"), (9, 0)).unwrap();
        assert_eq!(code, R::CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
        assert!(
            log.starts_with(
                "ptxas application ptx input, line 2; fatal   : Unsupported .version 9.9; current version is '9.0'"
            ),
            "{log}"
        );
        assert_eq!(gate(&ptx("7.4", "sm_50"), (7, 3)).unwrap().0, R::CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
        for target in ["sm_100", "sm_100a", "sm_90, sm_120"] {
            let (code, log) = gate(&ptx("8.8", target), (9, 0)).unwrap();
            assert_eq!(code, R::CUDA_ERROR_INVALID_PTX, "{target}");
            // The H200's words (conformance jit.ptx_target_sm_100): no line number.
            assert_eq!(
                log, "ptxas fatal   : SM version specified by .target is higher than default SM version assumed",
                "{target}"
            );
        }
    }
}
