//! The filters of the log and span sides: a [`Targets`] filter that answers for request
//! spans without matching directives.
//!
//! The two sides disagree about request spans (spans are recorded, logs leave them out
//! unless asked), so each is asked about every request span as it is made. Matching a
//! target against each directive costs hundreds of instructions per request; the answer
//! for the two request targets depends only on their level, so it is worked out once,
//! when the filter is built.

use tracing::level_filters::LevelFilter;
use tracing::{Level, Metadata};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::Filter;

use crate::metrics::{CLIENT_REQUEST_TARGET, SERVER_REQUEST_TARGET};

/// [`Targets`], with the most verbose level enabled for each request target kept aside.
#[derive(Debug, Clone)]
pub(crate) struct TargetFilter {
    targets: Targets,
    server: LevelFilter,
    client: LevelFilter,
}

impl TargetFilter {
    pub(crate) fn new(targets: Targets) -> Self {
        let most_verbose = |target: &str| {
            [
                Level::TRACE,
                Level::DEBUG,
                Level::INFO,
                Level::WARN,
                Level::ERROR,
            ]
            .into_iter()
            .find(|level| targets.would_enable(target, level))
            .map_or(LevelFilter::OFF, LevelFilter::from_level)
        };
        TargetFilter {
            server: most_verbose(SERVER_REQUEST_TARGET),
            client: most_verbose(CLIENT_REQUEST_TARGET),
            targets,
        }
    }

    /// What `Targets` would answer for `target` at `level`.
    fn decide(&self, target: &str, level: &Level) -> bool {
        if target == SERVER_REQUEST_TARGET {
            *level <= self.server
        } else if target == CLIENT_REQUEST_TARGET {
            *level <= self.client
        } else {
            self.targets.would_enable(target, level)
        }
    }

    /// Whether events and spans of `meta` pass.
    pub(crate) fn enables(&self, meta: &Metadata<'_>) -> bool {
        self.decide(meta.target(), meta.level())
    }

    /// The most verbose level anything passes at.
    pub(crate) fn max_level(&self) -> Option<LevelFilter> {
        Filter::<tracing_subscriber::Registry>::max_level_hint(&self.targets)
            .map(|l| l.max(self.server).max(self.client))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The filter answers as `Targets` does, request targets included, whatever the
    /// directives say about them or their parents.
    #[test]
    fn answers_as_targets_do() {
        let specs = [
            "info",
            "warn",
            "off",
            "trace",
            "debug,ferry_server=warn",
            "info,ferry_server::request=debug",
            "ferry_client=trace",
            "error,ferry_server::request=off,ferry_client::request=info",
            "ferry=debug",
        ];
        let targets = [
            SERVER_REQUEST_TARGET,
            CLIENT_REQUEST_TARGET,
            "ferry_server",
            "ferry_server::state",
            "hyper",
            "my_app::handler",
        ];
        for spec in specs {
            let t: Targets = spec.parse().expect(spec);
            let quick = TargetFilter::new(t.clone());
            for target in targets {
                for level in [
                    Level::TRACE,
                    Level::DEBUG,
                    Level::INFO,
                    Level::WARN,
                    Level::ERROR,
                ] {
                    let want = t.would_enable(target, &level);
                    let got = quick.decide(target, &level);
                    assert_eq!(got, want, "{spec}: {target} at {level}");
                }
            }
        }
    }
}
