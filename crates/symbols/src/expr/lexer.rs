//! Tokens of gdb's C expression syntax.

use super::ExprError;

/// One token.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// Integer literal: value, `u` suffix, `l` suffix, written in decimal.
    Int(u64, bool, bool, bool),
    /// Floating literal; true for a `f` suffix (a `float`).
    Float(f64, bool),
    /// Character literal.
    Char(u8),
    /// String literal (without the terminating NUL).
    Str(Vec<u8>),
    /// Identifier or keyword.
    Ident(String),
    /// `$…`: the text after the dollar (empty for `$`).
    Dollar(String),
    /// Operator or punctuation.
    Op(&'static str),
}

/// Operators, longest first so that the first match is the right one.
const OPS: &[&str] = &[
    "->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "::", "+", "-", "*", "/", "%", "<", ">",
    "&", "^", "|", "!", "~", "?", ":", "(", ")", "[", "]", ".", ",", "=", "@", "{", "}",
];

fn syntax(rest: &str) -> ExprError {
    ExprError::Syntax(rest.to_string())
}

/// One escape after a backslash.
fn escape(it: &mut std::iter::Peekable<std::str::CharIndices<'_>>) -> Option<u8> {
    let (_, c) = it.next()?;
    Some(match c {
        'n' => b'\n',
        't' => b'\t',
        'r' => b'\r',
        'a' => 7,
        'b' => 8,
        'f' => 12,
        'v' => 11,
        'e' => 27,
        'x' => {
            let mut v = 0u32;
            while let Some((_, d)) = it.peek().copied() {
                let Some(x) = d.to_digit(16) else { break };
                v = v.wrapping_mul(16).wrapping_add(x);
                it.next();
            }
            v as u8
        }
        '0'..='7' => {
            let mut v = c as u32 - '0' as u32;
            for _ in 0..2 {
                match it.peek().copied() {
                    Some((_, d @ '0'..='7')) => {
                        v = v * 8 + (d as u32 - '0' as u32);
                        it.next();
                    }
                    _ => break,
                }
            }
            v as u8
        }
        other => other as u8,
    })
}

/// A numeric literal `s` (already cut out of the text).
fn number(s: &str) -> Result<Tok, ExprError> {
    let lower = s.to_ascii_lowercase();
    let is_hex = lower.starts_with("0x");
    if !is_hex && (lower.contains('.') || lower.contains('e')) {
        let (digits, is_float) = match lower.strip_suffix('f') {
            Some(d) => (d, true),
            None => (lower.trim_end_matches('l'), false),
        };
        let f: f64 = digits
            .parse()
            .map_err(|_| ExprError::Other(format!("Invalid number \"{s}\".")))?;
        return Ok(Tok::Float(f, is_float));
    }
    let digits = lower.trim_end_matches(['u', 'l']);
    let suffix = &lower[digits.len()..];
    let (v, decimal) = if let Some(h) = digits.strip_prefix("0x") {
        (u64::from_str_radix(h, 16), false)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (u64::from_str_radix(&digits[1..], 8), false)
    } else {
        (digits.parse::<u64>(), true)
    };
    let v = v.map_err(|e| match e.kind() {
        std::num::IntErrorKind::PosOverflow => ExprError::other("Numeric constant too large."),
        _ => ExprError::Other(format!("Invalid number \"{s}\".")),
    })?;
    Ok(Tok::Int(
        v,
        suffix.contains('u'),
        suffix.contains('l'),
        decimal,
    ))
}

