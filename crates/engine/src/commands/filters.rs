//! Template filters (`{{ value | upper }}`), with JavaScript semantics.

use chrono::{DateTime, Datelike, Local, NaiveDate, NaiveDateTime, TimeZone, Timelike, Utc};

use crate::error::{Error, Result};
use crate::value::{Value, format_number, is_js_space, string_to_number};

/// Splits a filter expression into its name and arguments (quoted
/// arguments may contain spaces; a backslash escapes the next character).
fn parse_filter_expression(expr: &str) -> Vec<String> {
    let trimmed = expr.trim_matches(is_js_space);
    let chars: Vec<char> = trimmed.chars().collect();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        while i < chars.len() && chars[i] == ' ' {
            i += 1;
        }
        if i >= chars.len() {
            break;
        }
        let mut arg = String::new();
        if chars[i] == '"' || chars[i] == '\'' {
            let quote = chars[i];
            i += 1;
            while i < chars.len() && chars[i] != quote {
                if chars[i] == '\\' && i + 1 < chars.len() {
                    arg.push(chars[i + 1]);
                    i += 2;
                } else {
                    arg.push(chars[i]);
                    i += 1;
                }
            }
            i += 1;
        } else {
            while i < chars.len() && chars[i] != ' ' {
                arg.push(chars[i]);
                i += 1;
            }
        }
        parts.push(arg);
    }
    if parts.is_empty() {
        parts.push(trimmed.to_string());
    }
    parts
}

/// JavaScript `String(v ?? '')`.
fn str_or_empty(v: &Option<Value>) -> String {
    match v {
        None | Some(Value::Null | Value::Undefined) => String::new(),
        Some(v) => v.to_js_string(),
    }
}

/// JavaScript `parseInt(s)` (base 10), `None` for `NaN`.
fn parse_int(s: Option<&String>) -> Option<i64> {
    let t = s?.trim_start_matches(is_js_space);
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let n: String = digits.chars().take_while(char::is_ascii_digit).collect();
    let v: i64 = n.get(..n.len().min(18))?.parse().ok()?;
    Some(if neg { -v } else { v })
}

/// Truncates to `len` UTF-16 code units.
fn utf16_prefix(s: &str, len: usize) -> String {
    let units: Vec<u16> = s.encode_utf16().take(len).collect();
    String::from_utf16_lossy(&units)
}

/// JavaScript `Number.prototype.toFixed(digits)` (ties round away from zero
/// on the exact binary value).
pub fn to_fixed(x: f64, digits: usize) -> String {
    if !x.is_finite() || x.abs() >= 1e21 {
        return format_number(x);
    }
    let exact = format!("{:.*}", digits + 30, x.abs());
    let (head, tail) = exact.split_at(exact.len() - 30);
    let mut rounded = format!("{:.*}", digits, x.abs());
    // Rust rounds exact ties to even; JavaScript picks the larger magnitude.
    if tail.starts_with('5') && tail[1..].bytes().all(|b| b == b'0') {
        let bumped = string_to_number(head) + 10f64.powi(-(digits as i32));
        rounded = format!("{bumped:.digits$}");
    }
    if x < 0.0 && string_to_number(&rounded) != 0.0 {
        format!("-{rounded}")
    } else {
        rounded
    }
}

/// JavaScript `new Date(string)` for the formats people use: ISO 8601
/// (date-only is UTC, date-time without offset is local), RFC 2822/3339.
fn parse_date(s: &str) -> Option<DateTime<Utc>> {
    let s = s.trim();
    if let Ok(d) = DateTime::parse_from_rfc3339(s) {
        return Some(d.with_timezone(&Utc));
    }
    if let Ok(d) = DateTime::parse_from_rfc2822(s) {
        return Some(d.with_timezone(&Utc));
    }
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f%:z",
        "%Y-%m-%dT%H:%M%:z",
        "%Y-%m-%dT%H:%MZ",
    ] {
        if let Ok(d) = DateTime::parse_from_str(s, fmt) {
            return Some(d.with_timezone(&Utc));
        }
    }
    if let Some(stripped) = s.strip_suffix('Z') {
        for fmt in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"] {
            if let Ok(n) = NaiveDateTime::parse_from_str(stripped, fmt) {
                return Some(Utc.from_utc_datetime(&n));
            }
        }
    }
    for fmt in ["%Y-%m-%d", "%Y-%m", "%Y"] {
        let candidate = match fmt {
            "%Y-%m" => format!("{s}-01"),
            "%Y" => format!("{s}-01-01"),
            _ => s.to_string(),
        };
        if s.len() >= 4
            && let Ok(d) = NaiveDate::parse_from_str(&candidate, "%Y-%m-%d")
            && (fmt != "%Y" || s.len() == 4)
        {
            return d.and_hms_opt(0, 0, 0).map(|n| Utc.from_utc_datetime(&n));
        }
    }
    // Local date-times, including the month-name forms V8 accepts.
    let local = |n: NaiveDateTime| {
        Local
            .from_local_datetime(&n)
            .earliest()
            .map(|d| d.with_timezone(&Utc))
    };
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
        "%Y/%m/%d %H:%M:%S",
        "%Y/%m/%d %H:%M",
        "%b %d, %Y %H:%M:%S",
        "%b %d, %Y %H:%M",
        "%b %d %Y %H:%M:%S",
        "%b %d %Y %H:%M",
        "%d %b %Y %H:%M:%S",
        "%d %b %Y %H:%M",
        "%B %d, %Y %H:%M:%S",
        "%B %d, %Y %H:%M",
        "%B %d %Y %H:%M:%S",
        "%B %d %Y %H:%M",
    ] {
        if let Ok(n) = NaiveDateTime::parse_from_str(s, fmt) {
            return local(n);
        }
    }
    for fmt in [
        "%Y/%m/%d",
        "%b %d, %Y",
        "%b %d %Y",
        "%B %d, %Y",
        "%B %d %Y",
        "%d %b %Y",
        "%m/%d/%Y",
    ] {
        if let Ok(d) = NaiveDate::parse_from_str(s, fmt) {
            return d.and_hms_opt(0, 0, 0).and_then(local);
        }
    }
    None
}

