//! The string formats of the elicitation subset (schema.ts `StringSchema.format`) and
//! their syntactic checks.
//!
//! The checks are `const fn`s so that `ferry-form`'s `#[derive(Form)]` can check a field's
//! default against its format while compiling.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A `format` a text field of an elicitation form may declare.
///
/// The checks are syntactic: they do not resolve domains, fetch URIs or look up time zones.
///
/// ```
/// use ferry_protocol::elicitation::StringFormat;
///
/// assert!(StringFormat::Email.matches("octocat@github.com"));
/// assert!(!StringFormat::Email.matches("octocat"));
/// assert!(StringFormat::Uri.matches("https://example.com/a?b=c#d"));
/// assert!(StringFormat::Date.matches("2024-02-29"));
/// assert!(!StringFormat::Date.matches("2023-02-29"));
/// assert!(StringFormat::DateTime.matches("2024-02-29T12:30:00.5+02:00"));
/// assert_eq!(StringFormat::from_name("date-time"), Some(StringFormat::DateTime));
/// assert_eq!(StringFormat::DateTime.to_string(), "date-time");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StringFormat {
    /// `"email"`: an address such as `user@example.com` (RFC 5321 syntax; non-ASCII
    /// characters are accepted in the local part and domain labels).
    Email,
    /// `"uri"`: an absolute URI with a scheme, such as `https://example.com/x`
    /// (RFC 3986 syntax).
    Uri,
    /// `"date"`: a calendar date `YYYY-MM-DD` (RFC 3339 `full-date`), checked against the
    /// length of the month, leap years included.
    Date,
    /// `"date-time"`: `YYYY-MM-DDTHH:MM:SS`, optional fraction, then `Z` or a `+HH:MM` /
    /// `-HH:MM` offset (RFC 3339 `date-time`).
    DateTime,
}

impl StringFormat {
    /// Every format, in the order the spec lists them.
    pub const ALL: [StringFormat; 4] = [
        StringFormat::Email,
        StringFormat::Uri,
        StringFormat::Date,
        StringFormat::DateTime,
    ];

    /// The name used in a schema's `format`.
    ///
    /// ```
    /// assert_eq!(ferry_protocol::elicitation::StringFormat::Uri.as_str(), "uri");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            StringFormat::Email => "email",
            StringFormat::Uri => "uri",
            StringFormat::Date => "date",
            StringFormat::DateTime => "date-time",
        }
    }

    /// The format with this schema name, or `None` for a name outside the elicitation
    /// subset.
    ///
    /// ```
    /// use ferry_protocol::elicitation::StringFormat;
    ///
    /// assert_eq!(StringFormat::from_name("email"), Some(StringFormat::Email));
    /// assert_eq!(StringFormat::from_name("ipv4"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<StringFormat> {
        Self::ALL.into_iter().find(|f| f.as_str() == name)
    }

    /// Whether `value` is syntactically valid for this format.
    ///
    /// ```
    /// use ferry_protocol::elicitation::StringFormat;
    ///
    /// const OK: bool = StringFormat::Date.matches("2026-07-28");
    /// assert!(OK);
    /// ```
    pub const fn matches(self, value: &str) -> bool {
        let b = value.as_bytes();
        match self {
            StringFormat::Email => is_email(b),
            StringFormat::Uri => is_uri(b),
            StringFormat::Date => b.len() == 10 && date_at(b, 0),
            StringFormat::DateTime => is_date_time(b),
        }
    }
}

impl fmt::Display for StringFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Reads `n` ASCII digits at `i`.
const fn digits(b: &[u8], i: usize, n: usize) -> Option<u32> {
    if i + n > b.len() {
        return None;
    }
    let mut value = 0u32;
    let mut k = 0;
    while k < n {
        let c = b[i + k];
        if !c.is_ascii_digit() {
            return None;
        }
        value = value * 10 + (c - b'0') as u32;
        k += 1;
    }
    Some(value)
}

const fn is_leap_year(year: u32) -> bool {
    (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400)
}

const fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// `YYYY-MM-DD` at `i`.
const fn date_at(b: &[u8], i: usize) -> bool {
    if i + 10 > b.len() {
        return false;
    }
    let (Some(year), Some(month), Some(day)) =
        (digits(b, i, 4), digits(b, i + 5, 2), digits(b, i + 8, 2))
    else {
        return false;
    };
    b[i + 4] == b'-'
        && b[i + 7] == b'-'
        && month >= 1
        && month <= 12
        && day >= 1
        && day <= days_in_month(year, month)
}

