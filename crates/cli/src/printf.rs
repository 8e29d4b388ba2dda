//! gdb's `printf "FORMAT", ARGS…` syntax (also `dprintf`'s): the format string with its
//! escapes, and the argument expressions split at top-level commas. The engine applies them.

use anyhow::bail;

/// Splits `"FORMAT", ARG, ARG…` into the format (escapes resolved) and the argument texts.
pub(crate) fn split_args(text: &str) -> anyhow::Result<(String, Vec<String>)> {
    let t = text.trim();
    let Some(rest) = t.strip_prefix('"') else {
        bail!("Bad format string (it must start with a double quote): {t}");
    };
    let mut format = String::new();
    let mut chars = rest.char_indices();
    let mut end = None;
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => {
                end = Some(i);
                break;
            }
            '\\' => match chars.next().map(|(_, c)| c) {
                Some('n') => format.push('\n'),
                Some('t') => format.push('\t'),
                Some('"') => format.push('"'),
                Some('\\') => format.push('\\'),
                Some('a') => format.push('\x07'),
                Some(other) => bail!("Unrecognized escape character \\{other} in format string."),
                None => bail!("Bad format string, non-terminated '\"'."),
            },
            c => format.push(c),
        }
    }
    let Some(end) = end else {
        bail!("Bad format string, non-terminated '\"'.");
    };
    let after = rest[end + 1..].trim();
    let mut args = Vec::new();
    if !after.is_empty() {
        let Some(list) = after.strip_prefix(',') else {
            bail!("Invalid argument syntax");
        };
        args = split_top_level(list)
            .into_iter()
            .map(|a| a.trim().to_string())
            .collect();
        if args.iter().any(String::is_empty) {
            bail!("Invalid argument syntax");
        }
    }
    Ok((format, args))
}

/// Splits on commas outside parentheses, brackets and quotes.
fn split_top_level(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None, 0);
    let mut prev = ' ';
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q && prev != '\\' => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(' | '[') => depth += 1,
            (None, ')' | ']') => depth -= 1,
            (None, ',') if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        prev = c;
    }
    out.push(&s[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_format_and_arguments() {
        let (f, a) = split_args(r#""x=%d, s=%s\n", x, f(a, b)"#).expect("parses");
        assert_eq!(f, "x=%d, s=%s\n");
        assert_eq!(a, vec!["x".to_string(), "f(a, b)".to_string()]);
        assert!(split_args("x").is_err());
        assert!(split_args(r#""open"#).is_err());
        assert!(split_args(r#""%d" x"#).is_err());
    }
}
