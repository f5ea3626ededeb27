//! Measures what 100,000 finished tasks cost: resident memory for the in-memory store,
//! file size and resident memory for the redb store.
//!
//! ```text
//! cargo run --release -p ferry-tasks --example budget [COUNT]
//! ```
//!
//! Each task is completed with a small tool result (one text block of about 100 bytes),
//! as a typical finished task is kept until its TTL ends. Linux only (reads
//! `/proc/self/status`).

use std::time::Instant;

use ferry_protocol::tasks::TaskStatus;
use ferry_server::{MemoryTaskStore, TaskRecord, TaskStore};
use ferry_tasks::RedbTaskStore;
use serde_json::json;

/// Tasks written concurrently (the redb store commits what waits together).
const WAVE: usize = 256;

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn finished(i: usize, now: u64) -> TaskRecord {
    let id = format!("{i:0>24}");
    let mut r = TaskRecord::new(id, Some(format!("user-{}", i % 100)), now, 3_600_000);
    r.status = TaskStatus::Completed;
    r.poll_interval_ms = Some(500);
    r.status_message = Some("100% (10/10): done".into());
    r.result = Some(
        serde_json::value::to_raw_value(&json!({
            "resultType": "complete",
            "content": [{"type": "text", "text": format!("result of task {i}: {}", "x".repeat(64))}]
        }))
        .expect("raw"),
    );
    r
}

async fn fill(store: &dyn TaskStore, count: usize) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let mut i = 0;
    while i < count {
        let wave: Vec<TaskRecord> = (i..(i + WAVE).min(count))
            .map(|n| finished(n, now))
            .collect();
        let created = futures::future::join_all(wave.iter().map(|r| {
            let mut working = r.clone();
            working.status = TaskStatus::Working;
            working.result = None;
            async move { store.create(&working, u64::MAX).await }
        }))
        .await;
        let done = futures::future::join_all(
            wave.iter()
                .zip(created)
                .map(|(r, rev)| store.compare_and_set(rev.expect("created"), r)),
        )
        .await;
        assert!(
            done.iter().all(|d| matches!(d, Ok(Some(_)))),
            "all completed"
        );
        i += wave.len();
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let count: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);

    let before = rss_kib();
    let started = Instant::now();
    let memory = MemoryTaskStore::new();
    fill(&memory, count).await;
    let after = rss_kib();
    println!(
        "memory: {count} finished tasks, resident +{:.1} MiB ({} bytes per task), filled in {:.1} s",
        (after - before) as f64 / 1024.0,
        (after - before) * 1024 / count as u64,
        started.elapsed().as_secs_f64()
    );
    drop(memory);

    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.redb");
    let before = rss_kib();
    let started = Instant::now();
    let store = RedbTaskStore::open(&path).expect("open");
    fill(&store, count).await;
    let elapsed = started.elapsed();
    let after = rss_kib();
    let size = std::fs::metadata(&path).expect("file").len();
    println!(
        "redb: {count} finished tasks, file {:.1} MiB ({} bytes per task), resident +{:.1} MiB, filled in {:.1} s ({:.0} writes/s)",
        size as f64 / (1024.0 * 1024.0),
        size / count as u64,
        after.saturating_sub(before) as f64 / 1024.0,
        elapsed.as_secs_f64(),
        (2 * count) as f64 / elapsed.as_secs_f64()
    );
    let started = Instant::now();
    let id = format!("{:0>24}", count / 2);
    let got = store.get(&id).await.expect("get").expect("found");
    assert_eq!(got.record.status, TaskStatus::Completed);
    drop(store);
    let reopened = RedbTaskStore::open(&path).expect("reopen");
    println!(
        "redb: reopened with {} tasks in {:.0} ms",
        reopened.len().expect("len"),
        started.elapsed().as_secs_f64() * 1000.0
    );
}
