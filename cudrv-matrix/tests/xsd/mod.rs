//! Checks XML documents against an XML Schema (XSD 1.0) file, for the constructs that
//! tests/junit.xsd uses: global and local element declarations (by type name or with an
//! inline complex type, `minOccurs`/`maxOccurs`), `xs:sequence` and `xs:choice` (nested,
//! with their own occurrences), complex types with element-only, empty or simple content
//! (`xs:simpleContent` extending a simple type with attributes), attributes (`use`
//! optional or required, undeclared ones refused), and simple types restricting
//! `xs:string` (`minLength`) or `xs:decimal` (`minInclusive`), over the built-in types
//! `xs:string`, `xs:decimal`, `xs:nonNegativeInteger` and `xs:dateTime`.
//!
//! Any other construct in the schema (an attribute of a schema element or a facet that is
//! not listed above, a target namespace, `xs:all`, `xs:group`, ...) makes [`Schema::load`]
//! fail: a rule added to the schema is never skipped silently. The XML is parsed with
//! roxmltree; a document is checked whole, every error reported with its line.

use std::collections::HashMap;

use roxmltree::{Document, Node};

/// The XML Schema namespace.
const XS: &str = "http://www.w3.org/2001/XMLSchema";

/// The built-in simple types the checker knows.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Builtin {
    String,
    Decimal,
    NonNegativeInteger,
    DateTime,
}

impl Builtin {
    fn from_name(name: &str) -> Option<Builtin> {
        Some(match name {
            "string" => Builtin::String,
            "decimal" => Builtin::Decimal,
            "nonNegativeInteger" => Builtin::NonNegativeInteger,
            "dateTime" => Builtin::DateTime,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Builtin::String => "xs:string",
            Builtin::Decimal => "xs:decimal",
            Builtin::NonNegativeInteger => "xs:nonNegativeInteger",
            Builtin::DateTime => "xs:dateTime",
        }
    }

    /// Checks `value`'s lexical form; `Err` says why it is not one.
    fn check(self, value: &str) -> Result<(), String> {
        // Every type but xs:string collapses whitespace: leading and trailing blanks are
        // not part of the value (and blanks inside make it invalid below).
        let collapsed = value.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n'));
        match self {
            Builtin::String => Ok(()),
            Builtin::Decimal => Decimal::parse(collapsed).map(|_| ()),
            Builtin::NonNegativeInteger => {
                let d = Decimal::parse(collapsed)?;
                if collapsed.contains('.') {
                    Err("not an integer".into())
                } else if d.negative && !d.is_zero() {
                    Err("negative".into())
                } else {
                    Ok(())
                }
            }
            Builtin::DateTime => check_date_time(collapsed),
        }
    }
}

/// An xs:decimal value: sign, integer digits without leading zeros, fraction digits
/// without trailing zeros.
#[derive(Debug)]
struct Decimal {
    negative: bool,
    int: String,
    frac: String,
}

impl Decimal {
    /// `(+|-)?([0-9]+(.[0-9]*)?|.[0-9]+)`: no exponent, no blanks.
    fn parse(text: &str) -> Result<Decimal, String> {
        let (negative, rest) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.strip_prefix('+').unwrap_or(text)),
        };
        let (int, frac) = rest.split_once('.').unwrap_or((rest, ""));
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if (int.is_empty() && frac.is_empty()) || !digits(int) || !digits(frac) {
            return Err("not a decimal number".into());
        }
        Ok(Decimal {
            negative,
            int: int.trim_start_matches('0').to_string(),
            frac: frac.trim_end_matches('0').to_string(),
        })
    }

    fn is_zero(&self) -> bool {
        self.int.is_empty() && self.frac.is_empty()
    }

    /// Compares two decimals by value.
    fn cmp(&self, other: &Decimal) -> std::cmp::Ordering {
        let sign = |d: &Decimal| {
            if d.is_zero() {
                0
            } else if d.negative {
                -1
            } else {
                1
            }
        };
        let (a, b) = (sign(self), sign(other));
        if a != b || a == 0 {
            return a.cmp(&b);
        }
        let magnitude = self
            .int
            .len()
            .cmp(&other.int.len())
            .then_with(|| self.int.cmp(&other.int))
            .then_with(|| self.frac.cmp(&other.frac));
        if a < 0 {
            magnitude.reverse()
        } else {
            magnitude
        }
    }
}

