//! Attack tests for sealed tokens and state verification.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ferry_state::{
    Binding, DEFAULT_MAX_TOKEN_LEN, IssueError, Key, KeyId, KeyRing, ManualClock, REJECTED_MESSAGE,
    RejectReason, Rejected, Sealer, StateClaims, StateGuard, TOKEN_VERSION, digest_args,
};
use serde_json::json;

const B64URL: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const T0: u64 = 1_800_000_000_000;

fn kid(s: &str) -> KeyId {
    KeyId::new(s).unwrap()
}

fn key(id: &str, fill: u8) -> Key {
    Key::from_bytes(kid(id), [fill; 32])
}

fn ring(id: &str, fill: u8) -> KeyRing {
    KeyRing::new(key(id, fill))
}

fn args() -> String {
    digest_args(&json!({"location": "New York", "units": "metric"}))
}

fn binding<'a>(args: &'a str, principal: Option<&'a str>) -> Binding<'a> {
    Binding::new("tools/call", "get_weather", args).with_principal(principal)
}

/// A guard at a fixed time, and a typical token issued by it.
fn guard_and_token() -> (StateGuard, Arc<ManualClock>, String) {
    let clock = Arc::new(ManualClock::new(T0));
    let guard = StateGuard::new(ring("k1", 7)).with_clock(Arc::clone(&clock));
    let args = args();
    let mut claims = StateClaims::new(&binding(&args, Some("alice")));
    claims.asked.insert("login".into(), "elicit:abc".into());
    claims.answers.insert(
        "units".into(),
        json!({"action": "accept", "content": {"u": "metric"}}),
    );
    claims.app = Some(json!({"step": 2}));
    let token = guard.issue(claims).unwrap();
    (guard, clock, token)
}

fn reason_of<T: std::fmt::Debug>(result: Result<T, Rejected>) -> RejectReason {
    let err = result.unwrap_err();
    assert_eq!(err.to_string(), REJECTED_MESSAGE);
    err.reason()
}

fn header_kid(token: &str) -> Vec<u8> {
    let raw = URL_SAFE_NO_PAD.decode(token).unwrap();
    assert_eq!(raw[0], TOKEN_VERSION);
    raw[2..2 + usize::from(raw[1])].to_vec()
}

#[test]
fn sealer_round_trip() {
    let sealer = Sealer::new(ring("k1", 1));
    for len in [0usize, 1, 15, 16, 17, 255, 256, 4096] {
        let plaintext: Vec<u8> = (0..len).map(|i| (i * 31) as u8).collect();
        let token = sealer.seal(&plaintext);
        assert!(
            token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "not base64url without padding: {token}"
        );
        assert_eq!(sealer.open(&token).unwrap(), plaintext);
    }
}

#[test]
fn guard_round_trip() {
    let (guard, _clock, token) = guard_and_token();
    let args = args();
    let claims = guard
        .verify(&token, &binding(&args, Some("alice")))
        .unwrap();
    assert_eq!(claims.principal.as_deref(), Some("alice"));
    assert_eq!(claims.method, "tools/call");
    assert_eq!(claims.target, "get_weather");
    assert_eq!(claims.args, args);
    assert_eq!(claims.issued_at, T0);
    assert_eq!(claims.expires_at, T0 + 5 * 60 * 1000);
    assert_eq!(claims.asked["login"], "elicit:abc");
    assert_eq!(claims.answers["units"]["action"], "accept");
    assert_eq!(claims.app, Some(json!({"step": 2})));
    assert_eq!(URL_SAFE_NO_PAD.decode(&claims.jti).unwrap().len(), 16);
}

#[test]
fn issue_sets_fresh_ids_and_replaces_times() {
    let (guard, _clock, _) = guard_and_token();
    let args = args();
    let mut claims = StateClaims::new(&binding(&args, None));
    claims.jti = "chosen-by-caller".into();
    claims.issued_at = 1;
    claims.expires_at = u64::MAX;
    let mut ids = BTreeSet::new();
    for _ in 0..100 {
        let token = guard.issue(claims.clone()).unwrap();
        let got = guard.verify(&token, &binding(&args, None)).unwrap();
        assert_eq!(got.issued_at, T0);
        assert_eq!(got.expires_at, T0 + guard.ttl().as_millis() as u64);
        assert!(ids.insert(got.jti));
    }
}

