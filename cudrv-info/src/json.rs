//! A minimal JSON value and writer (no serde): enough for cudrv-info's report.

use std::fmt::Write;

/// A JSON value. Object keys keep their order.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, already written as JSON text.
    Number(String),
    /// A string (escaped when written).
    Str(String),
    /// An array.
    Array(Vec<Json>),
    /// An object, keys in the order given.
    Object(Vec<(&'static str, Json)>),
}

impl Json {
    /// An integer.
    pub fn int(n: impl Into<i128>) -> Json {
        Json::Number(n.into().to_string())
    }

    /// A `usize` count (saturating, which no count here comes near).
    pub fn count(n: usize) -> Json {
        Json::int(u64::try_from(n).unwrap_or(u64::MAX))
    }

    /// A number with `decimals` decimals; `null` if it is not finite.
    pub fn float(x: f64, decimals: usize) -> Json {
        if x.is_finite() {
            Json::Number(format!("{x:.decimals$}"))
        } else {
            Json::Null
        }
    }

    /// A string.
    pub fn str(s: impl Into<String>) -> Json {
        Json::Str(s.into())
    }

    /// A string, or `null`.
    pub fn opt_str(s: Option<impl Into<String>>) -> Json {
        s.map_or(Json::Null, Json::str)
    }

    fn is_scalar(&self) -> bool {
        !matches!(self, Json::Array(_) | Json::Object(_))
    }

    /// The value as JSON text: containers of scalars on one line, others one member
    /// a line, indented by two spaces a level. No trailing newline.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, 0);
        out
    }

    fn write(&self, out: &mut String, level: usize) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Number(n) => out.push_str(n),
            Json::Str(s) => escape_into(out, s),
            Json::Array(items) => {
                let members = items.iter().map(|v| (None, v));
                write_container(out, level, ('[', ']'), members, items.len());
            }
            Json::Object(fields) => {
                let members = fields.iter().map(|(k, v)| (Some(*k), v));
                write_container(out, level, ('{', '}'), members, fields.len());
            }
        }
    }
}

/// Writes an array or object; inline if every member is a scalar.
fn write_container<'a>(
    out: &mut String,
    level: usize,
    (open, close): (char, char),
    members: impl Iterator<Item = (Option<&'static str>, &'a Json)> + Clone,
    len: usize,
) {
    let inline = members.clone().all(|(_, v)| v.is_scalar());
    out.push(open);
    for (i, (key, value)) in members.enumerate() {
        if i > 0 {
            out.push(',');
            if inline {
                out.push(' ');
            }
        }
        if !inline {
            out.push('\n');
            indent(out, level + 1);
        }
        if let Some(k) = key {
            escape_into(out, k);
            out.push_str(": ");
        }
        value.write(out, level + 1);
    }
    if !inline && len > 0 {
        out.push('\n');
        indent(out, level);
    }
    out.push(close);
}

fn indent(out: &mut String, level: usize) {
    out.extend(std::iter::repeat_n(' ', level * 2));
}

/// Writes `s` as a quoted JSON string.
pub fn escape_into(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                // Writing to a String cannot fail.
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_strings() {
        let mut out = String::new();
        escape_into(&mut out, "a\"b\\c\nd\u{1}é");
        assert_eq!(out, r#""a\"b\\c\nd\u0001é""#);
    }

    #[test]
    fn writes_nested_values() {
        let v = Json::Object(vec![
            ("a", Json::int(1u8)),
            ("b", Json::Array(vec![Json::Null, Json::Bool(true)])),
            ("c", Json::Array(vec![])),
            ("d", Json::Object(vec![("x", Json::float(1.5, 2))])),
            ("e", Json::Array(vec![Json::Object(vec![("y", Json::str("z"))])])),
        ]);
        assert_eq!(
            v.to_text(),
            "{\n  \"a\": 1,\n  \"b\": [null, true],\n  \"c\": [],\n  \"d\": {\"x\": 1.50},\n  \
             \"e\": [\n    {\"y\": \"z\"}\n  ]\n}"
        );
        assert_eq!(Json::float(f64::NAN, 1), Json::Null);
    }
}
