//! Single-use redemption: memory and redb ledgers.

use std::sync::Arc;
use std::time::Duration;

use ferry_state::{
    Binding, KeyRing, LedgerError, MAX_JTI_LEN, ManualClock, MemoryLedger, REJECTED_MESSAGE,
    RedbLedger, RedeemError, Redemption, RejectReason, ReplayLedger, StateClaims, StateGuard,
    digest_args,
};
use futures::executor::block_on;
use serde_json::json;

const T0: u64 = 1_800_000_000_000;

/// Redeems `jti` from `tasks` concurrent tasks and counts each outcome.
async fn race(ledger: Arc<dyn ReplayLedger>, jti: &str, tasks: usize) -> (usize, usize) {
    let barrier = Arc::new(tokio::sync::Barrier::new(tasks));
    let handles: Vec<_> = (0..tasks)
        .map(|_| {
            let ledger = Arc::clone(&ledger);
            let barrier = Arc::clone(&barrier);
            let jti = jti.to_owned();
            tokio::spawn(async move {
                barrier.wait().await;
                ledger.redeem(&jti, u64::MAX).await
            })
        })
        .collect();
    let (mut first, mut replayed) = (0, 0);
    for handle in handles {
        match handle.await.unwrap().unwrap() {
            Redemption::First => first += 1,
            Redemption::Replayed => replayed += 1,
        }
    }
    (first, replayed)
}

/// Many tasks redeem `ids` distinct ids, each `copies` times, interleaved.
async fn race_many(ledger: Arc<dyn ReplayLedger>, ids: usize, copies: usize) -> usize {
    let handles: Vec<_> = (0..ids * copies)
        .map(|i| {
            let ledger = Arc::clone(&ledger);
            tokio::spawn(async move {
                let jti = format!("id-{}", i % ids);
                ledger.redeem(&jti, u64::MAX).await.unwrap()
            })
        })
        .collect();
    let mut first = 0;
    for handle in handles {
        if handle.await.unwrap().is_first() {
            first += 1;
        }
    }
    first
}

// ---------------------------------------------------------------- memory

#[test]
fn memory_second_redeem_is_replayed() {
    let ledger = MemoryLedger::new(10);
    block_on(async {
        assert_eq!(
            ledger.redeem("a", u64::MAX).await.unwrap(),
            Redemption::First
        );
        assert_eq!(
            ledger.redeem("a", u64::MAX).await.unwrap(),
            Redemption::Replayed
        );
        assert_eq!(
            ledger.redeem("a", u64::MAX).await.unwrap(),
            Redemption::Replayed
        );
        assert_eq!(
            ledger.redeem("b", u64::MAX).await.unwrap(),
            Redemption::First
        );
    });
    assert_eq!(ledger.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn memory_concurrent_redeems_yield_exactly_one_first() {
    let ledger: Arc<dyn ReplayLedger> = Arc::new(MemoryLedger::new(1_000));
    for round in 0..20 {
        let (first, replayed) = race(Arc::clone(&ledger), &format!("jti-{round}"), 64).await;
        assert_eq!((first, replayed), (1, 63));
    }
    assert_eq!(race_many(ledger, 50, 8).await, 50);
}

#[test]
fn memory_concurrent_threads_yield_exactly_one_first() {
    let ledger = Arc::new(MemoryLedger::new(1_000));
    let barrier = Arc::new(std::sync::Barrier::new(16));
    let threads: Vec<_> = (0..16)
        .map(|_| {
            let ledger = Arc::clone(&ledger);
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                ledger.redeem_now("same", u64::MAX).unwrap()
            })
        })
        .collect();
    let firsts = threads
        .into_iter()
        .map(|t| t.join().unwrap())
        .filter(|r| r.is_first())
        .count();
    assert_eq!(firsts, 1);
}