#[test]
fn every_single_byte_flip_is_rejected() {
    let (guard, _clock, token) = guard_and_token();
    let args = args();
    let expected = binding(&args, Some("alice"));
    let raw = URL_SAFE_NO_PAD.decode(&token).unwrap();
    for i in 0..raw.len() {
        for mask in [0x01u8, 0x02, 0x10, 0x80, 0xff] {
            let mut tampered = raw.clone();
            tampered[i] ^= mask;
            let tampered = URL_SAFE_NO_PAD.encode(&tampered);
            let reason = reason_of(guard.verify(&tampered, &expected));
            assert!(
                matches!(
                    reason,
                    RejectReason::UnsupportedVersion(_)
                        | RejectReason::MalformedHeader
                        | RejectReason::UnknownKeyId
                        | RejectReason::TooShort
                        | RejectReason::BadSeal
                ),
                "byte {i} mask {mask:#x}: {reason:?}"
            );
        }
    }
}

#[test]
fn every_single_character_substitution_is_rejected() {
    // Includes substitutions that only change the unused low bits of the last
    // character, which a lenient base64 decoder would silently accept.
    let sealer = Sealer::new(ring("k1", 1));
    for len in [0usize, 1, 2, 3] {
        let token = sealer.seal(&vec![9u8; len]);
        for i in 0..token.len() {
            for &c in B64URL {
                if token.as_bytes()[i] == c {
                    continue;
                }
                let mut tampered = token.clone().into_bytes();
                tampered[i] = c;
                let tampered = String::from_utf8(tampered).unwrap();
                assert!(
                    sealer.open(&tampered).is_err(),
                    "len {len}, position {i}, char {}",
                    c as char
                );
            }
        }
    }
}

#[test]
fn truncation_at_every_length_is_rejected() {
    let (guard, _clock, token) = guard_and_token();
    let args = args();
    let expected = binding(&args, Some("alice"));
    for len in 0..token.len() {
        let reason = reason_of(guard.verify(&token[..len], &expected));
        if len == 0 {
            assert_eq!(reason, RejectReason::Empty);
        }
    }
    // Also truncations of the decoded bytes, re-encoded canonically.
    let raw = URL_SAFE_NO_PAD.decode(&token).unwrap();
    for len in 0..raw.len() {
        let truncated = URL_SAFE_NO_PAD.encode(&raw[..len]);
        assert!(guard.verify(&truncated, &expected).is_err(), "len {len}");
    }
}

#[test]
fn appended_data_and_padding_are_rejected() {
    let (guard, _clock, token) = guard_and_token();
    let args = args();
    let expected = binding(&args, Some("alice"));
    for suffix in ["A", "AA", "AAAA", "=", "==", " ", "\n", ".x"] {
        assert!(
            guard
                .verify(&format!("{token}{suffix}"), &expected)
                .is_err(),
            "{suffix:?}"
        );
        assert!(
            guard
                .verify(&format!("{suffix}{token}"), &expected)
                .is_err(),
            "{suffix:?}"
        );
    }
    let mut raw = URL_SAFE_NO_PAD.decode(&token).unwrap();
    raw.push(0);
    assert_eq!(
        reason_of(guard.verify(&URL_SAFE_NO_PAD.encode(&raw), &expected)),
        RejectReason::BadSeal
    );
}

#[test]
fn empty_and_garbage_tokens_are_rejected() {
    let sealer = Sealer::new(ring("k1", 1));
    assert_eq!(reason_of(sealer.open("")), RejectReason::Empty);
    assert_eq!(reason_of(sealer.open("abc")), RejectReason::TooShort);
    let not_b64 = "!".repeat(100);
    assert_eq!(reason_of(sealer.open(&not_b64)), RejectReason::NotBase64);
    let standard_alphabet = "+/".repeat(50);
    assert_eq!(
        reason_of(sealer.open(&standard_alphabet)),
        RejectReason::NotBase64
    );
    let zeros = URL_SAFE_NO_PAD.encode([0u8; 100]);
    assert_eq!(
        reason_of(sealer.open(&zeros)),
        RejectReason::UnsupportedVersion(0)
    );
}

