//! PTX text to a syntax tree: directives, declarations, labels and instructions with their
//! operands, each with its line.

use std::fmt;

/// An error in PTX text: the line (1-based), the instruction or directive, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxError {
    /// The line of the PTX text (1-based).
    pub line: u32,
    /// The instruction (its full name) or directive concerned; empty if none.
    pub instruction: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for PtxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.instruction.is_empty() {
            write!(f, "line {}: {}", self.line, self.message)
        } else {
            write!(f, "line {}: {}: {}", self.line, self.instruction, self.message)
        }
    }
}

impl std::error::Error for PtxError {}

pub(crate) fn err(line: u32, instruction: &str, message: impl Into<String>) -> PtxError {
    PtxError { line, instruction: instruction.to_string(), message: message.into() }
}

/// A token: a slice of the text (no copy).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Tok<'a> {
    /// An identifier, directive (leading '.'), register (leading '%') or dotted name.
    Word(&'a str),
    /// A number as written.
    Num(&'a str),
    Str(&'a str),
    Punct(char),
}

#[derive(Clone, Copy, Debug)]
struct Token<'a> {
    tok: Tok<'a>,
    line: u32,
}

/// Tokens of PTX text, one at a time (comments and white space skipped; lines counted).
struct Lexer<'a> {
    text: &'a str,
    /// The byte offset of the next character (always a character's start).
    i: usize,
    line: u32,
}

impl<'a> Lexer<'a> {
    fn new(text: &'a str) -> Lexer<'a> {
        Lexer { text, i: 0, line: 1 }
    }

    /// The character at byte offset i ('\0' past the end).
    fn at(&self, i: usize) -> char {
        self.text.get(i..).and_then(|s| s.chars().next()).unwrap_or('\0')
    }

    fn slice(&self, a: usize, b: usize) -> &'a str {
        self.text.get(a..b).unwrap_or("")
    }
}

impl<'a> Iterator for Lexer<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        let n = self.text.len();
        while self.i < n {
            let i = self.i;
            let c = self.at(i);
            let line = self.line;
            if c == '\n' {
                self.line += 1;
                self.i += 1;
            } else if c.is_whitespace() {
                self.i += c.len_utf8();
            } else if c == '/' && self.at(i + 1) == '/' {
                while self.i < n && self.at(self.i) != '\n' {
                    self.i += self.at(self.i).len_utf8();
                }
            } else if c == '/' && self.at(i + 1) == '*' {
                self.i += 2;
                while self.i < n && !(self.at(self.i) == '*' && self.at(self.i + 1) == '/') {
                    if self.at(self.i) == '\n' {
                        self.line += 1;
                    }
                    self.i += self.at(self.i).len_utf8();
                }
                self.i += 2;
            } else if c == '"' {
                let start = i + 1;
                self.i = start;
                while self.i < n && self.at(self.i) != '"' {
                    self.i += self.at(self.i).len_utf8();
                }
                let tok = Tok::Str(self.slice(start, self.i));
                self.i += 1;
                return Some(Token { tok, line });
            } else if c.is_ascii_digit() {
                while self.i < n && (self.at(self.i).is_ascii_alphanumeric() || self.at(self.i) == '.') {
                    self.i += 1;
                }
                return Some(Token { tok: Tok::Num(self.slice(i, self.i)), line });
            } else if c.is_alphabetic() || c == '_' || c == '$' || c == '%' || c == '.' {
                loop {
                    let ch = self.at(self.i);
                    if self.i < n && (ch.is_alphanumeric() || matches!(ch, '_' | '$' | '%' | '.')) {
                        self.i += ch.len_utf8();
                    } else if ch == ':' && self.at(self.i + 1) == ':' && self.at(self.i + 2).is_alphanumeric() {
                        // Qualifiers such as .L1::no_allocate, .L2::256B
                        self.i += 2;
                    } else {
                        break;
                    }
                }
                return Some(Token { tok: Tok::Word(self.slice(i, self.i)), line });
            } else {
                self.i += c.len_utf8();
                return Some(Token { tok: Tok::Punct(c), line });
            }
        }
        None
    }
}