#[test]
fn memory_expired_entries_are_purged() {
    let clock = Arc::new(ManualClock::new(T0));
    let ledger = MemoryLedger::new(10)
        .with_clock(Arc::clone(&clock))
        .with_retention_margin(Duration::from_secs(60));
    ledger.redeem_now("short", T0 + 1_000).unwrap();
    ledger.redeem_now("long", T0 + 100_000).unwrap();
    assert_eq!(ledger.len(), 2);

    // Expired, but still within the retention margin: still a replay.
    clock.set(T0 + 1_000);
    assert_eq!(ledger.purge_expired(), 0);
    assert_eq!(
        ledger.redeem_now("short", T0 + 1_000).unwrap(),
        Redemption::Replayed
    );

    // Past expiry plus margin: purged.
    clock.set(T0 + 61_000);
    assert_eq!(ledger.purge_expired(), 1);
    assert_eq!(ledger.len(), 1);
    assert_eq!(
        ledger.redeem_now("long", T0 + 100_000).unwrap(),
        Redemption::Replayed
    );

    // Redemptions purge on their own.
    clock.set(T0 + 500_000);
    ledger.redeem_now("new", T0 + 600_000).unwrap();
    assert_eq!(ledger.len(), 1);
}

#[test]
fn memory_records_go_with_their_second_and_ids_are_known_whatever_their_expiry() {
    let clock = Arc::new(ManualClock::new(T0));
    let ledger = MemoryLedger::new(10)
        .with_clock(Arc::clone(&clock))
        .with_retention_margin(Duration::ZERO);
    ledger.redeem_now("a", T0 + 1_200).unwrap();
    ledger.redeem_now("b", T0 + 1_900).unwrap();
    ledger.redeem_now("c", T0 + 2_000).unwrap();
    // An id is one whatever expiry it comes with.
    assert_eq!(
        ledger.redeem_now("a", T0 + 50_000).unwrap(),
        Redemption::Replayed
    );
    // Past a's purge time but within its second: kept (a replay still).
    clock.set(T0 + 1_500);
    assert_eq!(ledger.purge_expired(), 0);
    assert_eq!(
        ledger.redeem_now("a", T0 + 1_200).unwrap(),
        Redemption::Replayed
    );
    // The second's end: a and b go, c (purged at a whole second) with them.
    clock.set(T0 + 2_000);
    assert_eq!(ledger.purge_expired(), 3);
    assert!(ledger.is_empty());
}

#[test]
fn memory_fails_closed_when_full() {
    let clock = Arc::new(ManualClock::new(T0));
    let ledger = MemoryLedger::new(3)
        .with_clock(Arc::clone(&clock))
        .with_retention_margin(Duration::ZERO);
    for id in ["a", "b", "c"] {
        assert!(ledger.redeem_now(id, T0 + 1_000).unwrap().is_first());
    }
    for _ in 0..3 {
        assert!(matches!(
            ledger.redeem_now("d", T0 + 1_000),
            Err(LedgerError::Full { capacity: 3 })
        ));
    }
    // Known ids are still recognized as replays while full: nothing was forgotten.
    for id in ["a", "b", "c"] {
        assert_eq!(
            ledger.redeem_now(id, T0 + 1_000).unwrap(),
            Redemption::Replayed
        );
    }
    assert_eq!(ledger.len(), 3);

    // Once the records expire, there is room again.
    clock.set(T0 + 1_000);
    assert!(ledger.redeem_now("d", T0 + 2_000).unwrap().is_first());
    assert_eq!(ledger.len(), 1);

    let none = MemoryLedger::new(0);
    assert!(matches!(
        none.redeem_now("x", u64::MAX),
        Err(LedgerError::Full { capacity: 0 })
    ));
}

#[test]
fn memory_rejects_invalid_ids() {
    let ledger = MemoryLedger::new(10);
    assert!(matches!(
        ledger.redeem_now("", u64::MAX),
        Err(LedgerError::InvalidId)
    ));
    assert!(matches!(
        ledger.redeem_now(&"x".repeat(MAX_JTI_LEN + 1), u64::MAX),
        Err(LedgerError::InvalidId)
    ));
    assert!(
        ledger
            .redeem_now(&"x".repeat(MAX_JTI_LEN), u64::MAX)
            .is_ok()
    );
}

// ---------------------------------------------------------------- redb