#[test]
fn huge_token_is_rejected_before_decoding() {
    let sealer = Sealer::new(ring("k1", 1));
    // Valid base64url characters, so only the length check can refuse it early.
    // The reason names the length check: nothing was decoded or decrypted.
    let huge = "A".repeat(1024 * 1024);
    let reason = reason_of(sealer.open(&huge));
    assert_eq!(
        reason,
        RejectReason::TooLong {
            len: huge.len(),
            max: DEFAULT_MAX_TOKEN_LEN
        }
    );

    let small = Sealer::new(ring("k1", 1)).with_max_token_len(64);
    let token = small.seal(&[0u8; 64]);
    assert!(matches!(
        reason_of(small.open(&token)),
        RejectReason::TooLong { max: 64, .. }
    ));
}

#[test]
fn unknown_key_id_is_rejected() {
    let a = Sealer::new(ring("a", 1));
    let b = Sealer::new(ring("b", 1));
    let token = a.seal(b"hello");
    assert_eq!(reason_of(b.open(&token)), RejectReason::UnknownKeyId);
}

#[test]
fn same_key_id_with_other_material_is_rejected() {
    let a = Sealer::new(ring("k1", 1));
    let b = Sealer::new(ring("k1", 2));
    let token = a.seal(b"hello");
    assert_eq!(reason_of(b.open(&token)), RejectReason::BadSeal);
}

#[test]
fn key_id_swapped_in_header_is_rejected() {
    // Both keys are in the ring: relabelling a token with the other key id
    // must fail authentication, not open under the other key.
    let ring = ring("a", 1).with_old_key(key("b", 2)).unwrap();
    let sealer = Sealer::new(ring);
    let token = sealer.seal(b"hello");
    let mut raw = URL_SAFE_NO_PAD.decode(&token).unwrap();
    assert_eq!(&raw[2..3], b"a");
    raw[2] = b'b';
    assert_eq!(
        reason_of(sealer.open(&URL_SAFE_NO_PAD.encode(&raw))),
        RejectReason::BadSeal
    );
}

#[test]
fn token_of_retired_key_is_rejected() {
    let mut ring = ring("old", 1);
    let before = Sealer::new(ring.clone()).seal(b"hello");
    ring.rotate(key("new", 2)).unwrap();
    assert_eq!(Sealer::new(ring.clone()).open(&before).unwrap(), b"hello");
    assert!(ring.retire(kid("old")));
    assert_eq!(
        reason_of(Sealer::new(ring).open(&before)),
        RejectReason::UnknownKeyId
    );
}

#[test]
fn rotation_keeps_old_tokens_and_seals_with_new_key() {
    let clock = Arc::new(ManualClock::new(T0));
    let args = args();
    let expected = binding(&args, Some("alice"));

    let mut keys = ring("k1", 1);
    let old_guard = StateGuard::new(keys.clone()).with_clock(Arc::clone(&clock));
    let old_token = old_guard.issue(StateClaims::new(&expected)).unwrap();
    assert_eq!(header_kid(&old_token), b"k1");

    keys.rotate(key("k2", 2)).unwrap();
    let new_guard = StateGuard::new(keys).with_clock(Arc::clone(&clock));
    assert!(new_guard.verify(&old_token, &expected).is_ok());
    let new_token = new_guard.issue(StateClaims::new(&expected)).unwrap();
    assert_eq!(header_kid(&new_token), b"k2");
    assert!(new_guard.verify(&new_token, &expected).is_ok());
    // The old deployment cannot open tokens of the new key.
    assert_eq!(
        reason_of(old_guard.verify(&new_token, &expected)),
        RejectReason::UnknownKeyId
    );
}

#[test]
fn rotation_from_configuration_strings() {
    let k1 = Key::generate(kid("k1")).to_text();
    let k2 = Key::generate(kid("k2")).to_text();
    let before = Sealer::new(KeyRing::parse(&k1).unwrap());
    let after = Sealer::new(KeyRing::parse(&format!("{},{}", &*k2, &*k1)).unwrap());
    let token = before.seal(b"x");
    assert_eq!(after.open(&token).unwrap(), b"x");
    assert_eq!(header_kid(&after.seal(b"y")), b"k2");
}