/// `-?YYYY-MM-DDThh:mm:ss(.s+)?(Z|(+|-)hh:mm)?`, each field in range (the day in its
/// month, 24:00:00 only as itself, a year of more than four digits without a leading 0).
fn check_date_time(text: &str) -> Result<(), String> {
    let bad = |why: &str| Err(format!("not an xs:dateTime: {why}"));
    let body = text.strip_prefix('-').unwrap_or(text);
    let Some((date, time)) = body.split_once('T') else { return bad("no 'T' between date and time") };
    let parts: Vec<&str> = date.split('-').collect();
    let [year, month, day] = parts[..] else { return bad("the date is not YYYY-MM-DD") };
    let number = |s: &str, len: usize| {
        (s.len() == len && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse::<u32>().ok()).flatten()
    };
    if year.len() < 4 || !year.bytes().all(|b| b.is_ascii_digit()) || (year.len() > 4 && year.starts_with('0')) {
        return bad("the year is not four or more digits");
    }
    let y: u64 = year.parse().unwrap_or(1);
    if y == 0 {
        return bad("year 0000");
    }
    let (Some(m), Some(d)) = (number(month, 2), number(day, 2)) else {
        return bad("the month or day is not two digits");
    };
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return bad("the month is not 01 to 12"),
    };
    if d == 0 || d > days {
        return bad("no such day in that month");
    }
    // The time zone: Z, or +hh:mm / -hh:mm (up to 14:00).
    let (clock, zone) = if let Some(c) = time.strip_suffix('Z') {
        (c, None)
    } else if let Some((c, z)) = time.len().checked_sub(6).and_then(|i| Some((time.get(..i)?, time.get(i..)?))) {
        match z.strip_prefix(['+', '-']) {
            Some(zone) if !c.is_empty() => (c, Some(zone)),
            _ => (time, None),
        }
    } else {
        (time, None)
    };
    if let Some(zone) = zone {
        let Some((h, mi)) = zone.split_once(':') else { return bad("the time zone is not hh:mm") };
        match (number(h, 2), number(mi, 2)) {
            (Some(h), Some(mi)) if mi < 60 && (h < 14 || (h == 14 && mi == 0)) => {}
            _ => return bad("the time zone is out of range"),
        }
    }
    let (hms, fraction) = clock.split_once('.').unwrap_or((clock, ""));
    if clock.contains('.') && (fraction.is_empty() || !fraction.bytes().all(|b| b.is_ascii_digit())) {
        return bad("the fraction of a second is not digits");
    }
    let parts: Vec<&str> = hms.split(':').collect();
    let [h, mi, s] = parts[..] else { return bad("the time is not hh:mm:ss") };
    let (Some(h), Some(mi), Some(s)) = (number(h, 2), number(mi, 2), number(s, 2)) else {
        return bad("the hour, minute or second is not two digits");
    };
    let midnight = h == 24 && mi == 0 && s == 0 && fraction.bytes().all(|b| b == b'0');
    if !(midnight || (h < 24 && mi < 60 && s < 60)) {
        return bad("the time is out of range");
    }
    Ok(())
}

/// A constraint of a simple type restriction.
#[derive(Debug)]
enum Facet {
    MinInclusive(Decimal),
    MinLength(usize),
}

/// A simple type: a built-in one, or a restriction of one.
#[derive(Debug)]
struct SimpleType {
    name: String,
    base: Builtin,
    facets: Vec<Facet>,
}

impl SimpleType {
    fn builtin(base: Builtin) -> SimpleType {
        SimpleType { name: base.name().to_string(), base, facets: Vec::new() }
    }

    /// Checks `value`; `Err` says why it is not one of this type.
    fn check(&self, value: &str) -> Result<(), String> {
        self.base.check(value).map_err(|why| format!("not a valid {} ({why})", self.name))?;
        for facet in &self.facets {
            match facet {
                Facet::MinInclusive(min) => {
                    let collapsed = value.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n'));
                    let v = Decimal::parse(collapsed)?;
                    if v.cmp(min) == std::cmp::Ordering::Less {
                        return Err(format!("not a valid {}: less than its minimum", self.name));
                    }
                }
                Facet::MinLength(n) if value.chars().count() < *n => {
                    return Err(format!("not a valid {}: shorter than {n} characters", self.name));
                }
                Facet::MinLength(_) => {}
            }
        }
        Ok(())
    }
}