const fn is_date_time(b: &[u8]) -> bool {
    if b.len() < 20 || !date_at(b, 0) || !(b[10] == b'T' || b[10] == b't') {
        return false;
    }
    let (Some(hour), Some(minute), Some(second)) =
        (digits(b, 11, 2), digits(b, 14, 2), digits(b, 17, 2))
    else {
        return false;
    };
    if b[13] != b':' || b[16] != b':' || hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    let mut i = 19;
    if b[i] == b'.' {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    if i >= b.len() {
        return false;
    }
    match b[i] {
        b'Z' | b'z' => i + 1 == b.len(),
        b'+' | b'-' => {
            if i + 6 != b.len() {
                return false;
            }
            let (Some(hours), Some(minutes)) = (digits(b, i + 1, 2), digits(b, i + 4, 2)) else {
                return false;
            };
            b[i + 3] == b':' && hours <= 23 && minutes <= 59
        }
        _ => false,
    }
}

/// RFC 5322 `atext`, plus any non-ASCII byte (internationalized addresses).
const fn is_atext(c: u8) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            b'!' | b'#'
                | b'$'
                | b'%'
                | b'&'
                | b'\''
                | b'*'
                | b'+'
                | b'-'
                | b'/'
                | b'='
                | b'?'
                | b'^'
                | b'_'
                | b'`'
                | b'{'
                | b'|'
                | b'}'
                | b'~'
        )
        || c >= 0x80
}

const fn is_email(b: &[u8]) -> bool {
    // The local part may contain '@' only when quoted, so the domain follows the last one.
    let mut at = b.len();
    let mut i = b.len();
    while i > 0 {
        i -= 1;
        if b[i] == b'@' {
            at = i;
            break;
        }
    }
    if at == b.len() || at == 0 || at > 64 || at + 1 == b.len() {
        return false;
    }
    local_part_ok(b, 0, at) && domain_ok(b, at + 1, b.len())
}

const fn local_part_ok(b: &[u8], start: usize, end: usize) -> bool {
    if b[start] == b'"' {
        if end - start < 2 || b[end - 1] != b'"' {
            return false;
        }
        let mut i = start + 1;
        while i < end - 1 {
            let c = b[i];
            if c < 0x20 || c == 0x7f {
                return false;
            }
            if c == b'\\' {
                if i + 1 >= end - 1 || b[i + 1] < 0x20 || b[i + 1] == 0x7f {
                    return false;
                }
                i += 2;
                continue;
            }
            if c == b'"' {
                return false;
            }
            i += 1;
        }
        return true;
    }
    if b[start] == b'.' || b[end - 1] == b'.' {
        return false;
    }
    let mut i = start;
    while i < end {
        let c = b[i];
        if c == b'.' {
            if b[i + 1] == b'.' {
                return false;
            }
        } else if !is_atext(c) {
            return false;
        }
        i += 1;
    }
    true
}

const fn domain_ok(b: &[u8], start: usize, end: usize) -> bool {
    let len = end - start;
    if len == 0 || len > 255 {
        return false;
    }
    if b[start] == b'[' {
        return len >= 3 && b[end - 1] == b']' && address_literal_ok(b, start + 1, end - 1);
    }
    let mut label_start = start;
    let mut i = start;
    while i <= end {
        if i == end || b[i] == b'.' {
            let label_len = i - label_start;
            if label_len == 0 || label_len > 63 || b[label_start] == b'-' || b[i - 1] == b'-' {
                return false;
            }
            label_start = i + 1;
        } else {
            let c = b[i];
            if !(c.is_ascii_alphanumeric() || c == b'-' || c >= 0x80) {
                return false;
            }
        }
        i += 1;
    }
    true
}

/// `[192.0.2.1]` or `[IPv6:2001:db8::1]` (the IPv6 part checked only for its characters).
const fn address_literal_ok(b: &[u8], start: usize, end: usize) -> bool {
    let tag = b"IPv6:";
    if end - start > tag.len() {
        let mut k = 0;
        let mut tagged = true;
        while k < tag.len() {
            if !b[start + k].eq_ignore_ascii_case(&tag[k]) {
                tagged = false;
                break;
            }
            k += 1;
        }
        if tagged {
            let mut i = start + tag.len();
            while i < end {
                let c = b[i];
                if !(c.is_ascii_hexdigit() || c == b':' || c == b'.') {
                    return false;
                }
                i += 1;
            }
            return true;
        }
    }
    is_ipv4(b, start, end)
}

const fn is_ipv4(b: &[u8], start: usize, end: usize) -> bool {
    let mut parts = 0;
    let mut i = start;
    loop {
        let part_start = i;
        let mut value = 0u32;
        while i < end && b[i].is_ascii_digit() {
            if i - part_start >= 3 {
                return false;
            }
            value = value * 10 + (b[i] - b'0') as u32;
            i += 1;
        }
        if i == part_start || value > 255 {
            return false;
        }
        parts += 1;
        if i == end {
            return parts == 4;
        }
        if b[i] != b'.' || parts == 4 {
            return false;
        }
        i += 1;
    }
}

const fn is_unreserved(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~')
}

const fn is_sub_delim(c: u8) -> bool {
    matches!(
        c,
        b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'='
    )
}

