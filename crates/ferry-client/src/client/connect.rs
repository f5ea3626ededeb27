//! Connecting: era detection with `server/discover`, and the legacy `initialize`
//! handshake.

use std::sync::Arc;

use ferry_protocol::common::Implementation;
use ferry_protocol::legacy::{self, InitializeRequestParams, InitializeResult};
use ferry_protocol::{ErrorCode, ServerCapabilities, meta, methods};
use serde_json::{Map, Value};

use super::request::{Req, parse};
use super::{Inner, Session};
use crate::cache;
use crate::era::{self, Era, EraMode, KnownEra, Verdict};
use crate::error::{Error, Result};
use crate::options::CallOptions;
use crate::transport::Transport;

/// How long connecting waits for a 2025-11-25 server to answer the standalone GET
/// stream before sending the first request.
const STANDALONE_STREAM_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

impl Inner {
    /// Finds the server's era (from the cache or by probing) and opens a legacy session
    /// if needed.
    pub(crate) async fn connect(&self) -> Result<()> {
        match self.config.era_mode {
            EraMode::Legacy => return self.initialize().await,
            EraMode::Modern => return self.probe().await,
            EraMode::Auto => {}
        }
        if let Some(origin) = &self.origin {
            match self.era_cache.get_with_discover(origin) {
                Some((KnownEra::Modern { version }, discover)) => {
                    self.enter_modern(version, discover.map(|d| (*d).clone()));
                    return Ok(());
                }
                Some((KnownEra::Legacy, _)) => match self.initialize().await {
                    Ok(()) => return Ok(()),
                    Err(
                        e @ (Error::Unauthorized { .. }
                        | Error::Authorization(_)
                        | Error::Transport { .. }),
                    ) => {
                        return Err(e);
                    }
                    Err(e) => {
                        tracing::info!(error = %e, "the cached era was wrong; probing again");
                        self.era_cache.forget(origin);
                    }
                },
                None => {}
            }
        }
        self.probe().await
    }

    /// Probes with `server/discover` (versioning.mdx, transports/stdio.mdx, transports/streamable-http.mdx).
    async fn probe(&self) -> Result<()> {
        let opts = CallOptions::new();
        let mut version = era::MODERN_VERSIONS[0].to_owned();
        let mut retried = false;
        loop {
            let session = Session {
                era: Era::Modern,
                version: version.clone(),
                server_info: None,
                capabilities: None,
                instructions: None,
            };
            *self.state.write() = Arc::new(session.clone());
            let mut req = Req::new(methods::DISCOVER, Map::new(), &opts);
            req.timeout = Some(self.config.probe_timeout);
            let outcome = self.call_once(&req, &session).await;
            match era::classify(outcome, &version, self.transport.is_http()) {
                Verdict::Modern(discover) => {
                    self.enter_modern(version, discover);
                    return Ok(());
                }
                Verdict::RetryWith(v) if !retried => {
                    retried = true;
                    version = v;
                }
                Verdict::RetryWith(v) => {
                    self.enter_modern(v, None);
                    return Ok(());
                }
                Verdict::Legacy if self.config.era_mode == EraMode::Modern => {
                    return Err(Error::Unsupported(
                        "the server speaks only the legacy protocol (2025-11-25 or earlier)".into(),
                    ));
                }
                Verdict::Legacy => return self.initialize().await,
                Verdict::Fail(e) => return Err(e),
            }
        }
    }

    /// Records a modern server, with what its discover result says.
    pub(crate) fn enter_modern(&self, version: String, discover: Option<Value>) {
        let mut guard = self.state.write();
        let s = Arc::make_mut(&mut guard);
        s.era = Era::Modern;
        s.version = version.clone();
        if let Some(d) = &discover {
            self.absorb_discover(s, d);
            self.cache.put(
                cache::key(methods::DISCOVER, &Map::new()),
                methods::DISCOVER,
                &Map::new(),
                d,
            );
        }
        drop(guard);
        if let Some(origin) = &self.origin {
            let era = KnownEra::Modern { version };
            match discover {
                Some(d) => self.era_cache.set_discover(origin.clone(), era, d),
                None => self.era_cache.set(origin.clone(), era),
            }
        }
    }

