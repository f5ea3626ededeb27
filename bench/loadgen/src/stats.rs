//! Latency percentiles.

use std::time::Duration;

/// The `q`-quantile (0..=1) of `samples` in milliseconds, or `None` when there are none.
/// Sorts `samples` in place.
pub fn percentile_ms(samples: &mut [u32], q: f64) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    samples.sort_unstable();
    let rank = ((samples.len() as f64 - 1.0) * q).round() as usize;
    Some(f64::from(samples[rank]) / 1000.0)
}

/// A duration in whole microseconds, saturating at `u32::MAX` (over an hour).
pub fn micros(d: Duration) -> u32 {
    u32::try_from(d.as_micros()).unwrap_or(u32::MAX)
}

/// Rounds for printing.
pub fn round(x: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (x * scale).round() / scale
}
