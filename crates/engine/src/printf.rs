//! gdb's `printf "FORMAT", ARGS…` (also what `dprintf` prints): C conversions applied to
//! values evaluated in the selected frame, plus `%V`, the value as `print` shows it (newer
//! gdbs have it too; editors' logpoints `{expr}` use it).

use anyhow::bail;
use hindsight_symbols::value::{Shape, Value};

use crate::context;
use crate::session::Session;

/// One conversion: flags, width, precision and the conversion letter.
struct Spec {
    left: bool,
    zero: bool,
    plus: bool,
    width: usize,
    precision: Option<usize>,
    conv: char,
}

/// Formats `format` with `args` evaluated in the selected frame.
pub(crate) fn format(s: &mut Session, format: &str, args: &[String]) -> anyhow::Result<String> {
    let mut out = String::new();
    let mut args = args.iter();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        let mut spec = Spec {
            left: false,
            zero: false,
            plus: false,
            width: 0,
            precision: None,
            conv: ' ',
        };
        while let Some(&f) = chars.peek() {
            match f {
                '-' => spec.left = true,
                '0' => spec.zero = true,
                '+' => spec.plus = true,
                ' ' | '#' => {}
                _ => break,
            }
            chars.next();
        }
        while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
            spec.width = spec.width * 10 + d as usize;
            chars.next();
        }
        if chars.peek() == Some(&'.') {
            chars.next();
            let mut p = 0;
            while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                p = p * 10 + d as usize;
                chars.next();
            }
            spec.precision = Some(p);
        }
        // Length modifiers change nothing here: values carry their own size.
        while matches!(chars.peek(), Some('l' | 'h' | 'z' | 'j' | 't' | 'L' | 'q')) {
            chars.next();
        }
        let Some(conv) = chars.next() else {
            bail!("Bad format string: it ends inside a conversion.");
        };
        spec.conv = conv;
        let Some(arg) = args.next() else {
            bail!("Bad format string, missing '\"'");
        };
        let v = context::evaluate(s, arg)?;
        let text = convert(s, &spec, &v)?;
        out.push_str(&pad(&spec, text));
    }
    if args.next().is_some() {
        bail!("Extra arguments at end of format string.");
    }
    Ok(out)
}

fn convert(s: &Session, spec: &Spec, v: &Value) -> anyhow::Result<String> {
    let float = matches!(v.ty.shape(), Shape::Float(_));
    let as_f64 = || -> f64 {
        match (float, v.bytes.len()) {
            (true, 4) => f32::from_le_bytes(v.bytes[..4].try_into().unwrap_or([0; 4])) as f64,
            (true, n) if n >= 8 => f64::from_le_bytes(v.bytes[..8].try_into().unwrap_or([0; 8])),
            _ => v.as_u64().map(|x| x as i64 as f64).unwrap_or(0.0),
        }
    };
    let int = || -> anyhow::Result<u64> {
        if float {
            return Ok(as_f64() as i64 as u64);
        }
        v.as_u64().map_err(|e| anyhow::anyhow!("{e}"))
    };
    let signed = || -> anyhow::Result<i64> {
        let x = int()?;
        let size = v.size().clamp(1, 8);
        Ok(if size == 8 {
            x as i64
        } else {
            ((x << (64 - size * 8)) as i64) >> (64 - size * 8)
        })
    };
    Ok(match spec.conv {
        'd' | 'i' => {
            let x = signed()?;
            if spec.plus && x >= 0 {
                format!("+{x}")
            } else {
                x.to_string()
            }
        }
        'u' => (int()? & mask(v)).to_string(),
        'x' => format!("{:x}", int()? & mask(v)),
        'X' => format!("{:X}", int()? & mask(v)),
        'o' => format!("{:o}", int()? & mask(v)),
        'p' => format!("{:#x}", int()?),
        'c' => char::from((int()? & 0xff) as u8).to_string(),
        'f' | 'F' => format!("{:.*}", spec.precision.unwrap_or(6), as_f64()),
        'e' | 'E' => format!("{:.*e}", spec.precision.unwrap_or(6), as_f64()),
        'V' => s.format_value(v, None)?,
        'g' | 'G' => {
            let x = as_f64();
            let text = format!("{x}");
            text.trim_end_matches(".0").to_string()
        }
        's' => {
            let mut text = read_c_string(s, v)?;
            if let Some(p) = spec.precision {
                text = text.chars().take(p).collect();
            }
            text
        }
        other => bail!("Unrecognized format specifier '{other}' in printf"),
    })
}

/// All ones over the value's size (for unsigned conversions of negative values).
fn mask(v: &Value) -> u64 {
    match v.size().clamp(1, 8) {
        8 => u64::MAX,
        n => (1u64 << (n * 8)) - 1,
    }
}

/// The NUL-terminated string an array holds or a pointer points at.
fn read_c_string(s: &Session, v: &Value) -> anyhow::Result<String> {
    let bytes: Vec<u8> = match v.ty.shape() {
        Shape::Array(..) => v.bytes.clone(),
        _ => {
            let addr = v.as_u64().map_err(|e| anyhow::anyhow!("{e}"))?;
            let inf = s.live()?;
            let mut out = Vec::new();
            let mut chunk = [0u8; 64];
            let mut a = addr;
            while out.len() < 4096 {
                if inf.read_memory(a, &mut chunk).is_err() {
                    let mut one = [0u8; 1];
                    if inf.read_memory(a, &mut one).is_err() {
                        if out.is_empty() {
                            bail!("Cannot access memory at address {a:#x}");
                        }
                        break;
                    }
                    chunk[..1].copy_from_slice(&one);
                    out.push(one[0]);
                    if one[0] == 0 {
                        break;
                    }
                    a += 1;
                    continue;
                }
                out.extend_from_slice(&chunk);
                if chunk.contains(&0) {
                    break;
                }
                a += chunk.len() as u64;
            }
            out
        }
    };
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    Ok(String::from_utf8_lossy(&bytes[..end]).into_owned())
}

fn pad(spec: &Spec, text: String) -> String {
    let len = text.chars().count();
    if len >= spec.width {
        return text;
    }
    let fill = spec.width - len;
    if spec.left {
        format!("{text}{}", " ".repeat(fill))
    } else if spec.zero && spec.conv != 's' && spec.conv != 'c' {
        let (sign, digits) = match text.strip_prefix('-') {
            Some(d) => ("-", d.to_string()),
            None => ("", text),
        };
        format!("{sign}{}{digits}", "0".repeat(fill))
    } else {
        format!("{}{text}", " ".repeat(fill))
    }
}