const fn is_uri(b: &[u8]) -> bool {
    if b.is_empty() || !b[0].is_ascii_alphabetic() {
        return false;
    }
    let mut i = 1;
    while i < b.len() && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'+' | b'-' | b'.')) {
        i += 1;
    }
    if i >= b.len() || b[i] != b':' {
        return false;
    }
    i += 1;
    // Brackets are allowed only in the authority, for IP literals.
    let mut authority_end = i;
    if i + 1 < b.len() && b[i] == b'/' && b[i + 1] == b'/' {
        let mut j = i + 2;
        while j < b.len() && !matches!(b[j], b'/' | b'?' | b'#') {
            j += 1;
        }
        authority_end = j;
    }
    let mut seen_fragment = false;
    while i < b.len() {
        let c = b[i];
        if c == b'%' {
            if i + 2 >= b.len() || !b[i + 1].is_ascii_hexdigit() || !b[i + 2].is_ascii_hexdigit() {
                return false;
            }
            i += 3;
            continue;
        }
        let ok = is_unreserved(c)
            || is_sub_delim(c)
            || matches!(c, b':' | b'@' | b'/' | b'?')
            || (c == b'#' && !seen_fragment)
            || ((c == b'[' || c == b']') && i < authority_end);
        if !ok {
            return false;
        }
        if c == b'#' {
            seen_fragment = true;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::StringFormat::{self, *};

    fn check(format: StringFormat, good: &[&str], bad: &[&str]) {
        for value in good {
            assert!(format.matches(value), "{format} should accept {value:?}");
        }
        for value in bad {
            assert!(!format.matches(value), "{format} should refuse {value:?}");
        }
    }

    #[test]
    fn email() {
        check(
            Email,
            &[
                "user@example.com",
                "first.last+tag@sub.example.co.uk",
                "x@localhost",
                "\"john doe\"@example.com",
                "\"a@b\"@example.com",
                "user@[192.0.2.1]",
                "user@[IPv6:2001:db8::1]",
                "josé@exämple.de",
                "o'brien@example.ie",
            ],
            &[
                "",
                "plain",
                "@example.com",
                "user@",
                "user@@example.com",
                "a b@example.com",
                ".user@example.com",
                "user.@example.com",
                "us..er@example.com",
                "user@-example.com",
                "user@example-.com",
                "user@example..com",
                "user@exa mple.com",
                "user@[300.0.0.1]",
                "user@[1.2.3]",
                "user@[IPv6:zz]",
                "\"unterminated@example.com",
                "\"in\"side\"@example.com",
                "user@example.com\n",
                &format!("{}@example.com", "a".repeat(65)),
                &format!("a@{}.com", "b".repeat(64)),
            ],
        );
    }

    #[test]
    fn uri() {
        check(
            Uri,
            &[
                "https://example.com",
                "https://example.com/path?q=1&r=%20#frag",
                "http://[2001:db8::1]:8080/",
                "mailto:user@example.com",
                "urn:isbn:0451450523",
                "file:///etc/hosts",
                "a+b-c.d:",
            ],
            &[
                "",
                "example.com",
                "/relative/path",
                "1http://x",
                "https://exa mple.com",
                "https://example.com/%zz",
                "https://example.com/%2",
                "https://example.com/a#b#c",
                "https://example.com/[x]",
                "https://example.com/ü",
                "https://example.com/\"",
            ],
        );
    }

    #[test]
    fn date() {
        check(
            Date,
            &[
                "2026-07-28",
                "2024-02-29",
                "2000-02-29",
                "0001-01-01",
                "1999-12-31",
            ],
            &[
                "2023-02-29",
                "1900-02-29",
                "2026-13-01",
                "2026-00-10",
                "2026-04-31",
                "2026-07-00",
                "2026-7-28",
                "26-07-28",
                "2026/07/28",
                "2026-07-28T00:00:00Z",
                "",
            ],
        );
    }

    #[test]
    fn date_time() {
        check(
            DateTime,
            &[
                "2026-07-28T12:00:00Z",
                "2026-07-28t12:00:00z",
                "2026-07-28T23:59:60Z",
                "2026-07-28T12:00:00.123456+05:30",
                "2026-07-28T12:00:00-00:00",
            ],
            &[
                "2026-07-28",
                "2026-07-28T12:00:00",
                "2026-07-28 12:00:00Z",
                "2026-07-28T24:00:00Z",
                "2026-07-28T12:60:00Z",
                "2026-07-28T12:00:61Z",
                "2026-07-28T12:00:00.Z",
                "2026-07-28T12:00:00+5:30",
                "2026-07-28T12:00:00+24:00",
                "2026-07-28T12:00:00+05:30x",
                "2026-02-30T12:00:00Z",
                "2026-07-28T12:00Z",
            ],
        );
    }

    #[test]
    fn names_round_trip() {
        for format in StringFormat::ALL {
            assert_eq!(StringFormat::from_name(format.as_str()), Some(format));
        }
        assert_eq!(StringFormat::from_name("Email"), None);
    }
}
