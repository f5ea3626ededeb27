//! Server-provided DPoP nonces (RFC 9449 §9): a random value rotated at an interval; the
//! previous one stays valid for one more interval so clients in flight are not refused.

use std::time::{Duration, Instant};

use http::HeaderValue;
use parking_lot::Mutex;

use crate::jose::b64url;

pub(crate) struct Nonces {
    interval: Duration,
    state: Mutex<State>,
}

struct State {
    current: HeaderValue,
    previous: Option<HeaderValue>,
    since: Instant,
}

/// How a presented nonce compares.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NonceCheck {
    Current,
    /// Accepted, but a newer one exists: send it.
    Stale(HeaderValue),
    /// Missing or unknown: answer `use_dpop_nonce` with this one.
    Refused(HeaderValue),
}

fn fresh() -> HeaderValue {
    let mut bytes = [0u8; 18];
    // The OS RNG does not fail on supported systems; a zero nonce would still be
    // rotated on the next interval.
    let _ = getrandom::fill(&mut bytes);
    HeaderValue::from_str(&b64url(&bytes)).unwrap_or_else(|_| HeaderValue::from_static("n"))
}

impl Nonces {
    pub(crate) fn new(interval: Duration) -> Self {
        Nonces {
            interval,
            state: Mutex::new(State {
                current: fresh(),
                previous: None,
                since: Instant::now(),
            }),
        }
    }

    fn rotate(&self, s: &mut State, now: Instant) {
        let elapsed = now.saturating_duration_since(s.since);
        if elapsed >= self.interval * 2 {
            s.previous = None;
            s.current = fresh();
            s.since = now;
        } else if elapsed >= self.interval {
            s.previous = Some(std::mem::replace(&mut s.current, fresh()));
            s.since = now;
        }
    }

    pub(crate) fn current(&self) -> HeaderValue {
        let mut s = self.state.lock();
        self.rotate(&mut s, Instant::now());
        s.current.clone()
    }

    pub(crate) fn check(&self, presented: Option<&str>) -> NonceCheck {
        self.check_at(presented, Instant::now())
    }

    fn check_at(&self, presented: Option<&str>, now: Instant) -> NonceCheck {
        let mut s = self.state.lock();
        self.rotate(&mut s, now);
        match presented {
            Some(n) if n.as_bytes() == s.current.as_bytes() => NonceCheck::Current,
            Some(n)
                if s.previous
                    .as_ref()
                    .is_some_and(|p| p.as_bytes() == n.as_bytes()) =>
            {
                NonceCheck::Stale(s.current.clone())
            }
            _ => NonceCheck::Refused(s.current.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation() {
        let t0 = Instant::now();
        let n = Nonces::new(Duration::from_secs(60));
        let first = n.current();
        assert_eq!(n.check_at(first.to_str().ok(), t0), NonceCheck::Current);
        assert!(matches!(n.check_at(None, t0), NonceCheck::Refused(_)));
        assert!(matches!(
            n.check_at(Some("made-up"), t0),
            NonceCheck::Refused(_)
        ));
        let t1 = t0 + Duration::from_secs(61);
        let NonceCheck::Stale(second) = n.check_at(first.to_str().ok(), t1) else {
            panic!("the previous nonce is accepted once rotated");
        };
        assert_ne!(first, second);
        assert_eq!(n.check_at(second.to_str().ok(), t1), NonceCheck::Current);
        let t2 = t1 + Duration::from_secs(61);
        assert!(matches!(
            n.check_at(first.to_str().ok(), t2),
            NonceCheck::Refused(_)
        ));
        assert!(matches!(
            n.check_at(second.to_str().ok(), t2),
            NonceCheck::Stale(_)
        ));
    }
}