/// Where a type is found: a built-in or named simple type, a named complex type, or one
/// declared inline.
#[derive(Debug)]
enum TypeRef {
    Simple(String),
    Builtin(Builtin),
    Complex(String),
    Inline(Box<ComplexType>),
}

#[derive(Debug)]
struct ElementDecl {
    name: String,
    ty: TypeRef,
}

#[derive(Debug)]
enum Term {
    Element(ElementDecl),
    Sequence(Vec<Particle>),
    Choice(Vec<Particle>),
}

/// A term with its occurrences (`max`: `None` for unbounded).
#[derive(Debug)]
struct Particle {
    term: Term,
    min: u32,
    max: Option<u32>,
}

#[derive(Debug)]
enum Content {
    /// No children and no text (a complex type with attributes only).
    Empty,
    /// Text of a simple type, no child elements.
    Simple(TypeRef),
    /// Child elements as the particle says; no text but blanks.
    Elements(Particle),
}

#[derive(Debug)]
struct AttributeDecl {
    name: String,
    ty: TypeRef,
    required: bool,
}

#[derive(Debug)]
struct ComplexType {
    content: Content,
    attributes: Vec<AttributeDecl>,
}

/// A schema, loaded from its text.
pub struct Schema {
    roots: Vec<ElementDecl>,
    simple: HashMap<String, SimpleType>,
    complex: HashMap<String, ComplexType>,
}

/// `node` in an error: `<name> at line L`.
fn at(node: Node) -> String {
    let pos = node.document().text_pos_at(node.range().start);
    format!("<{}> at line {}, column {}", node.tag_name().name(), pos.row, pos.col)
}

/// The schema element's children that are elements; text other than blanks is an error.
fn schema_children<'a, 'i>(node: Node<'a, 'i>) -> Result<Vec<Node<'a, 'i>>, String> {
    let mut out = Vec::new();
    for child in node.children() {
        if child.is_element() {
            if child.tag_name().namespace() != Some(XS) {
                return Err(format!("{}: not an XML Schema element", at(child)));
            }
            out.push(child);
        } else if child.is_text() && !child.text().unwrap_or_default().trim().is_empty() {
            return Err(format!("{}: text in a schema element", at(node)));
        }
    }
    Ok(out)
}

/// Refuses an attribute of a schema element that the checker does not implement.
fn only_attributes(node: Node, allowed: &[&str]) -> Result<(), String> {
    for a in node.attributes() {
        if a.namespace().is_some() || !allowed.contains(&a.name()) {
            return Err(format!(
                "{}: attribute '{}' is not implemented by this checker (it knows {allowed:?})",
                at(node),
                a.name()
            ));
        }
    }
    Ok(())
}

fn required<'a>(node: Node<'a, '_>, name: &str) -> Result<&'a str, String> {
    node.attribute(name).ok_or_else(|| format!("{}: no '{name}' attribute", at(node)))
}

fn occurs(node: Node, name: &str) -> Result<Option<u32>, String> {
    match node.attribute(name) {
        None => Ok(Some(1)),
        Some("unbounded") if name == "maxOccurs" => Ok(None),
        Some(v) => v.parse().map(Some).map_err(|_| format!("{}: {name}={v:?}", at(node))),
    }
}

impl Schema {
    /// Loads the schema from its text. `Err`: not XML, or a construct the checker does
    /// not implement (so cannot enforce).
    pub fn load(text: &str) -> Result<Schema, String> {
        let doc = Document::parse(text).map_err(|e| format!("the schema is not XML: {e}"))?;
        let root = doc.root_element();
        if root.tag_name().namespace() != Some(XS) || root.tag_name().name() != "schema" {
            return Err("the root element is not xs:schema".into());
        }
        only_attributes(root, &["elementFormDefault"])?;
        let mut schema = Schema { roots: Vec::new(), simple: HashMap::new(), complex: HashMap::new() };
        for node in schema_children(root)? {
            match node.tag_name().name() {
                "simpleType" => {
                    only_attributes(node, &["name"])?;
                    let name = required(node, "name")?.to_string();
                    let ty = simple_type(node, name.clone())?;
                    schema.simple.insert(name, ty);
                }
                "complexType" => {
                    only_attributes(node, &["name"])?;
                    let name = required(node, "name")?.to_string();
                    schema.complex.insert(name, complex_type(node)?);
                }
                "element" => {
                    only_attributes(node, &["name", "type"])?;
                    schema.roots.push(element_decl(node)?);
                }
                other => return Err(format!("{}: xs:{other} is not implemented by this checker", at(node))),
            }
        }
        schema.resolve();
        schema.check_references()?;
        Ok(schema)
    }

