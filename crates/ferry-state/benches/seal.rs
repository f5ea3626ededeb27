//! Benchmarks: issuing and verifying a typical `requestState`, and raw sealing.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ferry_state::{
    Binding, Key, KeyId, KeyRing, ManualClock, Sealer, StateClaims, StateGuard, digest_args,
};
use serde_json::json;

fn ring() -> KeyRing {
    KeyRing::new(Key::from_bytes(KeyId::from_u32(1), [7; 32]))
}

/// A state after two rounds: two answered inputs, one pending, handler state.
fn typical_claims(binding: &Binding<'_>) -> StateClaims {
    let mut claims = StateClaims::new(binding);
    claims.asked.insert(
        "confirm".into(),
        "elicit:Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFy".into(),
    );
    claims.answers.insert(
        "github_login".into(),
        json!({"action": "accept", "content": {"name": "octocat"}}),
    );
    claims.answers.insert(
        "capital_of_france".into(),
        json!({
            "role": "assistant",
            "content": {"type": "text", "text": "The capital of France is Paris."},
            "model": "claude-3-sonnet-20240307",
            "stopReason": "endTurn"
        }),
    );
    claims.app = Some(json!({"step": 3, "cursor": "abc123", "retries": 0}));
    claims
}

fn guard(c: &mut Criterion) {
    let now = 1_800_000_000_000;
    let guard = StateGuard::new(ring()).with_clock(Arc::new(ManualClock::new(now)));
    let args = digest_args(&json!({"name": "get_weather", "arguments": {"location": "New York"}}));
    let binding =
        Binding::new("tools/call", "get_weather", &args).with_principal(Some("user-1234"));
    let claims = typical_claims(&binding);
    let token = guard.issue(claims.clone()).unwrap_or_default();

    let mut group = c.benchmark_group("state");
    group.bench_function(format!("issue ({} B token)", token.len()), |b| {
        b.iter(|| guard.issue(black_box(claims.clone())))
    });
    group.bench_function(format!("verify ({} B token)", token.len()), |b| {
        b.iter(|| guard.verify(black_box(&token), black_box(&binding)))
    });
    group.bench_function("digest_args", |b| {
        let params = json!({"name": "get_weather", "arguments": {"location": "New York", "units": "metric"}});
        b.iter(|| digest_args(black_box(&params)))
    });
    group.finish();
}

fn sealer(c: &mut Criterion) {
    let sealer = Sealer::new(ring());
    let mut group = c.benchmark_group("sealer");
    for size in [256usize, 4096] {
        let plaintext = vec![0x5a; size];
        let token = sealer.seal(&plaintext);
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_function(format!("seal {size} B"), |b| {
            b.iter(|| sealer.seal(black_box(&plaintext)))
        });
        group.bench_function(format!("open {size} B"), |b| {
            b.iter(|| sealer.open(black_box(&token)))
        });
    }
    group.finish();
}

criterion_group!(benches, guard, sealer);
criterion_main!(benches);
