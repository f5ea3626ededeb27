//! Turning the server's questions into calls of the [`InputHandler`](crate::InputHandler):
//! MRTR input requests (2026-07-28) and server-to-client JSON-RPC requests (2025-11-25)
//! alike.

use ferry_protocol::elicitation::{ElicitRequestParams, ElicitResult};
use ferry_protocol::jsonrpc::JsonRpcRequest;
use ferry_protocol::legacy::{self, LegacyElicitRequestParams};
use ferry_protocol::mrtr::{InputRequest, InputRequests, InputResponses};
use ferry_protocol::roots::{ListRootsResult, Root};
use ferry_protocol::sampling::CreateMessageRequestParams;
use ferry_protocol::{ErrorCode, ErrorObject, methods};
use serde_json::{Value, json};

use crate::client::Inner;
use crate::handler::{
    AskContext, AskOrigin, AskingServer, FormRequest, HandlerCapabilities, InputHandler,
    RootsRequest, SamplingRequest, UrlRequest,
};
use crate::options::CallOptions;

/// Who answers a question: the client's handler, or the call's own
/// ([`CallOptions::input_handler`]), with the capabilities it declares.
pub(crate) struct Asker<'a> {
    inner: &'a Inner,
    handler: &'a dyn InputHandler,
    caps: HandlerCapabilities,
}

impl<'a> Asker<'a> {
    /// The client's own handler.
    pub(crate) fn client(inner: &'a Inner) -> Self {
        Asker {
            inner,
            handler: &*inner.handler,
            caps: inner.handler_caps,
        }
    }

    /// The handler of a call made with `opts`: its own if it has one, else the client's.
    pub(crate) fn for_call(inner: &'a Inner, opts: &'a CallOptions) -> Self {
        match &opts.input_handler {
            Some(h) => Asker {
                inner,
                handler: &**h,
                caps: h.capabilities(),
            },
            None => Asker::client(inner),
        }
    }
}

/// The code of the error a legacy server gets when the user refuses sampling or roots.
const REFUSED: i64 = -1;

async fn context(asker: &Asker<'_>, origin: Option<AskOrigin>, key: Option<&str>) -> AskContext {
    let inner = asker.inner;
    inner.ensure_server_info().await;
    let info = inner.state.read().server_info.clone();
    AskContext {
        server: AskingServer::from_info(info.as_ref(), &inner.label),
        origin,
        key: key.map(str::to_owned),
    }
}