/// The version number of a `.version` directive (`8.0`: major.minor), if it is one.
fn version_number(n: &str) -> Option<(u32, u32)> {
    let mut it = n.split('.');
    let major = it.next()?.parse().ok()?;
    let minor = it.next()?.parse().ok()?;
    Some((major, minor))
}

/// The directives a PTX text opens with: `.version` first (after comments and white
/// space), then `.target` and `.address_size` directives. Read by the same lexer as
/// [`Module::load`](crate::Module::load), token by token up to the first other
/// statement, so it is cheap, and it reads a text whatever follows (a text the parser
/// refuses, or whose instructions the executor does not run): what an embedder needs to
/// tell PTX from other text and to gate it by version and target before loading it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The `.version` (major, minor); `None` when its operand is not a number `major.minor`
    /// ([`Module::load`](crate::Module::load) refuses such a text).
    pub version: Option<(u32, u32)>,
    /// The line of the `.version` directive (1-based).
    pub version_line: u32,
    /// The names every opening `.target` directive lists (`sm_90`, `sm_90a`, `debug`), in
    /// order; never empty.
    pub targets: Vec<String>,
}

impl Header {
    /// The header of `text`, or `None` if `text` is not PTX: its first token is not
    /// `.version`, or no `.target` directive follows among the opening directives
    /// (`.version`, `.target`, `.address_size`, in any order after the first `.version`).
    pub fn read(text: &str) -> Option<Header> {
        let mut toks = Lexer::new(text).peekable();
        let first = toks.next()?;
        if first.tok != Tok::Word(".version") {
            return None;
        }
        let version = match toks.peek().map(|t| t.tok) {
            Some(Tok::Num(n)) => version_number(n),
            _ => None,
        };
        let mut targets = Vec::new();
        while let Some(t) = toks.next() {
            match t.tok {
                Tok::Word(".target") => {
                    while let Some(Token { tok: Tok::Word(w), .. }) = toks.peek().copied() {
                        if w.starts_with('.') {
                            break;
                        }
                        targets.push(w.to_string());
                        toks.next();
                        if toks.peek().map(|t| t.tok) != Some(Tok::Punct(',')) {
                            break;
                        }
                        toks.next();
                    }
                }
                Tok::Word(".version" | ".address_size") | Tok::Num(_) | Tok::Punct(';') => {}
                _ => break,
            }
        }
        if targets.is_empty() {
            return None;
        }
        Some(Header { version, version_line: first.line, targets })
    }
}

fn lex(text: &str) -> Result<Vec<Token<'_>>, PtxError> {
    let mut out = Vec::with_capacity(text.len() / 5);
    out.extend(Lexer::new(text));
    Ok(out)
}

/// A state space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// .global
    Global,
    /// .const
    Const,
    /// .shared
    Shared,
    /// .local
    Local,
    /// .param
    Param,
    /// .reg
    Reg,
}

impl Space {
    fn from_word(w: &str) -> Option<Space> {
        Some(match w {
            ".global" => Space::Global,
            ".const" => Space::Const,
            ".shared" => Space::Shared,
            ".local" => Space::Local,
            ".param" => Space::Param,
            ".reg" => Space::Reg,
            _ => return None,
        })
    }
}

/// One initialiser item of a variable.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Init {
    /// A number: integer bits, or a float as f64.
    Int(i128),
    Float(f64),
    /// The address of a symbol plus an offset (generic(sym) too).
    Sym(String, i64),
}

/// A variable declaration (.global/.const/.shared/.local/.param).
#[derive(Clone, Debug)]
pub(crate) struct Var {
    pub(crate) space: Space,
    pub(crate) align: u32,
    /// Element type without the dot (b8, u32, f32, ...).
    pub(crate) ty: String,
    pub(crate) vec: u32,
    pub(crate) name: String,
    /// Array dimensions; `None` for `[]`.
    pub(crate) dims: Vec<Option<u64>>,
    pub(crate) init: Vec<Init>,
    pub(crate) line: u32,
    pub(crate) is_extern: bool,
    /// `.attribute(.managed)`
    pub(crate) managed: bool,
}