    /// Takes the server's identity, capabilities and instructions from a discover result.
    pub(crate) fn absorb_discover(&self, s: &mut Session, d: &Value) {
        let info = d
            .get("_meta")
            .and_then(|m| m.get(meta::SERVER_INFO))
            .or_else(|| d.get("serverInfo"))
            .and_then(|v| serde_json::from_value::<Implementation>(v.clone()).ok());
        if info.is_some() {
            s.server_info = info;
        }
        if let Some(caps) = d
            .get("capabilities")
            .and_then(|c| serde_json::from_value::<ServerCapabilities>(c.clone()).ok())
        {
            s.capabilities = Some(caps);
        }
        if let Some(i) = d.get("instructions").and_then(Value::as_str) {
            s.instructions = Some(i.to_owned());
        }
    }

    /// Learns the server's identity with `server/discover` when the era came from the
    /// cache and nothing has asked yet, so questions can name the asking server.
    pub(crate) async fn ensure_server_info(&self) {
        let unknown = {
            let s = self.state.read();
            s.era == Era::Modern && s.server_info.is_none()
        };
        if !unknown {
            return;
        }
        let opts = CallOptions::new();
        let mut req = Req::new(methods::DISCOVER, Map::new(), &opts);
        req.timeout = Some(self.config.probe_timeout.min(self.config.timeout));
        match self.boxed_call(&req).await {
            Ok(d) => {
                let mut s = self.state.write();
                self.absorb_discover(Arc::make_mut(&mut s), &d);
            }
            Err(e) => tracing::debug!(error = %e, "server/discover failed"),
        }
    }

    /// Answering a question can lead to [`ensure_server_info`](Inner::ensure_server_info),
    /// which sends a request: the future is boxed to break the cycle.
    fn boxed_call<'a>(&'a self, req: &'a Req<'a>) -> crate::handler::BoxFuture<'a, Result<Value>> {
        Box::pin(self.call_cached(req))
    }

    /// The legacy handshake: `initialize`, then `notifications/initialized`.
    pub(crate) async fn initialize(&self) -> Result<()> {
        let opts = CallOptions::new();
        let mut version = era::LEGACY_VERSIONS[0].to_owned();
        let mut retried = false;
        let result = loop {
            let session = Session {
                era: Era::Legacy,
                version: version.clone(),
                server_info: None,
                capabilities: None,
                instructions: None,
            };
            *self.state.write() = Arc::new(session.clone());
            let params = InitializeRequestParams::new(
                version.clone(),
                self.client_capabilities(),
                self.config.client_info.clone(),
            );
            let Ok(Value::Object(params)) = serde_json::to_value(&params) else {
                return Err(Error::protocol("could not encode initialize"));
            };
            let req = Req::new(legacy::INITIALIZE, params, &opts);
            match self.call_once(&req, &session).await {
                Ok(v) => break v,
                Err(Error::Rpc(e)) if e.code == ErrorCode::INVALID_PARAMS && !retried => {
                    let supported = era::string_list(e.data.as_ref(), "supported");
                    let Some(v) = era::LEGACY_VERSIONS
                        .iter()
                        .find(|v| supported.iter().any(|s| s == *v))
                    else {
                        return Err(Error::Rpc(e));
                    };
                    retried = true;
                    version = (*v).to_owned();
                }
                Err(e) => return Err(e),
            }
        };
        let result: InitializeResult = parse(legacy::INITIALIZE, result)?;
        if !era::LEGACY_VERSIONS.contains(&result.protocol_version.as_str()) {
            return Err(Error::UnsupportedVersion {
                supported: vec![result.protocol_version],
            });
        }
        {
            let mut guard = self.state.write();
            let s = Arc::make_mut(&mut guard);
            s.version = result.protocol_version.clone();
            s.server_info = Some(result.server_info);
            s.capabilities = Some(result.capabilities);
            s.instructions = result.instructions;
        }
        if let Transport::Http(t) = &self.transport {
            t.set_legacy(&result.protocol_version);
        }
        self.notify(legacy::INITIALIZED, None).await?;
        if let Transport::Http(t) = &self.transport
            && self.config.legacy_get_stream
        {
            // A server request sent before the stream is open would be lost: wait (a
            // little) for the server to answer the GET before the first request.
            let answered = t.open_standalone_stream();
            let _ = tokio::time::timeout(STANDALONE_STREAM_WAIT, answered).await;
        }
        if let Some(origin) = &self.origin {
            self.era_cache.set(origin.clone(), KnownEra::Legacy);
        }
        Ok(())
    }
}
