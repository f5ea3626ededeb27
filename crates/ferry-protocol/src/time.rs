//! UTC timestamps in RFC 3339 form (`2025-11-25T10:30:00.123Z`), written without a date
//! library: task times (`createdAt`, `lastUpdatedAt`) and log lines use them.

use std::fmt::Write as _;
use std::time::Duration;

/// Appends the instant `since_epoch` after 1970-01-01T00:00:00Z, in UTC, with
/// `fraction_digits` digits of the second (clamped to 9; 0 writes no fraction).
///
/// ```
/// use std::time::Duration;
///
/// let mut s = String::new();
/// ferry_protocol::time::push_timestamp(&mut s, Duration::from_micros(1_796_617_789_123_456), 6);
/// assert_eq!(s, "2026-12-07T04:29:49.123456Z");
/// ```
pub fn push_timestamp(out: &mut String, since_epoch: Duration, fraction_digits: u32) {
    let secs = since_epoch.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days);
    let _ = write!(
        out,
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
    );
    let digits = fraction_digits.min(9);
    if digits > 0 {
        let fraction = since_epoch.subsec_nanos() / 10u32.pow(9 - digits);
        let _ = write!(out, ".{fraction:0width$}", width = digits as usize);
    }
    out.push('Z');
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's
/// `civil_from_days`, for non-negative days).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_gregorian() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_794), (2026, 12, 7));
    }

    #[test]
    fn fractions_have_the_digits_asked_for() {
        let at = Duration::new(951_782_400, 123_456_789);
        for (digits, want) in [
            (0, "2000-02-29T00:00:00Z"),
            (3, "2000-02-29T00:00:00.123Z"),
            (6, "2000-02-29T00:00:00.123456Z"),
            (12, "2000-02-29T00:00:00.123456789Z"),
        ] {
            let mut s = String::new();
            push_timestamp(&mut s, at, digits);
            assert_eq!(s, want);
        }
    }
}
