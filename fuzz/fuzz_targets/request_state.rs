//! Opening `requestState` tokens (ferry-state) with a fixed key.
//!
//! The first input byte picks the mode:
//! - even: the rest, as text, is a token from a client. It must be refused (by the
//!   guard and by the bare sealer), never panic; only a token sealed under the key could
//!   pass, and the fuzzer cannot make one.
//! - odd: a real state is issued (its handler state made from the input), checked to
//!   verify to exactly the claims sealed, to be refused on another request, and then
//!   altered at the positions the rest of the input names: any altered token is refused.
#![no_main]

use std::sync::LazyLock;

use ferry_state::{Binding, Key, KeyId, KeyRing, Sealer, StateClaims, StateGuard, digest_args};
use libfuzzer_sys::fuzz_target;
use serde_json::json;

/// Fixed time: the states the target issues are fresh at it.
const NOW_MS: u64 = 1_780_000_000_000;
const BASE64URL: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn ring() -> KeyRing {
    let id = KeyId::new("k1").expect("a valid key id");
    KeyRing::new(Key::from_bytes(id, [0x42; 32]))
}

static GUARD: LazyLock<StateGuard> = LazyLock::new(|| StateGuard::new(ring()));
static SEALER: LazyLock<Sealer> = LazyLock::new(|| Sealer::new(ring()));
static ARGS: LazyLock<String> = LazyLock::new(|| digest_args(&json!({"location": "New York"})));

fn binding() -> Binding<'static> {
    Binding::new("tools/call", "get_weather", &ARGS).with_principal(Some("alice"))
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        let token = String::from_utf8_lossy(rest);
        assert!(
            GUARD.verify_at(&token, &binding(), NOW_MS).is_err(),
            "forged state accepted"
        );
        assert!(SEALER.open(&token).is_err(), "forged token opened");
        return;
    }

    let (payload, edits) = rest.split_at(rest.len().min(64));
    let mut claims = StateClaims::new(&binding());
    claims.app = Some(json!(String::from_utf8_lossy(payload)));
    let token = GUARD.issue_at(claims, NOW_MS).expect("a small state seals");
    let opened = GUARD
        .verify_at(&token, &binding(), NOW_MS + 1)
        .expect("a fresh state verifies");
    assert_eq!(opened.app, Some(json!(String::from_utf8_lossy(payload))));
    let other = Binding::new("tools/call", "delete_repo", &ARGS).with_principal(Some("alice"));
    assert!(GUARD.verify_at(&token, &other, NOW_MS + 1).is_err());
    let stranger = Binding::new("tools/call", "get_weather", &ARGS).with_principal(Some("mallory"));
    assert!(GUARD.verify_at(&token, &stranger, NOW_MS + 1).is_err());

    let mut altered = token.clone().into_bytes();
    for edit in edits.chunks_exact(3) {
        let at = usize::from(u16::from_le_bytes([edit[0], edit[1]])) % altered.len();
        altered[at] = BASE64URL[usize::from(edit[2]) % BASE64URL.len()];
    }
    let altered = String::from_utf8(altered).expect("base64url is ASCII");
    if altered != token {
        assert!(
            GUARD.verify_at(&altered, &binding(), NOW_MS + 1).is_err(),
            "an altered state verified"
        );
        assert!(SEALER.open(&altered).is_err(), "an altered token opened");
    }
});