#[test]
fn expiry_uses_the_injected_clock() {
    let (guard, clock, token) = guard_and_token();
    let args = args();
    let expected = binding(&args, Some("alice"));
    let ttl = guard.ttl();

    clock.advance(ttl - Duration::from_millis(1));
    assert!(guard.verify(&token, &expected).is_ok());
    clock.advance(Duration::from_millis(1));
    assert_eq!(
        reason_of(guard.verify(&token, &expected)),
        RejectReason::Expired
    );
    clock.advance(Duration::from_secs(3600));
    assert_eq!(
        reason_of(guard.verify(&token, &expected)),
        RejectReason::Expired
    );

    // Explicit time.
    assert!(guard.verify_at(&token, &expected, T0).is_ok());
    assert_eq!(
        reason_of(guard.verify_at(&token, &expected, u64::MAX)),
        RejectReason::Expired
    );
}

#[test]
fn custom_ttl() {
    let clock = Arc::new(ManualClock::new(T0));
    let guard = StateGuard::new(ring("k1", 1))
        .with_ttl(Duration::from_secs(10))
        .with_clock(Arc::clone(&clock));
    let args = args();
    let expected = binding(&args, None);
    let token = guard.issue(StateClaims::new(&expected)).unwrap();
    clock.advance(Duration::from_millis(9_999));
    assert!(guard.verify(&token, &expected).is_ok());
    clock.advance(Duration::from_millis(1));
    assert_eq!(
        reason_of(guard.verify(&token, &expected)),
        RejectReason::Expired
    );
}

#[test]
fn token_from_the_future_is_rejected_beyond_skew() {
    let (guard, _clock, token) = guard_and_token();
    let args = args();
    let expected = binding(&args, Some("alice"));
    let skew = guard.clock_skew().as_millis() as u64;
    assert!(guard.verify_at(&token, &expected, T0 - skew).is_ok());
    assert_eq!(
        reason_of(guard.verify_at(&token, &expected, T0 - skew - 1)),
        RejectReason::IssuedInFuture
    );
}

#[test]
fn other_principal_is_rejected() {
    let (guard, _clock, token) = guard_and_token();
    let args = args();
    for principal in ["mallory", "alice ", "Alice", "alicE", "", "alice\0"] {
        assert_eq!(
            reason_of(guard.verify(&token, &binding(&args, Some(principal)))),
            RejectReason::PrincipalMismatch,
            "{principal:?}"
        );
    }
}

#[test]
fn anonymous_and_authenticated_do_not_mix() {
    let (guard, _clock, token) = guard_and_token();
    let args = args();
    // Issued to alice, presented anonymously.
    assert_eq!(
        reason_of(guard.verify(&token, &binding(&args, None))),
        RejectReason::PrincipalMismatch
    );
    // Issued anonymously, presented by a principal (even one named "").
    let anon = guard
        .issue(StateClaims::new(&binding(&args, None)))
        .unwrap();
    assert!(guard.verify(&anon, &binding(&args, None)).is_ok());
    for principal in ["alice", ""] {
        assert_eq!(
            reason_of(guard.verify(&anon, &binding(&args, Some(principal)))),
            RejectReason::PrincipalMismatch
        );
    }
}

#[test]
fn other_method_target_or_args_are_rejected() {
    let (guard, _clock, token) = guard_and_token();
    let args = args();
    let good = binding(&args, Some("alice"));
    for method in ["prompts/get", "resources/read", "tools/call ", "tools/list"] {
        assert_eq!(
            reason_of(guard.verify(&token, &Binding { method, ..good })),
            RejectReason::MethodMismatch
        );
    }
    for target in ["get_weathe", "get_weather2", "delete_repo", ""] {
        assert_eq!(
            reason_of(guard.verify(&token, &Binding { target, ..good })),
            RejectReason::TargetMismatch
        );
    }
    let other_args = digest_args(&json!({"location": "Paris", "units": "metric"}));
    let more_args = digest_args(&json!({"location": "New York", "units": "metric", "x": 1}));
    for args in [other_args.as_str(), more_args.as_str(), ""] {
        assert_eq!(
            reason_of(guard.verify(&token, &Binding { args, ..good })),
            RejectReason::ArgsMismatch
        );
    }
}