/// A register declaration.
#[derive(Clone, Debug)]
pub(crate) struct RegDecl {
    /// (name, count): `%r<10>` is ("%r", Some(10)).
    pub(crate) names: Vec<(String, Option<u32>)>,
}

/// An operand as written.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Operand {
    /// A name: register, special register, symbol, label or function.
    Name(String),
    /// `!name` (negated predicate).
    Not(String),
    /// `-name` (a negated source of `vmad`).
    Neg(String),
    Int(i128),
    /// A float immediate as f64 value; `f32_bits` when written 0fXXXXXXXX.
    Float {
        value: f64,
        f32_bits: Option<u32>,
    },
    /// `[base+off]`: base is a name or absent.
    Addr(Option<String>, i64),
    /// `{a, b, ...}`
    Vector(Vec<Operand>),
    /// `(a, b, ...)` (call lists)
    List(Vec<Operand>),
    /// `name+off` outside brackets.
    SymOff(String, i64),
    /// `_`
    Sink,
}

/// An instruction as written.
#[derive(Clone, Debug)]
pub(crate) struct InstAst {
    pub(crate) line: u32,
    pub(crate) guard: Option<(String, bool)>,
    /// The full name, e.g. "ld.global.v4.f32".
    pub(crate) name: String,
    pub(crate) operands: Vec<Operand>,
}

#[derive(Clone, Debug)]
pub(crate) enum Stmt {
    /// `{`: a nested scope opens (its declarations are visible up to its `}`).
    Open,
    /// `}`: the innermost nested scope closes.
    Close,
    Label(String),
    Reg(RegDecl),
    Var(Var),
    Inst(InstAst),
}

/// A function or kernel.
#[derive(Clone, Debug)]
pub(crate) struct FuncAst {
    pub(crate) name: String,
    pub(crate) is_entry: bool,
    pub(crate) params: Vec<Var>,
    pub(crate) rets: Vec<Var>,
    /// `None` for a declaration without a body.
    pub(crate) body: Option<Vec<Stmt>>,
    pub(crate) line: u32,
}

/// A whole PTX text.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ast {
    pub(crate) version: (u32, u32),
    pub(crate) targets: Vec<String>,
    pub(crate) address_size: u32,
    pub(crate) vars: Vec<Var>,
    pub(crate) funcs: Vec<FuncAst>,
}

struct Parser<'a> {
    toks: Vec<Token<'a>>,
    pos: usize,
    /// Nesting of braces in initialisers and operands (bounded: no deep recursion).
    depth: u32,
}

const MAX_DEPTH: u32 = 32;
/// The largest `.align` taken (a power of two; the GPU's largest alignment is far below).
const MAX_ALIGN: i128 = 1 << 20;
/// The largest array dimension taken: what 64 bits hold (the sizes' products are checked
/// where they are computed, `module.rs`).
const MAX_DIM: i128 = u64::MAX as i128;
/// The most registers one `.reg %r<N>` declares (a declaration costs nothing: a register
/// gets its slot when an instruction names it, and a function names at most 65536,
/// `module.rs`).
const MAX_REGS: i128 = 1 << 24;
/// Offsets in addresses and initialisers: what 64 bits hold, signed or not (an unsigned
/// one past i64's range is its two's complement).
const OFFSETS: std::ops::RangeInclusive<i128> = i64::MIN as i128..=u64::MAX as i128;

fn parse_int(s: &str) -> Option<i128> {
    let s = s.trim_end_matches(['U', 'u']);
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        i128::from_str_radix(h, 16).ok()
    } else if let Some(b) = s.strip_prefix("0b").or_else(|| s.strip_prefix("0B")) {
        i128::from_str_radix(b, 2).ok()
    } else if s.len() > 1 && s.starts_with('0') && s.chars().all(|c| c.is_ascii_digit()) {
        i128::from_str_radix(s, 8).ok()
    } else {
        s.parse().ok()
    }
}

