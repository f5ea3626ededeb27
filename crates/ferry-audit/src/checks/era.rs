//! Which revisions the server serves: `server/discover` and per-request `_meta`
//! (2026-07-28), `initialize` (2025-11-25).

use serde_json::{Map, Value, json};

use super::Recorder;
use crate::catalogue::{ERA_DISCOVER, ERA_LEGACY, ERA_META_REQUIRED, ERA_VERSION_UNSUPPORTED};
use crate::config::AuditError;
use crate::ctx::Ctx;
use crate::http::{Outgoing, SendError};
use crate::report::{CheckResult, ServerInfo, Verdict};
use crate::rpc::{Answer, Header, MODERN, Reply, Request, all_capabilities, meta};

/// What the era checks found.
pub(crate) struct Eras {
    /// Whether 2026-07-28 requests are served.
    pub(crate) modern: bool,
    /// The revisions served.
    pub(crate) eras: Vec<String>,
    pub(crate) server: Option<ServerInfo>,
}

fn server_info(result: &Value) -> Option<ServerInfo> {
    let info = result
        .get("_meta")
        .and_then(|m| m.get("io.modelcontextprotocol/serverInfo"))
        .or_else(|| result.get("serverInfo"))?;
    Some(ServerInfo {
        name: info.get("name")?.as_str()?.to_owned(),
        version: info
            .get("version")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
    })
}

/// Whether an error's text names a protocol version (`YYYY-MM-DD`).
fn names_a_version(reply: &Reply) -> bool {
    let text = match &reply.answer {
        Answer::Error { message, data, .. } => format!(
            "{message} {}",
            data.as_ref().map(Value::to_string).unwrap_or_default()
        ),
        Answer::NoMessage { problem } => problem.clone(),
        _ => return false,
    };
    let b = text.as_bytes();
    b.windows(10).any(|w| {
        w.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            _ => c.is_ascii_digit(),
        })
    })
}

/// A discover request (2026-07-28, every capability).
pub(crate) fn discover_request() -> Request {
    Request::modern("server/discover", Map::new())
}

fn unreachable(ctx: &Ctx, reply: &Reply) -> Option<AuditError> {
    match &reply.answer {
        Answer::Failed(e @ (SendError::Transport(_) | SendError::Timeout(_))) => {
            Some(AuditError::Unreachable {
                url: ctx.prober.url().to_string(),
                reason: e.to_string(),
            })
        }
        _ if reply.status == Some(401) => Some(AuditError::Unauthorized { status: 401 }),
        _ => None,
    }
}

/// Closes a 2025-11-25 session the audit opened (best effort).
pub(crate) async fn close_session(ctx: &Ctx, session: &str, version: &str) {
    let mut out = Outgoing::post(
        Vec::new(),
        None,
        vec![
            ("mcp-session-id".into(), session.to_owned()),
            ("mcp-protocol-version".into(), version.to_owned()),
        ],
    );
    out.method = reqwest::Method::DELETE;
    if let Err(e) = ctx.prober.send(out).await {
        tracing::debug!(error = %e, "closing the 2025-11-25 session failed");
    }
}