#[test]
fn args_digest_is_canonical() {
    let a: serde_json::Value = serde_json::from_str(
        r#"{"units":"metric","location":"New York","opts":{"b":[1,2],"a":null}}"#,
    )
    .unwrap();
    let b: serde_json::Value = serde_json::from_str(
        r#"{ "opts" : { "a" : null, "b" : [1, 2] }, "location" : "New York", "units" : "metric" }"#,
    )
    .unwrap();
    assert_eq!(digest_args(&a), digest_args(&b));

    // A token issued for one key order verifies for the other.
    let (guard, _clock, _) = guard_and_token();
    let da = digest_args(&a);
    let db = digest_args(&b);
    let token = guard
        .issue(StateClaims::new(&Binding::new("tools/call", "t", &da)))
        .unwrap();
    assert!(
        guard
            .verify(&token, &Binding::new("tools/call", "t", &db))
            .is_ok()
    );
}

#[test]
fn claims_too_large_are_refused_at_issue() {
    let guard = StateGuard::new(ring("k1", 1));
    let args = args();
    let expected = binding(&args, None);
    let mut claims = StateClaims::new(&expected);
    claims
        .answers
        .insert("big".into(), json!("x".repeat(DEFAULT_MAX_TOKEN_LEN)));
    match guard.issue(claims) {
        Err(IssueError::TooLarge { len, max }) => {
            assert_eq!(max, DEFAULT_MAX_TOKEN_LEN);
            assert!(len > max);
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }

    // With a smaller limit, find the boundary: the largest accepted token is
    // within the limit and is accepted back.
    let guard = StateGuard::new(ring("k1", 1)).with_max_token_len(1024);
    let mut last_ok = None;
    for n in 0..1024 {
        let mut claims = StateClaims::new(&expected);
        claims.app = Some(json!("y".repeat(n)));
        match guard.issue(claims) {
            Ok(token) => {
                assert!(token.len() <= 1024);
                last_ok = Some(token);
            }
            Err(IssueError::TooLarge { len, max: 1024 }) => {
                assert!(len > 1024);
                break;
            }
            Err(err) => panic!("{err}"),
        }
    }
    let token = last_ok.unwrap();
    assert!(token.len() > 1000);
    assert!(guard.verify(&token, &expected).is_ok());
}

#[test]
fn sealed_non_claims_payload_is_rejected() {
    let (guard, _clock, _) = guard_and_token();
    let args = args();
    let expected = binding(&args, Some("alice"));
    for payload in [&b""[..], b"null", b"{}", b"not json", br#"{"j":"x"}"#] {
        let token = guard.sealer().seal(payload);
        assert_eq!(
            reason_of(guard.verify(&token, &expected)),
            RejectReason::MalformedClaims
        );
    }
}

#[test]
fn token_from_another_deployment_is_rejected() {
    let (_, _, token) = guard_and_token();
    let other = StateGuard::new(ring("k1", 8));
    let args = args();
    assert_eq!(
        reason_of(other.verify(&token, &binding(&args, Some("alice")))),
        RejectReason::BadSeal
    );
    let ephemeral = StateGuard::new(KeyRing::random());
    assert!(
        ephemeral
            .verify(&token, &binding(&args, Some("alice")))
            .is_err()
    );
}

#[test]
fn debug_output_never_shows_key_material() {
    let key = Key::generate(kid("k1"));
    let text = key.to_text();
    let material = text.split_once(':').unwrap().1.to_owned();
    let ring = KeyRing::new(key);
    let guard = StateGuard::new(ring.clone());
    for debug in [
        format!("{ring:?}"),
        format!("{guard:?}"),
        format!("{:?}", guard.sealer()),
        format!("{:?}", ring.primary()),
    ] {
        assert!(!debug.contains(&material), "{debug}");
        assert!(debug.contains("k1"), "{debug}");
    }
}
