//! Tool and prompt arguments with numbers that `serde_json::Value` cannot hold exactly.
//!
//! Without serde_json's `arbitrary_precision` feature (which would change `Number` for
//! every crate in a build and slow every parse), a `Value` holds an `i64`, a `u64` or an
//! `f64`: an integer beyond 64 bits is rounded to the nearest `f64`, and a number beyond
//! `f64`'s range does not parse at all. Arguments are read here instead:
//!
//! - the arguments parse into a `Value`; when it holds no `f64` (almost always), every
//!   number was held exactly and that is all;
//! - otherwise a scan of the text finds whether any number in it is not held exactly,
//!   and if one is, the `Value` gets the nearest `f64` (a number beyond `f64`'s range
//!   becomes the largest finite `f64` of its sign, so checks of type, `minimum` and
//!   `maximum` still come out right), and [`Arguments::exact`] keeps the text as sent,
//!   from which a handler whose type asks for it (`Box<RawValue>`, `u128`, `i128`)
//!   reads the exact number.

use std::borrow::Cow;

use serde_json::Value;
use serde_json::value::RawValue;

/// Parsed arguments, and their text when a number in them is not held exactly.
#[derive(Debug, Clone)]
pub struct Arguments {
    /// The arguments, with any number that does not fit held as the nearest `f64`.
    pub value: Value,
    /// The arguments as sent, kept only when a number in them does not fit a `Value`
    /// exactly.
    pub exact: Option<Box<RawValue>>,
}

/// Reads `raw` into [`Arguments`].
///
/// ```
/// use ferry_protocol::numbers::parse_arguments;
/// use serde_json::value::RawValue;
///
/// let small = RawValue::from_string(r#"{"n": 42}"#.to_owned())?;
/// assert!(parse_arguments(&small)?.exact.is_none());
///
/// let digits = "9".repeat(400);
/// let big = RawValue::from_string(format!(r#"{{"n": {digits}}}"#))?;
/// let args = parse_arguments(&big)?;
/// assert_eq!(args.value["n"], f64::MAX);
/// assert!(args.exact.unwrap().get().contains(&digits));
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn parse_arguments(raw: &RawValue) -> Result<Arguments, serde_json::Error> {
    let text = raw.get();
    match serde_json::from_str::<Value>(text) {
        // A `Value` without an `f64` held every number exactly (an integer that does not
        // fit 64 bits, or any fraction, parses as an `f64`), so the text need not be read
        // again: the arguments' strings, often most of their bytes, are scanned once.
        Ok(value) if !has_float(&value) => Ok(Arguments { value, exact: None }),
        Ok(value) => Ok(Arguments {
            value,
            exact: exact_text(raw),
        }),
        // A number beyond `f64`'s range does not parse; clamped, it does.
        Err(_) if has_inexact_number(text) => Ok(Arguments {
            value: serde_json::from_str(&clamp_out_of_range(text))?,
            exact: Some(raw.to_owned()),
        }),
        Err(e) => Err(e),
    }
}

/// `raw` itself when a number in it is not held exactly by a `Value`.
pub(crate) fn exact_text(raw: &RawValue) -> Option<Box<RawValue>> {
    has_inexact_number(raw.get()).then(|| raw.to_owned())
}

/// Whether a number in `v` is held as an `f64`: only then may one have been held
/// inexactly.
pub(crate) fn has_float(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.is_f64(),
        Value::Array(items) => items.iter().any(has_float),
        Value::Object(members) => members.values().any(has_float),
        Value::Null | Value::Bool(_) | Value::String(_) => false,
    }
}

/// Whether a number token in the JSON `text` is not held exactly by a `Value`: an
/// integer beyond `i64`/`u64`, or a fraction with more significant digits than an `f64`
/// carries, or beyond its range.
fn has_inexact_number(text: &str) -> bool {
    let mut found = false;
    for_each_number(text, |token| {
        found = found || !fits(token);
    });
    found
}

/// Whether a `Value` holds the number `token` exactly (as far as a round trip shows).
fn fits(token: &str) -> bool {
    let integer = !token.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'));
    if integer {
        // 19 digits always fit an i64 or u64; longer ones are checked.
        return token.len() <= 19 || token.parse::<i64>().is_ok() || token.parse::<u64>().is_ok();
    }
    let significant = token
        .bytes()
        .take_while(|b| !matches!(b, b'e' | b'E'))
        .filter(u8::is_ascii_digit)
        .count();
    significant <= 17 && token.parse::<f64>().is_ok_and(f64::is_finite)
}