pub(crate) async fn run(ctx: &Ctx, rec: &mut Recorder<'_>) -> Result<Eras, AuditError> {
    let discover = ctx.send(&discover_request()).await;
    if let Some(e) = unreachable(ctx, &discover) {
        return Err(e);
    }
    let init = ctx.send(&Request::initialize()).await;
    let legacy_version = match &init.answer {
        Answer::Complete { result, .. } => result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .map(str::to_owned),
        _ => None,
    };
    if let (Some(session), Some(v)) = (&init.session_id, &legacy_version) {
        close_session(ctx, session, v).await;
    }

    let mut server = None;
    let mut modern = false;
    let result = match &discover.answer {
        Answer::Complete { result, .. } => {
            server = server_info(result);
            modern = true;
            let versions: Vec<&str> = result
                .get("supportedVersions")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if versions.contains(&MODERN) {
                CheckResult::new(
                    &ERA_DISCOVER,
                    Verdict::Pass,
                    format!("server/discover lists supportedVersions {versions:?}"),
                )
            } else {
                CheckResult::new(
                    &ERA_DISCOVER,
                    Verdict::Fail,
                    format!(
                        "server/discover answered a {MODERN} request, but its supportedVersions {versions:?} leave {MODERN} out"
                    ),
                )
            }
        }
        Answer::Error {
            code: -32022, data, ..
        } => CheckResult::new(
            &ERA_DISCOVER,
            Verdict::Skip,
            format!(
                "the server does not serve {MODERN}: it answered UnsupportedProtocolVersion, supported {}",
                data.as_ref()
                    .and_then(|d| d.get("supported"))
                    .map(Value::to_string)
                    .unwrap_or_else(|| "(not listed)".into())
            ),
        ),
        _ if legacy_version.is_some() => CheckResult::new(
            &ERA_DISCOVER,
            Verdict::Skip,
            format!(
                "a 2025-11-25 (legacy) server: server/discover answered {}",
                discover.describe()
            ),
        ),
        _ => CheckResult::new(
            &ERA_DISCOVER,
            Verdict::Fail,
            format!(
                "server/discover answered {}, and initialize answered {}: neither era is served",
                discover.describe(),
                init.describe()
            ),
        ),
    };
    rec.record(result);

    let mut eras = Vec::new();
    if modern {
        eras.push(MODERN.to_owned());
    }
    let legacy = match &legacy_version {
        Some(v) => {
            if server.is_none()
                && let Answer::Complete { result, .. } = &init.answer
            {
                server = server_info(result);
            }
            eras.push(v.clone());
            let session = if init.session_id.is_some() {
                "; it opened a session, which the audit closed with DELETE"
            } else {
                ""
            };
            CheckResult::new(
                &ERA_LEGACY,
                Verdict::Pass,
                format!(
                    "initialize (protocolVersion 2025-11-25) answered with protocolVersion {v}{session}"
                ),
            )
        }
        None if names_a_version(&init) => CheckResult::new(
            &ERA_LEGACY,
            Verdict::Pass,
            format!(
                "no 2025-11-25 era: initialize refused ({}), naming the versions served",
                init.describe()
            ),
        ),
        None if modern => CheckResult::new(
            &ERA_LEGACY,
            Verdict::Warn,
            format!(
                "initialize refused ({}) without naming the versions served, the only hint a legacy client could show",
                init.describe()
            ),
        ),
        None => CheckResult::new(
            &ERA_LEGACY,
            Verdict::Fail,
            format!("initialize answered {}", init.describe()),
        ),
    };
    rec.record(legacy);

    if !modern {
        let why = format!("the server does not serve {MODERN}");
        rec.skip(&ERA_META_REQUIRED, &why);
        rec.skip(&ERA_VERSION_UNSUPPORTED, &why);
        return Ok(Eras {
            modern,
            eras,
            server,
        });
    }

    let mut bare = discover_request();
    bare.meta = None;
    let reply = ctx.send(&bare).await;
    let sent = "server/discover without _meta";
    rec.record(if reply.is_400_with(-32602) {
        CheckResult::new(
            &ERA_META_REQUIRED,
            Verdict::Pass,
            format!("{sent}: refused ({})", reply.describe()),
        )
    } else if reply.is_400_with(-32020) {
        CheckResult::new(
            &ERA_META_REQUIRED,
            Verdict::Pass,
            format!(
                "{sent}: refused as a header/body mismatch ({})",
                reply.describe()
            ),
        )
    } else if reply.refused() {
        CheckResult::new(
            &ERA_META_REQUIRED,
            Verdict::Warn,
            format!(
                "{sent}: refused, but with {}; the rule asks for -32602 and HTTP 400",
                reply.describe()
            ),
        )
    } else {
        CheckResult::new(
            &ERA_META_REQUIRED,
            Verdict::Fail,
            format!("{sent}: {}", reply.describe()),
        )
    });

    let mut old = discover_request();
    old.meta = Some(meta("1900-01-01", all_capabilities()));
    old.version_header = Header::Set("1900-01-01".into());
    let reply = ctx.send(&old).await;
    let sent = "server/discover for protocol version 1900-01-01";
    let supported = match &reply.answer {
        Answer::Error {
            code: -32022, data, ..
        } => data
            .as_ref()
            .and_then(|d| d.get("supported"))
            .and_then(Value::as_array)
            .cloned(),
        _ => None,
    };
    rec.record(match supported {
        Some(list) if reply.status == Some(400) => CheckResult::new(
            &ERA_VERSION_UNSUPPORTED,
            Verdict::Pass,
            format!("{sent}: refused with -32022, supported {}", json!(list)),
        ),
        Some(_) => CheckResult::new(
            &ERA_VERSION_UNSUPPORTED,
            Verdict::Warn,
            format!("{sent}: -32022 with {}; the rule asks for HTTP 400", reply.describe()),
        ),
        None if reply.error_code() == Some(-32022) => CheckResult::new(
            &ERA_VERSION_UNSUPPORTED,
            Verdict::Fail,
            format!("{sent}: -32022 without data.supported listing the versions served"),
        ),
        None => CheckResult::new(
            &ERA_VERSION_UNSUPPORTED,
            Verdict::Fail,
            format!("{sent}: {}; it must be UnsupportedProtocolVersion (-32022) listing the versions served", reply.describe()),
        ),
    });
    Ok(Eras {
        modern,
        eras,
        server,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(message: &str) -> Reply {
        Reply {
            answer: Answer::Error {
                code: -32600,
                message: message.into(),
                data: None,
            },
            status: Some(400),
            elapsed: None,
            session_id: None,
        }
    }

    #[test]
    fn version_names_are_recognised() {
        assert!(names_a_version(&error(
            "this server speaks 2026-07-28 only"
        )));
        assert!(!names_a_version(&error("Method not found")));
        assert!(!names_a_version(&error("2026-7-28")));
    }
}