#[test]
fn redb_second_redeem_is_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = RedbLedger::open(dir.path().join("l.redb")).unwrap();
    block_on(async {
        assert_eq!(
            ledger.redeem("a", u64::MAX).await.unwrap(),
            Redemption::First
        );
        assert_eq!(
            ledger.redeem("a", u64::MAX).await.unwrap(),
            Redemption::Replayed
        );
        assert_eq!(
            ledger.redeem("b", u64::MAX).await.unwrap(),
            Redemption::First
        );
        assert!(matches!(
            ledger.redeem("", u64::MAX).await,
            Err(LedgerError::InvalidId)
        ));
    });
    assert_eq!(ledger.len().unwrap(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn redb_concurrent_redeems_yield_exactly_one_first() {
    let dir = tempfile::tempdir().unwrap();
    let ledger: Arc<dyn ReplayLedger> =
        Arc::new(RedbLedger::open(dir.path().join("l.redb")).unwrap());
    for round in 0..10 {
        let (first, replayed) = race(Arc::clone(&ledger), &format!("jti-{round}"), 64).await;
        assert_eq!((first, replayed), (1, 63));
    }
    // Duplicates spread over batches and within the same transaction.
    assert_eq!(race_many(ledger, 100, 8).await, 100);
}

#[test]
fn redb_works_across_threads() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Arc::new(RedbLedger::open(dir.path().join("l.redb")).unwrap());
    let barrier = Arc::new(std::sync::Barrier::new(16));
    let threads: Vec<_> = (0..16)
        .map(|t| {
            let ledger = Arc::clone(&ledger);
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                let mut firsts = 0;
                for i in 0..20 {
                    // Every thread tries the same 20 shared ids and 20 of its own.
                    if block_on(ledger.redeem(&format!("shared-{i}"), u64::MAX))
                        .unwrap()
                        .is_first()
                    {
                        firsts += 1;
                    }
                    assert!(
                        block_on(ledger.redeem(&format!("own-{t}-{i}"), u64::MAX))
                            .unwrap()
                            .is_first()
                    );
                }
                firsts
            })
        })
        .collect();
    let firsts: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(firsts, 20);
    assert_eq!(ledger.len().unwrap(), 20 + 16 * 20);
}

#[test]
fn redb_survives_close_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("l.redb");
    {
        let ledger = RedbLedger::open(&path).unwrap();
        for id in ["a", "b", "c"] {
            assert!(block_on(ledger.redeem(id, u64::MAX)).unwrap().is_first());
        }
    }
    {
        let ledger = RedbLedger::open(&path).unwrap();
        assert_eq!(ledger.len().unwrap(), 3);
        for id in ["a", "b", "c"] {
            assert_eq!(
                block_on(ledger.redeem(id, u64::MAX)).unwrap(),
                Redemption::Replayed
            );
        }
        assert!(block_on(ledger.redeem("d", u64::MAX)).unwrap().is_first());
    }
    let ledger = RedbLedger::open(&path).unwrap();
    assert_eq!(
        block_on(ledger.redeem("d", u64::MAX)).unwrap(),
        Redemption::Replayed
    );
}

#[test]
fn redb_second_open_of_the_same_file_fails() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("l.redb");
    let _ledger = RedbLedger::open(&path).unwrap();
    assert!(matches!(
        RedbLedger::open(&path),
        Err(LedgerError::Storage(_))
    ));
}

#[test]
fn redb_expired_entries_are_purged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("l.redb");
    let clock = Arc::new(ManualClock::new(T0));
    let open = || {
        RedbLedger::builder()
            .clock(Arc::clone(&clock))
            .retention_margin(Duration::from_secs(60))
            .open(&path)
            .unwrap()
    };
    let ledger = open();
    block_on(async {
        ledger.redeem("short", T0 + 1_000).await.unwrap();
        ledger.redeem("long", T0 + 100_000).await.unwrap();
    });
    assert_eq!(ledger.len().unwrap(), 2);

    // Expired but within the margin: kept, still a replay.
    clock.set(T0 + 60_999);
    assert_eq!(block_on(ledger.purge_expired()).unwrap(), 0);
    assert_eq!(
        block_on(ledger.redeem("short", T0 + 1_000)).unwrap(),
        Redemption::Replayed
    );

    clock.set(T0 + 61_000);
    assert_eq!(block_on(ledger.purge_expired()).unwrap(), 1);
    assert_eq!(ledger.len().unwrap(), 1);

    // Purges persist.
    drop(ledger);
    let ledger = open();
    assert_eq!(ledger.len().unwrap(), 1);
    assert_eq!(
        block_on(ledger.redeem("long", T0 + 100_000)).unwrap(),
        Redemption::Replayed
    );

    // Redemptions purge on their own.
    clock.set(T0 + 1_000_000);
    assert!(
        block_on(ledger.redeem("new", T0 + 2_000_000))
            .unwrap()
            .is_first()
    );
    assert_eq!(ledger.len().unwrap(), 1);
}