/// `text` with every number beyond `f64`'s range written as the largest finite `f64` of
/// its sign.
fn clamp_out_of_range(text: &str) -> Cow<'_, str> {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let base = text.as_ptr() as usize;
    for_each_number(text, |token| {
        if token.parse::<f64>().is_ok_and(f64::is_finite) {
            return;
        }
        let start = token.as_ptr() as usize - base;
        out.push_str(&text[copied..start]);
        out.push_str(if token.starts_with('-') {
            "-1.7976931348623157e308"
        } else {
            "1.7976931348623157e308"
        });
        copied = start + token.len();
    });
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// Calls `f` with each number token of the JSON `text` (outside strings), in order.
fn for_each_number<'a>(text: &'a str, mut f: impl FnMut(&'a str)) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                // Skip the string, escapes included, a vector search at a time: strings are
                // most of the bytes of most arguments.
                i += 1;
                loop {
                    let Some(found) = bytes
                        .get(i..)
                        .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
                    else {
                        return; // unterminated: the parser that follows refuses it
                    };
                    i += found;
                    if bytes[i] == b'"' {
                        i += 1;
                        break;
                    }
                    i += 2;
                }
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < bytes.len()
                    && matches!(bytes[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                f(&text[start..i]);
            }
            _ => i += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    proptest::proptest! {
        #[test]
        fn numbers_inside_strings_are_never_read(s in proptest::prelude::any::<String>(), big: bool) {
            // Strings with quotes, backslashes and digits of their own, before and after the
            // one number outside them.
            let text = format!(
                r#"{{"s": {}, "t": "1e999 \\\" 99999999999999999999 \\", "n": {}, "u": {}}}"#,
                serde_json::to_string(&s).unwrap(),
                if big { "1e999" } else { "1" },
                serde_json::to_string(&format!("{s}\\")).unwrap(),
            );
            let args = parse_arguments(&raw(&text)).unwrap();
            proptest::prop_assert_eq!(args.exact.is_some(), big, "{}", text);
            proptest::prop_assert_eq!(&args.value["s"], &Value::String(s));
        }
    }

    #[test]
    fn numbers_that_fit_take_the_plain_path() {
        for text in [
            r#"{"a": 1, "b": -9223372036854775808, "c": 18446744073709551615, "d": 0.1}"#,
            r#"{"s": "12345678901234567890123456789 in a string \" 1e999"}"#,
            r#"{"x": 1.7976931348623157e308, "y": [1e-5, 2.5E3]}"#,
        ] {
            let args = parse_arguments(&raw(text)).unwrap();
            assert!(args.exact.is_none(), "{text}");
            assert_eq!(args.value, serde_json::from_str::<Value>(text).unwrap());
        }
    }

    #[test]
    fn numbers_that_do_not_fit_keep_their_text() {
        let big = format!("1{}", "0".repeat(2000));
        let text = format!(r#"{{"a": {big}, "b": -{big}, "c": "{big}", "d": 1e999, "e": 7}}"#);
        let args = parse_arguments(&raw(&text)).unwrap();
        assert_eq!(
            args.exact.as_deref().map(RawValue::get),
            Some(text.as_str())
        );
        assert_eq!(args.value["a"], f64::MAX);
        assert_eq!(args.value["b"], -f64::MAX);
        assert_eq!(args.value["c"], big, "strings are left alone");
        assert_eq!(args.value["d"], f64::MAX);
        assert_eq!(args.value["e"], 7);

        // Within f64's range but beyond 64 bits: the Value rounds, the text is exact.
        let text = r#"{"n": 123456789012345678901234567890}"#;
        let args = parse_arguments(&raw(text)).unwrap();
        assert!(args.exact.is_some());
        assert_eq!(args.value["n"], 1.2345678901234568e29);
    }

    #[test]
    fn malformed_text_is_still_an_error() {
        assert!(parse_arguments(&raw(r#"{"a": 1}"#)).is_ok());
        assert!(
            serde_json::from_str::<Value>("[1e999]").is_err(),
            "why this exists"
        );
    }
}