/// A number token: integer or float.
fn parse_number(s: &str) -> Option<Operand> {
    if let Some(h) = s.strip_prefix("0f").or_else(|| s.strip_prefix("0F")) {
        let bits = u32::from_str_radix(h, 16).ok()?;
        return Some(Operand::Float { value: f64::from(f32::from_bits(bits)), f32_bits: Some(bits) });
    }
    if let Some(h) = s.strip_prefix("0d").or_else(|| s.strip_prefix("0D")) {
        let bits = u64::from_str_radix(h, 16).ok()?;
        return Some(Operand::Float { value: f64::from_bits(bits), f32_bits: None });
    }
    if let Some(v) = parse_int(s) {
        return Some(Operand::Int(v));
    }
    if s.contains('.') || s.contains('e') || s.contains('E') {
        return s.parse::<f64>().ok().map(|value| Operand::Float { value, f32_bits: None });
    }
    None
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<Tok<'a>> {
        self.toks.get(self.pos).map(|t| t.tok)
    }
    fn peek_at(&self, k: usize) -> Option<Tok<'a>> {
        self.toks.get(self.pos + k).map(|t| t.tok)
    }
    fn line(&self) -> u32 {
        self.toks.get(self.pos).or(self.toks.last()).map_or(0, |t| t.line)
    }
    fn next(&mut self) -> Option<Tok<'a>> {
        let t = self.toks.get(self.pos).map(|t| t.tok);
        self.pos += 1;
        t
    }
    fn is_punct(&self, c: char) -> bool {
        self.peek() == Some(Tok::Punct(c))
    }
    fn expect_punct(&mut self, c: char, ctx: &str) -> Result<(), PtxError> {
        if self.is_punct(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(err(self.line(), ctx, format!("expected '{c}', found {:?}", self.peek())))
        }
    }
    fn word(&mut self, ctx: &str) -> Result<String, PtxError> {
        self.word_ref(ctx).map(str::to_string)
    }
    fn word_ref(&mut self, ctx: &str) -> Result<&'a str, PtxError> {
        match self.next() {
            Some(Tok::Word(w)) => Ok(w),
            t => Err(err(self.line(), ctx, format!("expected a name, found {t:?}"))),
        }
    }
    fn number(&mut self, ctx: &str) -> Result<i128, PtxError> {
        let neg = if self.is_punct('-') {
            self.pos += 1;
            true
        } else {
            false
        };
        match self.next() {
            Some(Tok::Num(n)) => parse_int(n)
                .map(|v| if neg { -v } else { v })
                .ok_or_else(|| err(self.line(), ctx, format!("bad number {n}"))),
            t => Err(err(self.line(), ctx, format!("expected a number, found {t:?}"))),
        }
    }
    /// A number in `range`, else an error naming `what` and the range (numbers that do
    /// not fit are refused, not wrapped).
    fn number_in(&mut self, ctx: &str, what: &str, range: std::ops::RangeInclusive<i128>) -> Result<i128, PtxError> {
        let line = self.line();
        let n = self.number(ctx)?;
        if range.contains(&n) {
            Ok(n)
        } else {
            Err(err(line, ctx, format!("{what} {n} out of range ({}..={})", range.start(), range.end())))
        }
    }
    /// Skips the rest of the line of the token just consumed.
    fn skip_line(&mut self, line: u32) {
        while self.toks.get(self.pos).is_some_and(|t| t.line == line) {
            self.pos += 1;
        }
    }
    fn skip_to_semicolon(&mut self) {
        while let Some(t) = self.next() {
            if t == Tok::Punct(';') {
                break;
            }
        }
    }

    fn parse(&mut self) -> Result<Ast, PtxError> {
        let mut ast = Ast { address_size: 64, ..Ast::default() };
        let mut linkage_extern = false;
        while let Some(t) = self.peek() {
            let line = self.line();
            match t {
                Tok::Word(w) => match w {
                    ".version" => {
                        self.pos += 1;
                        match self.next() {
                            Some(Tok::Num(n)) => match version_number(n) {
                                Some(v) => ast.version = v,
                                None => return Err(err(line, ".version", format!("bad version {n}"))),
                            },
                            t => return Err(err(line, ".version", format!("bad version {t:?}"))),
                        }
                    }
                    ".target" => {
                        self.pos += 1;
                        loop {
                            ast.targets.push(self.word(".target")?);
                            if self.is_punct(',') {
                                self.pos += 1;
                            } else {
                                break;
                            }
                        }
                    }
                    ".address_size" => {
                        self.pos += 1;
                        let line = self.line();
                        ast.address_size = match self.number(".address_size")? {
                            32 => 32,
                            64 => 64,
                            n => return Err(err(line, ".address_size", format!("address size {n} is not 32 or 64"))),
                        };
                    }
                    ".file" | ".loc" | ".section" => {
                        self.pos += 1;
                        if w == ".section" {
                            // DWARF sections: skip the braces.
                            let mut depth = 0;
                            while let Some(t) = self.next() {
                                if t == Tok::Punct('{') {
                                    depth += 1;
                                } else if t == Tok::Punct('}') {
                                    depth -= 1;
                                    if depth <= 0 {
                                        break;
                                    }
                                }
                            }
                        } else {
                            self.skip_line(line);
                        }
                    }
                    ".pragma" => {
                        self.pos += 1;
                        self.skip_to_semicolon();
                    }
                    ".visible" | ".weak" | ".common" => {
                        self.pos += 1;
                    }
                    ".extern" => {
                        self.pos += 1;
                        linkage_extern = true;
                        continue;
                    }
                    ".entry" | ".func" => {
                        self.pos += 1;
                        let f = self.function(w == ".entry", line)?;
                        ast.funcs.push(f);
                    }
                    _ if Space::from_word(w).is_some() => {
                        let mut v = self.var(line)?;
                        v.is_extern = linkage_extern;
                        self.expect_punct(';', w)?;
                        ast.vars.push(v);
                    }
                    _ => return Err(err(line, w, "unknown directive")),
                },
                Tok::Punct(';') => {
                    self.pos += 1;
                }
                t => return Err(err(line, "", format!("unexpected {t:?}"))),
            }
            linkage_extern = false;
        }
        Ok(ast)
    }

    /// A variable declaration starting at its state space.
    fn var(&mut self, line: u32) -> Result<Var, PtxError> {
        let sw = self.word("declaration")?;
        let space = Space::from_word(&sw).ok_or_else(|| err(line, &sw, "not a state space"))?;
        let mut v = Var {
            space,
            align: 0,
            ty: String::new(),
            vec: 1,
            name: String::new(),
            dims: Vec::new(),
            init: Vec::new(),
            line,
            is_extern: false,
            managed: false,
        };
        loop {
            let w = self.word_ref(&sw)?;
            match w {
                ".align" => {
                    let line = self.line();
                    let a = self.number_in(".align", "alignment", 1..=MAX_ALIGN)?;
                    if a.count_ones() != 1 {
                        return Err(err(line, ".align", format!("alignment {a} is not a power of two")));
                    }
                    v.align = a as u32;
                }
                ".v2" => v.vec = 2,
                ".v4" => v.vec = 4,
                ".v8" => v.vec = 8,
                ".ptr" | ".volatile" => {}
                ".attribute" => {
                    // .attribute(.managed): a __managed__ variable.
                    self.expect_punct('(', &sw)?;
                    while !self.is_punct(')') {
                        match self.next() {
                            Some(Tok::Word(a)) => {
                                if a == ".managed" {
                                    v.managed = true;
                                }
                            }
                            Some(Tok::Punct(',')) => {}
                            t => return Err(err(line, &sw, format!("bad attribute {t:?}"))),
                        }
                    }
                    self.pos += 1;
                }
                _ if w.starts_with(".global")
                    || w.starts_with(".shared")
                    || w.starts_with(".const")
                    || w.starts_with(".local") => {}
                _ if w.starts_with('.') => v.ty = w.trim_start_matches('.').to_string(),
                _ => {
                    v.name = w.to_string();
                    break;
                }
            }
        }
        // .ptr.global.align 8 style attributes come before the name; fine.
        while self.is_punct('[') {
            self.pos += 1;
            if self.is_punct(']') {
                self.pos += 1;
                v.dims.push(None);
            } else {
                let n = self.number_in(&v.name, "array dimension", 0..=MAX_DIM)?;
                self.expect_punct(']', &v.name)?;
                v.dims.push(Some(n as u64));
            }
        }
        if self.is_punct('=') {
            self.pos += 1;
            self.init_items(&mut v.init, &v.name.clone())?;
        }
        Ok(v)
    }

    fn init_items(&mut self, out: &mut Vec<Init>, ctx: &str) -> Result<(), PtxError> {
        if self.is_punct('{') {
            if self.depth >= MAX_DEPTH {
                return Err(err(self.line(), ctx, "initialiser nested too deeply"));
            }
            self.depth += 1;
            self.pos += 1;
            loop {
                if self.is_punct('}') {
                    self.pos += 1;
                    break;
                }
                self.init_items(out, ctx)?;
                if self.is_punct(',') {
                    self.pos += 1;
                }
            }
            self.depth -= 1;
            return Ok(());
        }
        let neg = if self.is_punct('-') {
            self.pos += 1;
            true
        } else {
            false
        };
        match self.next() {
            Some(Tok::Num(n)) => match parse_number(n) {
                Some(Operand::Int(i)) => out.push(Init::Int(if neg { -i } else { i })),
                Some(Operand::Float { value, .. }) => out.push(Init::Float(if neg { -value } else { value })),
                _ => return Err(err(self.line(), ctx, format!("bad initialiser {n}"))),
            },
            Some(Tok::Word(w)) => {
                let (name, inner) = if (w == "generic" || w == "mask") && self.is_punct('(') {
                    self.pos += 1;
                    let n = self.word(ctx)?;
                    self.expect_punct(')', ctx)?;
                    (n, true)
                } else {
                    (w.to_string(), false)
                };
                let _ = inner;
                let mut off = 0;
                if self.is_punct('+') {
                    self.pos += 1;
                    off = self.number_in(ctx, "offset", OFFSETS)? as i64;
                }
                out.push(Init::Sym(name, off));
            }
            t => return Err(err(self.line(), ctx, format!("bad initialiser {t:?}"))),
        }
        Ok(())
    }

    fn param_list(&mut self, ctx: &str) -> Result<Vec<Var>, PtxError> {
        self.expect_punct('(', ctx)?;
        let mut out = Vec::new();
        while !self.is_punct(')') {
            let line = self.line();
            out.push(self.var(line)?);
            if self.is_punct(',') {
                self.pos += 1;
            }
        }
        self.pos += 1;
        Ok(out)
    }

    fn function(&mut self, is_entry: bool, line: u32) -> Result<FuncAst, PtxError> {
        let mut rets = Vec::new();
        if !is_entry && self.is_punct('(') {
            rets = self.param_list(".func")?;
        }
        let name = self.word(if is_entry { ".entry" } else { ".func" })?;
        let mut params = Vec::new();
        if self.is_punct('(') {
            params = self.param_list(&name)?;
        }
        // Performance directives and .noreturn.
        loop {
            match self.peek() {
                Some(Tok::Word(w)) if w.starts_with('.') => {
                    self.pos += 1;
                    while matches!(self.peek(), Some(Tok::Num(_)) | Some(Tok::Punct(','))) {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
        if self.is_punct(';') {
            self.pos += 1;
            return Ok(FuncAst { name, is_entry, params, rets, body: None, line });
        }
        self.expect_punct('{', &name)?;
        let mut body = Vec::new();
        let mut depth = 1;
        while depth > 0 {
            let line = self.line();
            match self.peek() {
                None => return Err(err(line, &name, "unterminated function body")),
                Some(Tok::Punct('{')) => {
                    self.pos += 1;
                    depth += 1;
                    body.push(Stmt::Open);
                }
                Some(Tok::Punct('}')) => {
                    self.pos += 1;
                    depth -= 1;
                    if depth > 0 {
                        body.push(Stmt::Close);
                    }
                }
                Some(Tok::Punct(';')) => self.pos += 1,
                Some(Tok::Punct('@')) => body.push(Stmt::Inst(self.inst(line)?)),
                Some(Tok::Word(w)) => {
                    if self.peek_at(1) == Some(Tok::Punct(':')) && !w.starts_with('.') {
                        self.pos += 2;
                        body.push(Stmt::Label(w.to_string()));
                    } else if w == ".reg" {
                        self.pos += 1;
                        body.push(Stmt::Reg(self.reg_decl(line)?));
                    } else if Space::from_word(w).is_some() {
                        let v = self.var(line)?;
                        self.expect_punct(';', w)?;
                        body.push(Stmt::Var(v));
                    } else if w == ".loc" || w == ".file" {
                        self.pos += 1;
                        self.skip_line(line);
                    } else if w == ".pragma" {
                        self.pos += 1;
                        self.skip_to_semicolon();
                    } else if w.starts_with('.') {
                        return Err(err(line, w, "unsupported directive in a function body"));
                    } else {
                        body.push(Stmt::Inst(self.inst(line)?));
                    }
                }
                Some(t) => return Err(err(line, &name, format!("unexpected {t:?}"))),
            }
        }
        Ok(FuncAst { name, is_entry, params, rets, body: Some(body), line })
    }

    fn reg_decl(&mut self, line: u32) -> Result<RegDecl, PtxError> {
        let mut ty = String::new();
        while let Some(Tok::Word(w)) = self.peek() {
            if w.starts_with('.') {
                if w != ".v2" && w != ".v4" {
                    ty = w.trim_start_matches('.').to_string();
                }
                self.pos += 1;
            } else {
                break;
            }
        }
        let mut names = Vec::new();
        loop {
            let n = self.word(".reg")?;
            let mut count = None;
            if self.is_punct('<') {
                self.pos += 1;
                count = Some(self.number_in(".reg", "count of registers", 0..=MAX_REGS)? as u32);
                self.expect_punct('>', ".reg")?;
            }
            names.push((n, count));
            if self.is_punct(',') {
                self.pos += 1;
            } else {
                break;
            }
        }
        if !self.is_punct(';') {
            return Err(err(line, ".reg", "expected ';'"));
        }
        self.pos += 1;
        let _ = ty;
        Ok(RegDecl { names })
    }

    fn inst(&mut self, line: u32) -> Result<InstAst, PtxError> {
        let mut guard = None;
        if self.is_punct('@') {
            self.pos += 1;
            let neg = if self.is_punct('!') {
                self.pos += 1;
                true
            } else {
                false
            };
            guard = Some((self.word("@")?, neg));
        }
        let name = self.word("instruction")?;
        let mut operands = Vec::new();
        if crate::instructions::not_run(&name) {
            // Refused when decoded, naming it: its operands (texture and tensor forms have
            // their own syntax) are skipped, not parsed.
            while !self.is_punct(';') {
                if self.peek().is_none() {
                    return Err(err(line, &name, "expected ';'"));
                }
                self.pos += 1;
            }
        } else if !self.is_punct(';') {
            loop {
                operands.push(self.operand(&name)?);
                if self.is_punct(',') {
                    self.pos += 1;
                } else {
                    break;
                }
            }
        }
        if !self.is_punct(';') {
            return Err(err(line, &name, format!("expected ';', found {:?}", self.peek())));
        }
        self.pos += 1;
        Ok(InstAst { line, guard, name, operands })
    }

    fn operand(&mut self, ctx: &str) -> Result<Operand, PtxError> {
        if self.depth >= MAX_DEPTH {
            return Err(err(self.line(), ctx, "operand nested too deeply"));
        }
        self.depth += 1;
        let r = self.operand_inner(ctx);
        self.depth -= 1;
        r
    }

    fn operand_inner(&mut self, ctx: &str) -> Result<Operand, PtxError> {
        let line = self.line();
        match self.next() {
            Some(Tok::Punct('[')) => {
                let mut base = None;
                let mut off: i64 = 0;
                loop {
                    match self.next() {
                        Some(Tok::Punct(']')) => break,
                        Some(Tok::Word(w)) => base = Some(w),
                        // `[handle, {coordinates}]` (tex, tld4, suld, sust).
                        Some(Tok::Punct(',')) if off == 0 => {
                            let name = base.take().ok_or_else(|| err(line, ctx, "bad texture operand"))?;
                            let coords = self.operand(ctx)?;
                            if !self.is_punct(']') {
                                return Err(err(line, ctx, "bad texture operand"));
                            }
                            self.pos += 1;
                            return Ok(Operand::List(vec![Operand::Name(name.to_string()), coords]));
                        }
                        Some(Tok::Punct('+')) => {}
                        Some(Tok::Punct('-')) => {
                            let n = self.number_in(ctx, "offset", OFFSETS)?;
                            off = off.wrapping_sub(n as i64);
                        }
                        Some(Tok::Num(n)) => {
                            let v = parse_int(n).ok_or_else(|| err(line, ctx, "bad offset"))?;
                            if !OFFSETS.contains(&v) {
                                return Err(err(line, ctx, format!("offset {v} out of range")));
                            }
                            off = off.wrapping_add(v as i64)
                        }
                        t => return Err(err(line, ctx, format!("bad address: {t:?}"))),
                    }
                }
                Ok(Operand::Addr(base.map(str::to_string), off))
            }
            Some(Tok::Punct('{')) => {
                let mut v = Vec::new();
                while !self.is_punct('}') {
                    v.push(self.operand(ctx)?);
                    if self.is_punct(',') {
                        self.pos += 1;
                    }
                }
                self.pos += 1;
                Ok(Operand::Vector(v))
            }
            Some(Tok::Punct('(')) => {
                let mut v = Vec::new();
                while !self.is_punct(')') {
                    v.push(self.operand(ctx)?);
                    if self.is_punct(',') {
                        self.pos += 1;
                    }
                }
                self.pos += 1;
                Ok(Operand::List(v))
            }
            Some(Tok::Punct('!')) => Ok(Operand::Not(self.word(ctx)?)),
            Some(Tok::Punct('-')) => match self.next() {
                Some(Tok::Num(n)) => match parse_number(n) {
                    Some(Operand::Int(i)) => Ok(Operand::Int(-i)),
                    Some(Operand::Float { value, f32_bits }) => {
                        Ok(Operand::Float { value: -value, f32_bits: f32_bits.map(|b| b ^ 0x8000_0000) })
                    }
                    _ => Err(err(line, ctx, format!("bad number {n}"))),
                },
                Some(Tok::Word(w)) => Ok(Operand::Neg(w.to_string())),
                t => Err(err(line, ctx, format!("bad operand -{t:?}"))),
            },
            Some(Tok::Num(n)) => parse_number(n).ok_or_else(|| err(line, ctx, format!("bad number {n}"))),
            Some(Tok::Word(w)) => {
                if w == "_" {
                    return Ok(Operand::Sink);
                }
                if self.is_punct('|') {
                    // d|p: a destination with a predicate (shfl, setp, match)
                    self.pos += 1;
                    let p = self.word(ctx)?;
                    return Ok(Operand::Vector(vec![Operand::Name(w.to_string()), Operand::Name(p)]));
                }
                if self.is_punct('+') && matches!(self.peek_at(1), Some(Tok::Num(_))) {
                    self.pos += 1;
                    let n = self.number_in(ctx, "offset", OFFSETS)?;
                    return Ok(Operand::SymOff(w.to_string(), n as i64));
                }
                Ok(Operand::Name(w.to_string()))
            }
            t => Err(err(line, ctx, format!("bad operand {t:?}"))),
        }
    }
}

/// Parses PTX text.
pub(crate) fn parse(text: &str) -> Result<Ast, PtxError> {
    let toks = lex(text)?;
    let mut p = Parser { toks, pos: 0, depth: 0 };
    let ast = p.parse()?;
    if ast.version == (0, 0) {
        return Err(err(1, ".version", "no .version directive"));
    }
    Ok(ast)
}