#[test]
fn redb_fails_closed_when_full() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(T0));
    let ledger = RedbLedger::builder()
        .clock(Arc::clone(&clock))
        .retention_margin(Duration::ZERO)
        .capacity(2)
        .open(dir.path().join("l.redb"))
        .unwrap();
    block_on(async {
        assert!(ledger.redeem("a", T0 + 10).await.unwrap().is_first());
        assert!(ledger.redeem("b", T0 + 10).await.unwrap().is_first());
        assert!(matches!(
            ledger.redeem("c", T0 + 10).await,
            Err(LedgerError::Full { capacity: 2 })
        ));
        assert_eq!(
            ledger.redeem("a", T0 + 10).await.unwrap(),
            Redemption::Replayed
        );
        clock.set(T0 + 10);
        assert!(ledger.redeem("c", T0 + 20).await.unwrap().is_first());
    });
    assert_eq!(ledger.len().unwrap(), 1);
}

// ---------------------------------------------------------------- guard + ledger

fn redeem_twice(ledger: &dyn ReplayLedger) {
    let guard = StateGuard::new(KeyRing::random());
    let args = digest_args(&json!({"q": 1}));
    let binding = Binding::new("tools/call", "t", &args).with_principal(Some("alice"));
    let token = guard.issue(StateClaims::new(&binding)).unwrap();

    let claims = block_on(guard.verify_and_redeem(&token, &binding, ledger)).unwrap();
    assert_eq!(claims.target, "t");
    match block_on(guard.verify_and_redeem(&token, &binding, ledger)) {
        Err(RedeemError::Rejected(err)) => {
            assert_eq!(err.reason(), RejectReason::Replayed);
            assert_eq!(err.to_string(), REJECTED_MESSAGE);
        }
        other => panic!("expected a replay rejection, got {other:?}"),
    }
    // A bad token is rejected before the ledger is consulted.
    let other = Binding::new("tools/call", "u", &args).with_principal(Some("alice"));
    match block_on(guard.verify_and_redeem(&token, &other, ledger)) {
        Err(RedeemError::Rejected(err)) => {
            assert_eq!(err.reason(), RejectReason::TargetMismatch);
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
}

#[test]
fn guard_redeems_once_with_memory_ledger() {
    redeem_twice(&MemoryLedger::default());
}

#[test]
fn guard_redeems_once_with_redb_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let ledger: Box<dyn ReplayLedger> =
        Box::new(RedbLedger::open(dir.path().join("l.redb")).unwrap());
    redeem_twice(&ledger);
}

#[test]
fn guard_fails_closed_on_ledger_error() {
    let guard = StateGuard::new(KeyRing::random());
    let args = digest_args(&json!({}));
    let binding = Binding::new("tools/call", "t", &args);
    let token = guard.issue(StateClaims::new(&binding)).unwrap();
    let full = MemoryLedger::new(0);
    assert!(matches!(
        block_on(guard.verify_and_redeem(&token, &binding, &full)),
        Err(RedeemError::Ledger(LedgerError::Full { .. }))
    ));
}

#[test]
fn types_are_thread_safe_and_futures_are_send() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>(_: &T) {}
    send_sync::<StateGuard>();
    send_sync::<ferry_state::Sealer>();
    send_sync::<KeyRing>();
    send_sync::<MemoryLedger>();
    send_sync::<RedbLedger>();
    send_sync::<Arc<dyn ReplayLedger>>();

    let guard = StateGuard::new(KeyRing::random());
    let ledger: Arc<dyn ReplayLedger> = Arc::new(MemoryLedger::default());
    let args = digest_args(&json!({}));
    let binding = Binding::new("tools/call", "t", &args);
    let future = guard.verify_and_redeem("token", &binding, &ledger);
    send(&future);
    let redeem = ledger.redeem("x", 0);
    send(&redeem);
}

#[test]
fn redb_ledger_from_an_opened_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = ferry_state::redb::Database::create(dir.path().join("shared.redb")).unwrap();
    let ledger = RedbLedger::from_database(db).unwrap();
    assert!(block_on(ledger.redeem("a", u64::MAX)).unwrap().is_first());
    assert_eq!(ledger.capacity(), ferry_state::DEFAULT_REDB_CAPACITY);
}
