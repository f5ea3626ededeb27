//! The task bus over Redis pub/sub: one channel per task.

use ferry_server::tasks::TaskSignals;
use ferry_server::{TaskBus, TaskSignal, TaskStoreError};
use futures::future::BoxFuture;

use crate::Redis;

/// Task signals (changes, delivered answers, cancellations) between instances: `PUBLISH`
/// on `<prefix>task:<id>:signals`, and a subscription per followed task on the instance's
/// shared pub/sub connection (confirmed by Redis before
/// [`subscribe`](TaskBus::subscribe) returns; renewed after a reconnection).
///
/// While Redis is unreachable, publishing and subscribing fail with
/// [`TaskStoreError::Storage`]; the server refuses the request that needed them.
///
/// Make one with [`Redis::task_bus`].
#[derive(Clone, Debug)]
pub struct RedisTaskBus {
    redis: Redis,
}

impl RedisTaskBus {
    pub(crate) fn new(redis: Redis) -> Self {
        RedisTaskBus { redis }
    }

    fn channel(&self, task_id: &str) -> String {
        self.redis.key(&format!("task:{task_id}:signals"))
    }
}

impl TaskBus for RedisTaskBus {
    fn publish<'a>(
        &'a self,
        task_id: &'a str,
        signal: TaskSignal,
    ) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let body = serde_json::to_vec(&signal).map_err(TaskStoreError::storage)?;
            let mut cmd = redis::cmd("PUBLISH");
            cmd.arg(self.channel(task_id)).arg(body);
            self.redis
                .query::<i64>(&cmd)
                .await
                .map(|_| ())
                .map_err(TaskStoreError::storage)
        })
    }

    fn subscribe<'a>(
        &'a self,
        task_id: &'a str,
    ) -> BoxFuture<'a, Result<TaskSignals, TaskStoreError>> {
        Box::pin(async move {
            let subscription = self.redis.subscriber().register(&self.channel(task_id));
            subscription
                .confirmed(self.redis.config().op_timeout)
                .await
                .map_err(TaskStoreError::storage)?;
            let stream = futures::stream::unfold(subscription, |mut s| async move {
                loop {
                    let payload = s.recv().await?;
                    match serde_json::from_slice::<TaskSignal>(&payload) {
                        Ok(signal) => return Some((signal, s)),
                        Err(e) => tracing::debug!(error = %e, "unreadable task signal ignored"),
                    }
                }
            });
            Ok(Box::pin(stream) as TaskSignals)
        })
    }
}