/// One round's answers, and the keys of the requests the client did not answer (sampling
/// or roots refused by the user, or never declared).
pub(crate) struct Answers {
    pub(crate) responses: InputResponses,
    pub(crate) unanswered: Vec<(String, &'static str)>,
}

/// Answers every input request of one round, one after the other in key order. Requests
/// the client cannot answer are left out and listed in [`Answers::unanswered`].
pub(crate) async fn input_requests(
    asker: &Asker<'_>,
    requests: &InputRequests,
    origin: Option<AskOrigin>,
) -> Answers {
    let mut out = Answers {
        responses: InputResponses::new(),
        unanswered: Vec::new(),
    };
    for (key, request) in requests {
        match input_request(asker, key, request, origin.clone()).await {
            Some(v) => {
                out.responses.insert(key.clone(), v);
            }
            None => out.unanswered.push((key.clone(), request.method())),
        }
    }
    out
}

async fn input_request(
    asker: &Asker<'_>,
    key: &str,
    request: &InputRequest,
    origin: Option<AskOrigin>,
) -> Option<Value> {
    let ctx = context(asker, origin, Some(key)).await;
    match request {
        InputRequest::Elicit(e) => {
            let (message, mode) = match &e.params {
                ElicitRequestParams::Form(p) => {
                    (p.message.clone(), Mode::Form(p.requested_schema.clone()))
                }
                ElicitRequestParams::Url(p) => (p.message.clone(), Mode::Url(p.url.clone(), None)),
            };
            Some(to_value(&elicit(asker, ctx, message, mode).await))
        }
        InputRequest::CreateMessage(r) => sample(asker, ctx, &r.params)
            .await
            .ok()
            .map(|r| to_value(&r)),
        InputRequest::ListRoots(_) => roots(asker, ctx).await.ok().map(|r| to_value(&r)),
    }
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

enum Mode {
    Form(ferry_protocol::elicitation::FormSchema),
    Url(String, Option<String>),
}

/// Asks the handler, or declines when the client did not declare the mode.
async fn elicit(
    asker: &Asker<'_>,
    context: AskContext,
    message: String,
    mode: Mode,
) -> ElicitResult {
    let caps = asker.caps;
    match mode {
        Mode::Form(schema) if caps.has_elicitation_form() => {
            let request = FormRequest {
                context,
                message,
                schema,
            };
            let answer = asker.handler.elicit_form(&request).await;
            if let (true, Some(content)) = (answer.is_accept(), answer.content.as_ref())
                && let Err(why) = request.check(content)
            {
                tracing::warn!(%why, "the form answer does not match the server's schema");
            }
            answer
        }
        Mode::Url(url, elicitation_id) if caps.has_elicitation_url() => {
            let request = UrlRequest {
                context,
                message,
                url,
                elicitation_id,
            };
            let mut answer = asker.handler.elicit_url(&request).await;
            answer.content = None;
            answer
        }
        _ => {
            tracing::warn!(
                server = %context.server,
                "the server asked for an elicitation mode the client did not declare; declining"
            );
            ElicitResult::decline()
        }
    }
}

/// Why sampling or roots got no answer.
enum Refusal {
    Undeclared,
    Refused,
}

async fn sample(
    asker: &Asker<'_>,
    context: AskContext,
    params: &CreateMessageRequestParams,
) -> Result<ferry_protocol::sampling::CreateMessageResult, Refusal> {
    let caps = asker.caps;
    if !caps.has_sampling() || (params.uses_tools() && !caps.has_sampling_tools()) {
        tracing::warn!(
            server = %context.server,
            "the server asked for sampling the client did not declare; not answering"
        );
        return Err(Refusal::Undeclared);
    }
    let request = SamplingRequest {
        context,
        params: params.clone(),
    };
    asker
        .handler
        .create_message(&request)
        .await
        .ok_or(Refusal::Refused)
}

async fn roots(asker: &Asker<'_>, context: AskContext) -> Result<ListRootsResult, Refusal> {
    if !asker.caps.has_roots() {
        tracing::warn!(
            server = %context.server,
            "the server asked for roots the client did not declare; not answering"
        );
        return Err(Refusal::Undeclared);
    }
    let request = RootsRequest { context };
    let roots = asker
        .handler
        .list_roots(&request)
        .await
        .ok_or(Refusal::Refused)?;
    let (file, other): (Vec<Root>, Vec<Root>) = roots.into_iter().partition(Root::is_file_uri);
    for r in &other {
        tracing::warn!(uri = %r.uri, "leaving out a root that is not a file:// URI");
    }
    Ok(ListRootsResult::new(file))
}

/// Answers a legacy server-to-client request; returns the JSON-RPC response to send.
pub(crate) async fn server_request(
    asker: &Asker<'_>,
    req: &JsonRpcRequest,
    origin: Option<AskOrigin>,
) -> Value {
    let params = req.params.clone().unwrap_or_else(|| json!({}));
    let ctx = context(asker, origin, None).await;
    let result: Result<Value, ErrorObject> = match req.method.as_str() {
        legacy::PING => Ok(json!({})),
        methods::ELICITATION_CREATE => {
            match serde_json::from_value::<LegacyElicitRequestParams>(params) {
                Ok(LegacyElicitRequestParams::Form(p)) => Ok(to_value(
                    &elicit(asker, ctx, p.message, Mode::Form(p.requested_schema)).await,
                )),
                Ok(LegacyElicitRequestParams::Url(p)) => Ok(to_value(
                    &elicit(
                        asker,
                        ctx,
                        p.message,
                        Mode::Url(p.url, Some(p.elicitation_id)),
                    )
                    .await,
                )),
                Err(e) => Err(ErrorObject::invalid_params(format!(
                    "invalid elicitation request: {e}"
                ))),
            }
        }
        methods::SAMPLING_CREATE_MESSAGE => {
            match serde_json::from_value::<CreateMessageRequestParams>(params) {
                Ok(p) => sample(asker, ctx, &p)
                    .await
                    .map(|r| to_value(&r))
                    .map_err(|why| refusal_error(why, "sampling")),
                Err(e) => Err(ErrorObject::invalid_params(format!(
                    "invalid sampling request: {e}"
                ))),
            }
        }
        methods::ROOTS_LIST => roots(asker, ctx)
            .await
            .map(|r| to_value(&r))
            .map_err(|why| refusal_error(why, "roots")),
        other => Err(ErrorObject::method_not_found(other)),
    };
    match result {
        Ok(result) => json!({"jsonrpc": "2.0", "id": req.id.to_value(), "result": result}),
        Err(error) => json!({"jsonrpc": "2.0", "id": req.id.to_value(), "error": error}),
    }
}

fn refusal_error(why: Refusal, what: &str) -> ErrorObject {
    match why {
        Refusal::Undeclared => ErrorObject::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("The client does not support {what}"),
        ),
        Refusal::Refused => ErrorObject::new(
            ErrorCode(REFUSED),
            format!("The user declined the {what} request"),
        ),
    }
}