/// Splits `text` into tokens, each with its byte offset (for error messages).
pub fn lex(text: &str) -> Result<Vec<(Tok, usize)>, ExprError> {
    let mut out: Vec<(Tok, usize)> = Vec::new();
    let mut it = text.char_indices().peekable();
    while let Some(&(i, c)) = it.peek() {
        if c.is_whitespace() {
            it.next();
            continue;
        }
        // `x.0` is a field access (Rust tuples), not `x` followed by `.0`.
        let n = out.len();
        let after_operand = matches!(
            out.last(),
            Some((
                Tok::Ident(_) | Tok::Op(")") | Tok::Op("]") | Tok::Dollar(_),
                _
            ))
        ) || (n >= 2
            && matches!(out[n - 2].0, Tok::Op("."))
            && matches!(out[n - 1].0, Tok::Int(..)));
        let dot_number =
            c == '.' && !after_operand && text[i + 1..].starts_with(|d: char| d.is_ascii_digit());
        let field_after_dot = matches!(out.last(), Some((Tok::Op("."), _)));
        if c.is_ascii_digit() && field_after_dot {
            // A tuple index: digits only.
            let start = i;
            let mut end = i;
            while let Some(&(j, d)) = it.peek() {
                if d.is_ascii_digit() {
                    end = j + 1;
                    it.next();
                } else {
                    break;
                }
            }
            let v = text[start..end]
                .parse()
                .map_err(|_| syntax(&text[start..]))?;
            out.push((Tok::Int(v, false, false, true), start));
            continue;
        }
        if c.is_ascii_digit() || dot_number {
            let start = i;
            let mut end = i;
            let mut prev = ' ';
            let mut dots = 0;
            while let Some(&(j, d)) = it.peek() {
                // A second `.` ends the number (`1.5.3` is `1.5` then `.3`).
                if d == '.' {
                    dots += 1;
                    if dots > 1 {
                        break;
                    }
                }
                let exp_sign = (d == '+' || d == '-')
                    && (prev == 'e' || prev == 'E')
                    && !text[start..j].to_ascii_lowercase().starts_with("0x");
                if d.is_ascii_alphanumeric() || d == '.' || d == '_' || exp_sign {
                    end = j + d.len_utf8();
                    prev = d;
                    it.next();
                } else {
                    break;
                }
            }
            out.push((number(&text[start..end])?, start));
            continue;
        }
        if c.is_alphabetic() || c == '_' || c == '$' {
            let start = i;
            let mut end = i + c.len_utf8();
            it.next();
            while let Some(&(j, d)) = it.peek() {
                if d.is_alphanumeric() || d == '_' || (c == '$' && d == '$') {
                    end = j + d.len_utf8();
                    it.next();
                } else {
                    break;
                }
            }
            let s = &text[start..end];
            match s.strip_prefix('$') {
                Some(r) => out.push((Tok::Dollar(r.to_string()), start)),
                None => out.push((Tok::Ident(s.to_string()), start)),
            }
            continue;
        }
        if c == '\'' {
            it.next();
            let v = match it.next() {
                Some((_, '\\')) => escape(&mut it).ok_or_else(|| syntax(&text[i..]))?,
                Some((_, ch)) => ch as u32 as u8,
                None => return Err(ExprError::other("Unmatched single quote.")),
            };
            match it.next() {
                Some((_, '\'')) => {}
                _ => return Err(ExprError::other("Unmatched single quote.")),
            }
            out.push((Tok::Char(v), i));
            continue;
        }
        if c == '"' {
            it.next();
            let mut s = Vec::new();
            loop {
                match it.next() {
                    Some((_, '"')) => break,
                    Some((_, '\\')) => s.push(escape(&mut it).ok_or_else(|| syntax(&text[i..]))?),
                    Some((_, ch)) => {
                        let mut buf = [0u8; 4];
                        s.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                    }
                    None => return Err(ExprError::other("Unterminated string in expression.")),
                }
            }
            out.push((Tok::Str(s), i));
            continue;
        }
        let rest = &text[i..];
        let Some(op) = OPS.iter().find(|o| rest.starts_with(**o)) else {
            return Err(ExprError::Other(format!(
                "Invalid character '{c}' in expression."
            )));
        };
        for _ in 0..op.len() {
            it.next();
        }
        out.push((Tok::Op(op), i));
    }
    Ok(out)
}
