//! The task store in Redis: a hash per task, a sorted set of task ids per owner.

use ferry_server::tasks::{Revision, Stored};
use ferry_server::{TaskRecord, TaskStore, TaskStoreError};
use futures::future::BoxFuture;
use redis::Script;

use crate::{Redis, RedisError};

/// Creates a task: refuses a taken id, drops the owner's expired ids, checks the bound,
/// writes the hash with its expiry and adds the id to the owner's set.
///
/// KEYS: task, owner set. ARGV: record, expiry (ms), bound, now (ms), id, owner ("" for
/// anonymous), created (ms), ttl (ms).
const CREATE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[4])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then return -2 end
redis.call('HSET', KEYS[1], 'rev', 1, 'rec', ARGV[1], 'owner', ARGV[6], 'created', ARGV[7], 'ttl', ARGV[8])
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[5])
local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[2], string.format('%.0f', tonumber(last[2])))
return 1
";

/// Replaces the record if the revision is still the one given; returns the new one.
///
/// KEYS: task. ARGV: expected revision, record.
const COMPARE_AND_SET: &str = r"
local rev = redis.call('HGET', KEYS[1], 'rev')
if (not rev) or rev ~= ARGV[1] then return false end
redis.call('HSET', KEYS[1], 'rec', ARGV[2])
return redis.call('HINCRBY', KEYS[1], 'rev', 1)
";

/// Tasks in Redis, shared by every instance.
///
/// Each task is a hash `<prefix>task:<id>` (`rev`, `rec`: the record as JSON, and the
/// owner, creation time and TTL as written at creation, which a later write never
/// changes) that expires with the task (`PEXPIREAT`). Each owner has a sorted set
/// `<prefix>owner:<owner>` of its task ids scored by expiry, trimmed of expired ids on
/// every creation, for the bound per principal. Creation and compare-and-set are Lua
/// scripts, so they are atomic across instances.
///
/// Make one with [`Redis::task_store`].
#[derive(Clone, Debug)]
pub struct RedisTaskStore {
    redis: Redis,
}

impl RedisTaskStore {
    pub(crate) fn new(redis: Redis) -> Self {
        RedisTaskStore { redis }
    }

    fn task_key(&self, id: &str) -> String {
        self.redis.key(&format!("task:{id}"))
    }

    fn owner_key(&self, owner: Option<&str>) -> String {
        match owner {
            Some(o) => self.redis.key(&format!("owner:u:{o}")),
            None => self.redis.key("owner:anonymous"),
        }
    }
}

/// `rev`, `rec`, `owner`, `created`, `ttl` of a task hash.
type Fields = (
    Option<u64>,
    Option<String>,
    Option<String>,
    Option<u64>,
    Option<u64>,
);

fn storage(e: RedisError) -> TaskStoreError {
    TaskStoreError::storage(e)
}

impl TaskStore for RedisTaskStore {
    fn create<'a>(
        &'a self,
        record: &'a TaskRecord,
        per_owner: u64,
    ) -> BoxFuture<'a, Result<Revision, TaskStoreError>> {
        Box::pin(async move {
            let body = serde_json::to_string(record).map_err(TaskStoreError::storage)?;
            let script = Script::new(CREATE);
            let mut call = script.prepare_invoke();
            call.key(self.task_key(&record.id))
                .key(self.owner_key(record.owner.as_deref()))
                .arg(body)
                .arg(record.expires_at_ms())
                .arg(per_owner)
                .arg(record.created_at_ms)
                .arg(&record.id)
                .arg(record.owner.as_deref().unwrap_or(""))
                .arg(record.created_at_ms)
                .arg(record.ttl_ms);
            match self.redis.run_script::<i64>(&call).await.map_err(storage)? {
                1 => Ok(1),
                -1 => Err(TaskStoreError::Exists),
                _ => Err(TaskStoreError::LimitReached { limit: per_owner }),
            }
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Stored>, TaskStoreError>> {
        Box::pin(async move {
            let mut cmd = redis::cmd("HMGET");
            cmd.arg(self.task_key(id))
                .arg(&["rev", "rec", "owner", "created", "ttl"][..]);
            let (rev, rec, owner, created, ttl): Fields =
                self.redis.query(&cmd).await.map_err(storage)?;
            let (Some(revision), Some(rec)) = (rev, rec) else {
                return Ok(None);
            };
            let mut record: TaskRecord = serde_json::from_str(&rec)
                .map_err(|e| storage(RedisError::Corrupt(format!("task record {id}: {e}"))))?;
            // What creation wrote is what counts: a write never changes them.
            record.owner = owner.filter(|o| !o.is_empty());
            if let Some(c) = created {
                record.created_at_ms = c;
            }
            if let Some(t) = ttl {
                record.ttl_ms = t;
            }
            Ok(Some(Stored { revision, record }))
        })
    }

    fn compare_and_set<'a>(
        &'a self,
        expected: Revision,
        record: &'a TaskRecord,
    ) -> BoxFuture<'a, Result<Option<Revision>, TaskStoreError>> {
        Box::pin(async move {
            let body = serde_json::to_string(record).map_err(TaskStoreError::storage)?;
            let script = Script::new(COMPARE_AND_SET);
            let mut call = script.prepare_invoke();
            call.key(self.task_key(&record.id)).arg(expected).arg(body);
            self.redis
                .run_script::<Option<u64>>(&call)
                .await
                .map_err(storage)
        })
    }

    fn sweep(&self, _now_ms: u64) -> BoxFuture<'_, Result<u64, TaskStoreError>> {
        // Records expire on their own (PEXPIREAT); owners' sets are trimmed on creation.
        Box::pin(async { Ok(0) })
    }
}