/// `Date#toISOString()`.
pub fn iso_string(d: &DateTime<Utc>) -> String {
    d.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn date_filter(v: &Option<Value>, fmt: Option<&String>) -> Value {
    let date = match v {
        Some(Value::Number(n)) => ms_to_date(*n),
        Some(Value::String(s))
            if !s.trim().is_empty() && s.trim().bytes().all(|b| b.is_ascii_digit()) =>
        {
            ms_to_date(string_to_number(s))
        }
        other => parse_date(&str_or_empty(other).replace("undefined", "")),
    };
    let Some(d) = date else {
        return Value::String(
            v.as_ref()
                .map_or_else(|| "undefined".to_string(), Value::to_js_string),
        );
    };
    let Some(fmt) = fmt.filter(|f| !f.is_empty()) else {
        return Value::String(iso_string(&d));
    };
    let out = fmt
        .replacen("YYYY", &d.year().to_string(), 1)
        .replacen("MM", &format!("{:02}", d.month()), 1)
        .replacen("DD", &format!("{:02}", d.day()), 1)
        .replacen("HH", &format!("{:02}", d.hour()), 1)
        .replacen("mm", &format!("{:02}", d.minute()), 1)
        .replacen("ss", &format!("{:02}", d.second()), 1);
    Value::String(out)
}

fn ms_to_date(ms: f64) -> Option<DateTime<Utc>> {
    if !ms.is_finite() || ms.abs() > 8.64e15 {
        return None;
    }
    DateTime::from_timestamp_millis(ms.trunc() as i64)
}

/// `String.prototype.replaceAll(from, to)` for plain strings.
fn replace_all(s: &str, from: &str, to: &str) -> String {
    if from.is_empty() {
        let units: Vec<u16> = s.encode_utf16().collect();
        let mut out = String::from(to);
        for u in units.chunks(1) {
            out.push_str(&String::from_utf16_lossy(u));
            out.push_str(to);
        }
        return out;
    }
    s.replace(from, to)
}

/// `String.prototype.split(sep)`.
fn split(s: &str, sep: &str) -> Value {
    let parts: Vec<Value> = if sep.is_empty() {
        s.encode_utf16()
            .map(|u| Value::String(String::from_utf16_lossy(&[u])))
            .collect()
    } else {
        s.split(sep).map(Value::from).collect()
    };
    Value::Array(parts)
}

fn apply_one(val: Option<Value>, name: &str, args: &[String]) -> Result<Option<Value>> {
    let arg = |i: usize| args.get(i);
    Ok(match name {
        "upper" => Some(Value::String(str_or_empty(&val).to_uppercase())),
        "lower" => Some(Value::String(str_or_empty(&val).to_lowercase())),
        "trim" => Some(Value::String(
            str_or_empty(&val).trim_matches(is_js_space).to_string(),
        )),
        "truncate" => {
            let s = str_or_empty(&val);
            let len = parse_int(arg(0)).filter(|n| *n != 0).unwrap_or(80);
            let units = s.encode_utf16().count() as i64;
            if units > len {
                let keep = if len < 0 { (units + len).max(0) } else { len };
                Some(Value::String(utf16_prefix(&s, keep as usize) + "..."))
            } else {
                Some(Value::String(s))
            }
        }
        "replace" => Some(Value::String(replace_all(
            &str_or_empty(&val),
            arg(0).map_or("", String::as_str),
            arg(1).map_or("", String::as_str),
        ))),
        "split" => Some(split(
            &str_or_empty(&val),
            arg(0).map_or(",", String::as_str),
        )),
        "first" => match val {
            Some(Value::Array(a)) => a.into_iter().next(),
            other => other,
        },
        "last" => match val {
            Some(Value::Array(a)) => a.into_iter().last(),
            other => other,
        },
        "length" => Some(Value::from(match &val {
            Some(Value::Array(a)) => a.len(),
            Some(Value::String(s)) => s.encode_utf16().count(),
            _ => 0,
        })),
        "join" => match val {
            Some(Value::Array(a)) => {
                let sep = arg(0).map_or(", ", String::as_str);
                let parts: Vec<String> = a
                    .iter()
                    .map(|v| {
                        if matches!(v, Value::Null) {
                            String::new()
                        } else {
                            v.to_js_string()
                        }
                    })
                    .collect();
                Some(Value::String(parts.join(sep)))
            }
            other => Some(Value::String(str_or_empty(&other))),
        },
        "json" => val.map(|v| Value::String(v.to_json_pretty())),
        "string" => Some(Value::String(str_or_empty(&val))),
        "default" => match &val {
            None | Some(Value::Null) => arg(0).map(|d| Value::from(d.as_str())),
            Some(Value::String(s)) if s.is_empty() => arg(0).map(|d| Value::from(d.as_str())),
            _ => val,
        },
        "round" => {
            let num = val.as_ref().map_or(f64::NAN, Value::to_number);
            if num.is_nan() {
                val
            } else {
                // `Number#toFixed` throws outside 0..=100.
                let dec = parse_int(arg(0)).unwrap_or(0);
                if !(0..=100).contains(&dec) {
                    return Err(Error::runtime(
                        "toFixed() digits argument must be between 0 and 100",
                    ));
                }
                Some(Value::Number(string_to_number(&to_fixed(
                    num,
                    dec as usize,
                ))))
            }
        }
        "date" => Some(date_filter(&val, arg(0))),
        other => return Err(Error::runtime(format!("Unknown template filter: {other}"))),
    })
}

/// Applies a chain of filter expressions (`upper`, `truncate 80`, ...).
pub fn apply_filters(mut val: Option<Value>, chain: &[String]) -> Result<Option<Value>> {
    for expr in chain {
        let parts = parse_filter_expression(expr);
        val = apply_one(val, &parts[0], &parts[1..])?;
    }
    Ok(val)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regressions: `String(v ?? "")` makes null empty for the string
    /// filters, and `round` with digits outside 0..=100 throws like
    /// `Number#toFixed` instead of clamping.
    #[test]
    fn null_is_empty_and_round_digits_are_checked() {
        let split = apply_one(Some(Value::Null), "split", &[" ".to_string()]).unwrap();
        assert_eq!(split, Some(Value::Array(vec![Value::from("")])));
        let upper = apply_one(Some(Value::Null), "upper", &[]).unwrap();
        assert_eq!(upper, Some(Value::from("")));
        let err = apply_one(Some(Value::from(3.7)), "round", &["-1".to_string()]).unwrap_err();
        assert_eq!(
            err.message,
            "toFixed() digits argument must be between 0 and 100"
        );
        assert!(apply_one(Some(Value::from(3.7)), "round", &["101".to_string()]).is_err());
        assert_eq!(
            apply_one(Some(Value::from("x")), "round", &["-1".to_string()]).unwrap(),
            Some(Value::from("x")),
            "NaN never reaches toFixed"
        );
    }

    #[test]
    fn to_fixed_rounds_ties_up_like_js() {
        assert_eq!(to_fixed(2.5, 0), "3");
        assert_eq!(to_fixed(1.005, 2), "1.00");
        assert_eq!(to_fixed(1.23456, 2), "1.23");
        assert_eq!(to_fixed(-0.5, 0), "-1");
        assert_eq!(to_fixed(0.125, 2), "0.13");
        assert_eq!(to_fixed(1e21, 2), "1e+21");
    }

    #[test]
    fn dates_parse_and_format() {
        let v = Some(Value::from("2024-02-03T04:05:06Z"));
        assert_eq!(
            date_filter(&v, None),
            Value::from("2024-02-03T04:05:06.000Z")
        );
        assert_eq!(
            date_filter(&v, Some(&"YYYY-MM-DD".to_string())),
            Value::from("2024-02-03")
        );
        assert_eq!(
            date_filter(&Some(Value::from(0.0)), None),
            Value::from("1970-01-01T00:00:00.000Z")
        );
        assert_eq!(
            date_filter(&Some(Value::from("nope")), None),
            Value::from("nope")
        );
    }
}