    /// Every type named is defined, and attributes and simple content have simple types.
    fn check_references(&self) -> Result<(), String> {
        /// Each type reference, and whether it must be a simple type.
        type Refs<'s> = Vec<(&'s TypeRef, bool)>;
        fn in_particle<'s>(p: &'s Particle, out: &mut Refs<'s>) {
            match &p.term {
                Term::Element(e) => in_type(&e.ty, out),
                Term::Sequence(items) | Term::Choice(items) => items.iter().for_each(|i| in_particle(i, out)),
            }
        }
        fn in_complex<'s>(c: &'s ComplexType, out: &mut Refs<'s>) {
            out.extend(c.attributes.iter().map(|a| (&a.ty, true)));
            match &c.content {
                Content::Empty => {}
                Content::Simple(t) => out.push((t, true)),
                Content::Elements(p) => in_particle(p, out),
            }
        }
        fn in_type<'s>(t: &'s TypeRef, out: &mut Refs<'s>) {
            match t {
                TypeRef::Inline(c) => in_complex(c, out),
                other => out.push((other, false)),
            }
        }
        let mut refs = Vec::new();
        self.roots.iter().for_each(|e| in_type(&e.ty, &mut refs));
        self.complex.values().for_each(|c| in_complex(c, &mut refs));
        for (r, simple_only) in refs {
            let ok = match r {
                TypeRef::Simple(n) => self.simple.contains_key(n),
                TypeRef::Complex(n) => !simple_only && self.complex.contains_key(n),
                TypeRef::Builtin(_) => true,
                TypeRef::Inline(_) => !simple_only,
            };
            if !ok {
                let what = if simple_only { "a simple type" } else { "a type" };
                return Err(format!("the schema names {r:?} where {what} is needed, and none is defined"));
            }
        }
        Ok(())
    }

    /// Checks `xml` against the schema: `Err` lists every error found, each naming the
    /// element (and line) and what is wrong.
    pub fn validate(&self, xml: &str) -> Result<(), Vec<String>> {
        let doc = Document::parse(xml).map_err(|e| vec![format!("not well-formed XML: {e}")])?;
        let root = doc.root_element();
        let mut errors = Vec::new();
        match self.roots.iter().find(|d| d.name == root.tag_name().name()) {
            Some(decl) => self.check_element(root, &decl.ty, &mut errors),
            None => {
                let declared: Vec<String> = self.roots.iter().map(|d| format!("<{}>", d.name)).collect();
                errors.push(format!("{}: not a root element the schema declares ({})", at(root), declared.join(", ")));
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// The simple type `t` names, if it is one.
    fn simple_of<'s>(&'s self, t: &TypeRef, builtin: &'s mut Option<SimpleType>) -> Option<&'s SimpleType> {
        match t {
            TypeRef::Builtin(b) => Some(&*builtin.insert(SimpleType::builtin(*b))),
            TypeRef::Simple(n) => self.simple.get(n),
            TypeRef::Complex(_) | TypeRef::Inline(_) => None,
        }
    }

    fn check_element(&self, node: Node, ty: &TypeRef, errors: &mut Vec<String>) {
        if let Some(ns) = node.tag_name().namespace() {
            errors.push(format!("{}: in namespace {ns}, the schema's elements are in none", at(node)));
        }
        let mut scratch = None;
        if let Some(simple) = self.simple_of(ty, &mut scratch) {
            // A simple type: no attributes, text only.
            for a in node.attributes() {
                errors.push(format!("{}: attribute '{}' is not allowed", at(node), a.name()));
            }
            self.check_text(node, simple, errors);
            return;
        }
        let complex = match ty {
            TypeRef::Complex(n) => match self.complex.get(n) {
                Some(c) => c,
                None => return,
            },
            TypeRef::Inline(c) => c,
            TypeRef::Simple(_) | TypeRef::Builtin(_) => return,
        };
        for a in node.attributes() {
            let decl = complex.attributes.iter().find(|d| a.namespace().is_none() && d.name == a.name());
            let Some(decl) = decl else {
                errors.push(format!("{}: attribute '{}' is not allowed", at(node), a.name()));
                continue;
            };
            let mut scratch = None;
            if let Some(simple) = self.simple_of(&decl.ty, &mut scratch) {
                if let Err(why) = simple.check(a.value()) {
                    errors.push(format!("{}: attribute '{}' = {:?} is {why}", at(node), a.name(), a.value()));
                }
            }
        }
        for decl in complex.attributes.iter().filter(|d| d.required) {
            if node.attribute(decl.name.as_str()).is_none() {
                errors.push(format!("{}: attribute '{}' is required but missing", at(node), decl.name));
            }
        }
        let kids: Vec<Node> = node.children().filter(Node::is_element).collect();
        match &complex.content {
            Content::Empty => {
                if let Some(kid) = kids.first() {
                    errors.push(format!(
                        "{}: no child element is allowed, found <{}>",
                        at(node),
                        kid.tag_name().name()
                    ));
                }
                self.no_text(node, errors);
            }
            Content::Simple(t) => {
                if let Some(kid) = kids.first() {
                    errors.push(format!("{}: text only, found child element <{}>", at(node), kid.tag_name().name()));
                }
                let mut scratch = None;
                if let Some(simple) = self.simple_of(t, &mut scratch) {
                    self.check_text(node, simple, errors);
                }
            }
            Content::Elements(particle) => {
                self.no_text(node, errors);
                let mut matched = Vec::new();
                match take(particle, &kids, 0, &mut matched) {
                    Err(expected) => {
                        let found = match kids.get(matched.last().map_or(0, |(i, _)| i + 1)) {
                            Some(k) => format!("<{}>", k.tag_name().name()),
                            None => "the end of the element".to_string(),
                        };
                        errors.push(format!("{}: missing child element: expected {expected}, found {found}", at(node)));
                    }
                    Ok(end) => {
                        if let Some(extra) = kids.get(end) {
                            errors.push(format!(
                                "{}: child element <{}> is not expected here",
                                at(node),
                                extra.tag_name().name()
                            ));
                        }
                    }
                }
                for (i, decl) in matched {
                    if let Some(kid) = kids.get(i) {
                        self.check_element(*kid, &decl.ty, errors);
                    }
                }
            }
        }
    }

    /// The element's text, checked against `simple`.
    fn check_text(&self, node: Node, simple: &SimpleType, errors: &mut Vec<String>) {
        let text: String = node.children().filter(Node::is_text).filter_map(|t| t.text()).collect();
        if let Err(why) = simple.check(&text) {
            errors.push(format!("{}: its text {text:?} is {why}", at(node)));
        }
    }

    /// Element-only or empty content: text other than blanks is an error.
    fn no_text(&self, node: Node, errors: &mut Vec<String>) {
        let text: String = node.children().filter(Node::is_text).filter_map(|t| t.text()).collect();
        if !text.trim().is_empty() {
            errors.push(format!("{}: text {:?} is not allowed here (child elements only)", at(node), text.trim()));
        }
    }
}

/// Matches `p` against `kids[at..]` greedily (the schema's particles are deterministic, as
/// XML Schema requires), recording each matched child's declaration. Returns where it
/// stopped, or what was expected where its minimum was not met.
fn take<'s>(
    p: &'s Particle,
    kids: &[Node],
    at: usize,
    out: &mut Vec<(usize, &'s ElementDecl)>,
) -> Result<usize, String> {
    let (mut count, mut pos) = (0u32, at);
    while p.max.is_none_or(|max| count < max) {
        let mut trial = Vec::new();
        match take_term(&p.term, kids, pos, &mut trial) {
            Ok(next) if next > pos => {
                out.extend(trial);
                pos = next;
                count += 1;
            }
            // It matches nothing: as many empty occurrences as its minimum needs.
            Ok(_) => return Ok(pos),
            Err(expected) if count < p.min => {
                out.extend(trial);
                return Err(expected);
            }
            Err(_) => break,
        }
    }
    Ok(pos)
}

fn take_term<'s>(
    term: &'s Term,
    kids: &[Node],
    at: usize,
    out: &mut Vec<(usize, &'s ElementDecl)>,
) -> Result<usize, String> {
    match term {
        Term::Element(decl) => match kids.get(at) {
            Some(kid) if kid.tag_name().name() == decl.name => {
                out.push((at, decl));
                Ok(at + 1)
            }
            _ => Err(format!("<{}>", decl.name)),
        },
        Term::Sequence(items) => {
            let mut pos = at;
            for item in items {
                pos = take(item, kids, pos, out)?;
            }
            Ok(pos)
        }
        Term::Choice(items) => {
            let mut empty = false;
            let mut expected = Vec::new();
            for item in items {
                let mut trial = Vec::new();
                match take(item, kids, at, &mut trial) {
                    Ok(next) if next > at => {
                        out.extend(trial);
                        return Ok(next);
                    }
                    Ok(_) => empty = true,
                    Err(e) => expected.push(e),
                }
            }
            if empty {
                Ok(at)
            } else {
                Err(format!("one of {}", expected.join(", ")))
            }
        }
    }
}

/// The type `reference` (a QName attribute of `node`) names.
fn type_ref(node: Node, reference: &str) -> Result<TypeRef, String> {
    let (prefix, local) = match reference.split_once(':') {
        Some((p, l)) => (Some(p), l),
        None => (None, reference),
    };
    match node.lookup_namespace_uri(prefix) {
        Some(XS) => match Builtin::from_name(local) {
            Some(b) => Ok(TypeRef::Builtin(b)),
            None => Err(format!("{}: the built-in type {reference} is not implemented by this checker", at(node))),
        },
        // No target namespace: the schema's own types are in none.
        None => Ok(TypeRef::Complex(local.to_string())),
        Some(other) => Err(format!("{}: type {reference} is in namespace {other}", at(node))),
    }
}

/// A named `xs:simpleType`: a restriction of a built-in type by facets.
fn simple_type(node: Node, name: String) -> Result<SimpleType, String> {
    let [restriction] = schema_children(node)?[..] else {
        return Err(format!("{}: expected one xs:restriction", at(node)));
    };
    if restriction.tag_name().name() != "restriction" {
        return Err(format!("{}: only xs:restriction is implemented by this checker", at(restriction)));
    }
    only_attributes(restriction, &["base"])?;
    let base = match type_ref(restriction, required(restriction, "base")?)? {
        TypeRef::Builtin(b) => b,
        _ => return Err(format!("{}: only built-in bases are implemented by this checker", at(restriction))),
    };
    let mut facets = Vec::new();
    for facet in schema_children(restriction)? {
        only_attributes(facet, &["value"])?;
        let value = required(facet, "value")?;
        facets.push(match (facet.tag_name().name(), base) {
            ("minInclusive", Builtin::Decimal | Builtin::NonNegativeInteger) => {
                Facet::MinInclusive(Decimal::parse(value).map_err(|e| format!("{}: {e}", at(facet)))?)
            }
            ("minLength", Builtin::String) => {
                Facet::MinLength(value.parse().map_err(|_| format!("{}: minLength {value:?}", at(facet)))?)
            }
            (other, _) => {
                return Err(format!(
                    "{}: the facet xs:{other} on {} is not implemented by this checker",
                    at(facet),
                    base.name()
                ))
            }
        });
    }
    Ok(SimpleType { name, base, facets })
}

fn complex_type(node: Node) -> Result<ComplexType, String> {
    let mut content = Content::Empty;
    let mut attributes = Vec::new();
    for (i, child) in schema_children(node)?.into_iter().enumerate() {
        match child.tag_name().name() {
            "sequence" | "choice" if i == 0 => content = Content::Elements(particle(child)?),
            "simpleContent" if i == 0 => {
                only_attributes(child, &[])?;
                let [extension] = schema_children(child)?[..] else {
                    return Err(format!("{}: expected one xs:extension", at(child)));
                };
                if extension.tag_name().name() != "extension" {
                    return Err(format!("{}: only xs:extension is implemented by this checker", at(extension)));
                }
                only_attributes(extension, &["base"])?;
                content = Content::Simple(type_ref(extension, required(extension, "base")?)?);
                for a in schema_children(extension)? {
                    attributes.push(attribute(a)?);
                }
            }
            "attribute" => attributes.push(attribute(child)?),
            other => return Err(format!("{}: xs:{other} here is not implemented by this checker", at(child))),
        }
    }
    Ok(ComplexType { content, attributes })
}

fn attribute(node: Node) -> Result<AttributeDecl, String> {
    if node.tag_name().name() != "attribute" {
        return Err(format!("{}: expected xs:attribute", at(node)));
    }
    only_attributes(node, &["name", "type", "use"])?;
    if !schema_children(node)?.is_empty() {
        return Err(format!("{}: an inline attribute type is not implemented by this checker", at(node)));
    }
    let required = match node.attribute("use") {
        None | Some("optional") => false,
        Some("required") => true,
        Some(other) => return Err(format!("{}: use={other:?} is not implemented by this checker", at(node))),
    };
    let ty = match node.attribute("type") {
        Some(t) => type_ref(node, t)?,
        None => TypeRef::Builtin(Builtin::String),
    };
    Ok(AttributeDecl { name: required_name(node)?, ty, required })
}

fn required_name(node: Node) -> Result<String, String> {
    required(node, "name").map(str::to_string)
}

/// An `xs:element` (local or global): its name and its type, by name or inline.
fn element_decl(node: Node) -> Result<ElementDecl, String> {
    let inline = schema_children(node)?;
    let ty = match (node.attribute("type"), &inline[..]) {
        (Some(t), []) => type_ref(node, t)?,
        (None, [c]) if c.tag_name().name() == "complexType" => {
            only_attributes(*c, &[])?;
            TypeRef::Inline(Box::new(complex_type(*c)?))
        }
        _ => return Err(format!("{}: expected a type= or one inline xs:complexType", at(node))),
    };
    Ok(ElementDecl { name: required_name(node)?, ty })
}

/// An `xs:element`, `xs:sequence` or `xs:choice` with its occurrences.
fn particle(node: Node) -> Result<Particle, String> {
    let (min, max) = (occurs(node, "minOccurs")?.unwrap_or(1), occurs(node, "maxOccurs")?);
    let term = match node.tag_name().name() {
        "element" => {
            only_attributes(node, &["name", "type", "minOccurs", "maxOccurs"])?;
            Term::Element(element_decl(node)?)
        }
        kind @ ("sequence" | "choice") => {
            only_attributes(node, &["minOccurs", "maxOccurs"])?;
            let items = schema_children(node)?.into_iter().map(particle).collect::<Result<Vec<_>, _>>()?;
            if kind == "sequence" {
                Term::Sequence(items)
            } else {
                Term::Choice(items)
            }
        }
        other => return Err(format!("{}: xs:{other} is not implemented by this checker", at(node))),
    };
    Ok(Particle { term, min, max })
}

impl Schema {
    /// Named types: a name that is a simple type's refers to it (`type_ref` cannot tell
    /// them apart while the schema is read, types may be used before they are defined).
    fn resolve(&mut self) {
        fn fix(t: &mut TypeRef, simple: &HashMap<String, SimpleType>) {
            match t {
                TypeRef::Complex(n) if simple.contains_key(n.as_str()) => *t = TypeRef::Simple(std::mem::take(n)),
                TypeRef::Inline(c) => fix_complex(c, simple),
                _ => {}
            }
        }
        fn fix_particle(p: &mut Particle, simple: &HashMap<String, SimpleType>) {
            match &mut p.term {
                Term::Element(e) => fix(&mut e.ty, simple),
                Term::Sequence(items) | Term::Choice(items) => items.iter_mut().for_each(|i| fix_particle(i, simple)),
            }
        }
        fn fix_complex(c: &mut ComplexType, simple: &HashMap<String, SimpleType>) {
            c.attributes.iter_mut().for_each(|a| fix(&mut a.ty, simple));
            match &mut c.content {
                Content::Empty => {}
                Content::Simple(t) => fix(t, simple),
                Content::Elements(p) => fix_particle(p, simple),
            }
        }
        let simple = &self.simple;
        self.roots.iter_mut().for_each(|e| fix(&mut e.ty, simple));
        self.complex.values_mut().for_each(|c| fix_complex(c, simple));
    }
}
