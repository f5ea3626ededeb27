//! Incoming messages as a server reads them: the JSON-RPC envelope and the request's
//! params, typed by method and decoded in one pass.
//!
//! [`decode`] reads one message. When `method` comes before `params` (as every client
//! writes it) the params are parsed straight into the method's type; otherwise they are
//! kept raw and parsed once the method is known. Strings that need no unescaping are
//! borrowed from the input. Anything malformed is told apart precisely, with the request
//! id whenever it could be read, so the answer names the request it refuses.
//!
//! ```
//! use ferry_protocol::methods::Method;
//! use ferry_protocol::request::{self, Incoming, Params};
//!
//! let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
//!     "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
//!              "io.modelcontextprotocol/clientCapabilities":{}},
//!     "name":"echo","arguments":{"text":"hi"}}}"#;
//! match request::decode(body).unwrap() {
//!     Incoming::Request(req) => {
//!         assert_eq!(req.method.known(), Some(Method::ToolsCall));
//!         let Params::Call(call) = req.params else { unreachable!() };
//!         assert_eq!(call.name.as_deref(), Some("echo"));
//!     }
//!     _ => unreachable!(),
//! }
//! ```

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::borrowed::{CowStr, option_cow_str};
use crate::error::{ErrorCode, ErrorObject};
use crate::jsonrpc::{JSONRPC_VERSION, RequestId};
use crate::meta::RequestMeta;
use crate::methods::Method;

/// A request's method: one this crate knows, or another name kept as sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MethodName<'a> {
    /// A method of either era or of the Tasks extension.
    Known(Method),
    /// Any other name (answered with -32601 by a server).
    Other(Cow<'a, str>),
}

impl MethodName<'_> {
    fn from_cow(name: Cow<'_, str>) -> MethodName<'_> {
        match Method::parse(&name) {
            Some(m) => MethodName::Known(m),
            None => MethodName::Other(name),
        }
    }

    /// The method, when known.
    pub fn known(&self) -> Option<Method> {
        match self {
            MethodName::Known(m) => Some(*m),
            MethodName::Other(_) => None,
        }
    }

    /// The name as sent.
    pub fn as_str(&self) -> &str {
        match self {
            MethodName::Known(m) => m.as_str(),
            MethodName::Other(s) => s,
        }
    }
}

impl fmt::Display for MethodName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `_meta` of a request, boxed: moving params costs a pointer, not the whole
/// metadata.
pub type BoxedMeta = Option<Box<RequestMeta>>;

/// Params of methods that take nothing but `_meta` (`server/discover`, `ping`, and
/// methods this crate does not know).
#[derive(Debug, Default, Deserialize)]
pub struct MetaParams {
    /// `_meta`.
    #[serde(
        rename = "_meta",
        default,
        deserialize_with = "crate::meta::deserialize_boxed"
    )]
    pub meta: BoxedMeta,
}

/// Params of the paginated lists.
#[derive(Debug, Default, Deserialize)]
pub struct ListParams<'a> {
    /// `_meta`.
    #[serde(
        rename = "_meta",
        default,
        deserialize_with = "crate::meta::deserialize_boxed"
    )]
    pub meta: BoxedMeta,
    /// `cursor`, as the server issued it.
    #[serde(default, borrow, deserialize_with = "option_cow_str")]
    pub cursor: Option<Cow<'a, str>>,
}

/// Params of `tools/call` and `prompts/get`: a name, arguments, and on a retry the
/// answers and the state of a multi round-trip request.
///
/// `arguments` is parsed as sent (an object for tools, strings for prompts); the server
/// checks its shape and answers a wrong one with -32602.
#[derive(Debug, Default, Deserialize)]
pub struct CallParams<'a> {
    /// `_meta`.
    #[serde(
        rename = "_meta",
        default,
        deserialize_with = "crate::meta::deserialize_boxed"
    )]
    pub meta: BoxedMeta,
    /// `name`.
    #[serde(default, borrow, deserialize_with = "option_cow_str")]
    pub name: Option<Cow<'a, str>>,
    /// `arguments`, parsed (`None` when absent or `null`); a number a `Value` cannot
    /// hold exactly is held as the nearest `f64` (see [`crate::numbers`]).
    #[serde(default)]
    pub arguments: Option<Value>,
    /// `arguments` as sent, kept only when a number in them does not fit a `Value`
    /// exactly ([`Arguments::exact`](crate::numbers::Arguments::exact)).
    #[serde(skip)]
    pub exact_arguments: Option<Box<RawValue>>,
    /// `inputResponses`; an explicit `null` is kept so it can be refused.
    #[serde(
        rename = "inputResponses",
        default,
        deserialize_with = "crate::serde_util::any_value"
    )]
    pub input_responses: Option<Value>,
    /// `requestState`.
    #[serde(rename = "requestState", default)]
    pub request_state: Option<String>,
}

/// [`CallParams`] with `arguments` kept as text, read where a number in them may not
/// fit a `Value` (the params of [`decode`]'s careful path, and params sent before the
/// method).
#[derive(Deserialize)]
struct CallParamsText<'a> {
    #[serde(
        rename = "_meta",
        default,
        deserialize_with = "crate::meta::deserialize_boxed"
    )]
    meta: BoxedMeta,
    #[serde(default, borrow, deserialize_with = "option_cow_str")]
    name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    arguments: Option<&'a RawValue>,
    #[serde(
        rename = "inputResponses",
        default,
        deserialize_with = "crate::serde_util::any_value"
    )]
    input_responses: Option<Value>,
    #[serde(rename = "requestState", default)]
    request_state: Option<String>,
}

impl<'a> CallParamsText<'a> {
    fn parse(self) -> Result<CallParams<'a>, serde_json::Error> {
        // `null` reads as `None`, as in the one-pass read.
        let (arguments, exact_arguments) = match self.arguments {
            None => (None, None),
            Some(raw) => {
                let a = crate::numbers::parse_arguments(raw)?;
                (Some(a.value), a.exact)
            }
        };
        Ok(CallParams {
            meta: self.meta,
            name: self.name,
            arguments,
            exact_arguments,
            input_responses: self.input_responses,
            request_state: self.request_state,
        })
    }
}

/// The `arguments` of a request's params, as text, read by the careful path's envelope.
fn arguments_text(bytes: &[u8]) -> Option<&RawValue> {
    #[derive(Deserialize)]
    struct Arguments<'a> {
        #[serde(borrow)]
        arguments: Option<&'a RawValue>,
    }
    let crate::jsonrpc::Incoming::Request {
        params: Some(params),
        ..
    } = crate::jsonrpc::Envelope::parse(bytes)
        .ok()?
        .classify()
        .ok()?
    else {
        return None;
    };
    serde_json::from_str::<Arguments<'_>>(params.get())
        .ok()?
        .arguments
}

/// Params of `resources/read`.
#[derive(Debug, Default, Deserialize)]
pub struct ReadParams<'a> {
    /// `_meta`.
    #[serde(
        rename = "_meta",
        default,
        deserialize_with = "crate::meta::deserialize_boxed"
    )]
    pub meta: BoxedMeta,
    /// `uri`.
    #[serde(default, borrow, deserialize_with = "option_cow_str")]
    pub uri: Option<Cow<'a, str>>,
    /// `inputResponses`; an explicit `null` is kept so it can be refused.
    #[serde(
        rename = "inputResponses",
        default,
        deserialize_with = "crate::serde_util::any_value"
    )]
    pub input_responses: Option<Value>,
    /// `requestState`.
    #[serde(rename = "requestState", default)]
    pub request_state: Option<String>,
}

/// Params of `completion/complete`, kept as sent so each missing member gets its own
/// -32602 message.
#[derive(Debug, Default, Deserialize)]
pub struct CompleteParams {
    /// `_meta`.
    #[serde(
        rename = "_meta",
        default,
        deserialize_with = "crate::meta::deserialize_boxed"
    )]
    pub meta: BoxedMeta,
    /// `ref`.
    #[serde(rename = "ref", default)]
    pub reference: Option<Value>,
    /// `argument`.
    #[serde(default)]
    pub argument: Option<Value>,
    /// `context`.
    #[serde(default)]
    pub context: Option<Value>,
}

/// Params of `subscriptions/listen`.
#[derive(Debug, Default, Deserialize)]
pub struct ListenParams {
    /// `_meta`.
    #[serde(
        rename = "_meta",
        default,
        deserialize_with = "crate::meta::deserialize_boxed"
    )]
    pub meta: BoxedMeta,
    /// `notifications`, the filter as sent.
    #[serde(default)]
    pub notifications: Option<Value>,
}

/// Params of `initialize` (2025-11-25).
#[derive(Debug, Default, Deserialize)]
pub struct InitializeParams<'a> {
    /// `_meta`.
    #[serde(
        rename = "_meta",
        default,
        deserialize_with = "crate::meta::deserialize_boxed"
    )]
    pub meta: BoxedMeta,
    /// `protocolVersion`.
    #[serde(
        rename = "protocolVersion",
        default,
        borrow,
        deserialize_with = "option_cow_str"
    )]
    pub protocol_version: Option<Cow<'a, str>>,
    /// `capabilities`, as sent.
    #[serde(default)]
    pub capabilities: Option<Value>,
    /// `clientInfo`, as sent.
    #[serde(rename = "clientInfo", default)]
    pub client_info: Option<Value>,
}

/// Params of `logging/setLevel` (2025-11-25).
#[derive(Debug, Default, Deserialize)]
pub struct SetLevelParams<'a> {
    /// `_meta`.
    #[serde(
        rename = "_meta",
        default,
        deserialize_with = "crate::meta::deserialize_boxed"
    )]
    pub meta: BoxedMeta,
    /// `level`.
    #[serde(default, borrow, deserialize_with = "option_cow_str")]
    pub level: Option<Cow<'a, str>>,
}

/// Params of `resources/subscribe` and `resources/unsubscribe` (2025-11-25).
#[derive(Debug, Default, Deserialize)]
pub struct UriParams<'a> {
    /// `_meta`.
    #[serde(
        rename = "_meta",
        default,
        deserialize_with = "crate::meta::deserialize_boxed"
    )]
    pub meta: BoxedMeta,
    /// `uri`.
    #[serde(default, borrow, deserialize_with = "option_cow_str")]
    pub uri: Option<Cow<'a, str>>,
}

/// Params of the Tasks extension's `tasks/get`, `tasks/update` and `tasks/cancel`.
#[derive(Debug, Default, Deserialize)]
pub struct TaskParams<'a> {
    /// `_meta`.
    #[serde(
        rename = "_meta",
        default,
        deserialize_with = "crate::meta::deserialize_boxed"
    )]
    pub meta: BoxedMeta,
    /// `taskId`.
    #[serde(
        rename = "taskId",
        default,
        borrow,
        deserialize_with = "option_cow_str"
    )]
    pub task_id: Option<Cow<'a, str>>,
    /// `inputResponses` (`tasks/update`); an explicit `null` is kept so it can be refused.
    #[serde(
        rename = "inputResponses",
        default,
        deserialize_with = "crate::serde_util::any_value"
    )]
    pub input_responses: Option<Value>,
}

/// A request's params, typed by its method.
#[derive(Debug)]
pub enum Params<'a> {
    /// Only `_meta`: `server/discover`, `ping`, and unknown methods.
    Meta(MetaParams),
    /// The paginated lists.
    List(ListParams<'a>),
    /// `tools/call` and `prompts/get`.
    Call(Box<CallParams<'a>>),
    /// `resources/read`.
    Read(Box<ReadParams<'a>>),
    /// `completion/complete`.
    Complete(Box<CompleteParams>),
    /// `subscriptions/listen`.
    Listen(ListenParams),
    /// `initialize`.
    Initialize(Box<InitializeParams<'a>>),
    /// `logging/setLevel`.
    SetLevel(SetLevelParams<'a>),
    /// `resources/subscribe` and `resources/unsubscribe`.
    Uri(UriParams<'a>),
    /// `tasks/get`, `tasks/update` and `tasks/cancel`.
    Task(Box<TaskParams<'a>>),
}

impl<'a> Params<'a> {
    /// The `_meta` of any params.
    pub fn meta(&self) -> Option<&RequestMeta> {
        match self {
            Params::Meta(p) => p.meta.as_deref(),
            Params::List(p) => p.meta.as_deref(),
            Params::Call(p) => p.meta.as_deref(),
            Params::Read(p) => p.meta.as_deref(),
            Params::Complete(p) => p.meta.as_deref(),
            Params::Listen(p) => p.meta.as_deref(),
            Params::Initialize(p) => p.meta.as_deref(),
            Params::SetLevel(p) => p.meta.as_deref(),
            Params::Uri(p) => p.meta.as_deref(),
            Params::Task(p) => p.meta.as_deref(),
        }
    }

    /// Takes the `_meta` out of any params.
    pub fn take_meta(&mut self) -> BoxedMeta {
        match self {
            Params::Meta(p) => p.meta.take(),
            Params::List(p) => p.meta.take(),
            Params::Call(p) => p.meta.take(),
            Params::Read(p) => p.meta.take(),
            Params::Complete(p) => p.meta.take(),
            Params::Listen(p) => p.meta.take(),
            Params::Initialize(p) => p.meta.take(),
            Params::SetLevel(p) => p.meta.take(),
            Params::Uri(p) => p.meta.take(),
            Params::Task(p) => p.meta.take(),
        }
    }

    /// The value of the member mirrored in `Mcp-Name` (`name`, `uri` or `taskId`), or
    /// the empty string when the method has one and the request left it out.
    pub fn name_value(&self) -> &str {
        match self {
            Params::Call(p) => p.name.as_deref().unwrap_or(""),
            Params::Read(p) => p.uri.as_deref().unwrap_or(""),
            Params::Task(p) => p.task_id.as_deref().unwrap_or(""),
            _ => "",
        }
    }

    /// Empty params of the kind `method` takes (a request that sent none).
    fn empty(method: Option<Method>) -> Params<'a> {
        use Method as M;
        match method {
            Some(M::ToolsCall | M::PromptsGet) => Params::Call(Box::default()),
            Some(M::ResourcesRead) => Params::Read(Box::default()),
            Some(M::ToolsList | M::PromptsList | M::ResourcesList | M::ResourcesTemplatesList) => {
                Params::List(ListParams::default())
            }
            Some(M::CompletionComplete) => Params::Complete(Box::default()),
            Some(M::SubscriptionsListen) => Params::Listen(ListenParams::default()),
            Some(M::Initialize) => Params::Initialize(Box::default()),
            Some(M::LoggingSetLevel) => Params::SetLevel(SetLevelParams::default()),
            Some(M::ResourcesSubscribe | M::ResourcesUnsubscribe) => {
                Params::Uri(UriParams::default())
            }
            Some(M::TasksGet | M::TasksUpdate | M::TasksCancel) => Params::Task(Box::default()),
            Some(M::Discover | M::Ping) | None => Params::Meta(MetaParams::default()),
        }
    }
}

/// Reads a request's params for its method. `one_pass`: the `arguments` of a call are
/// parsed straight into a `Value` (the message is read again for their text only when
/// the `Value` holds an `f64`, see [`decode`]); otherwise they are read as text first.
struct ParamsSeed {
    method: Option<Method>,
    one_pass: bool,
}

impl<'de> DeserializeSeed<'de> for ParamsSeed {
    type Value = Params<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Params<'de>, D::Error> {
        use Method as M;
        Ok(match self.method {
            Some(M::ToolsCall | M::PromptsGet) if self.one_pass => {
                Params::Call(Box::new(CallParams::deserialize(d)?))
            }
            Some(M::ToolsCall | M::PromptsGet) => Params::Call(Box::new(
                CallParamsText::deserialize(d)?
                    .parse()
                    .map_err(de::Error::custom)?,
            )),
            Some(M::ResourcesRead) => Params::Read(Box::new(ReadParams::deserialize(d)?)),
            Some(M::ToolsList | M::PromptsList | M::ResourcesList | M::ResourcesTemplatesList) => {
                Params::List(ListParams::deserialize(d)?)
            }
            Some(M::CompletionComplete) => {
                Params::Complete(Box::new(CompleteParams::deserialize(d)?))
            }
            Some(M::SubscriptionsListen) => Params::Listen(ListenParams::deserialize(d)?),
            Some(M::Initialize) => Params::Initialize(Box::new(InitializeParams::deserialize(d)?)),
            Some(M::LoggingSetLevel) => Params::SetLevel(SetLevelParams::deserialize(d)?),
            Some(M::ResourcesSubscribe | M::ResourcesUnsubscribe) => {
                Params::Uri(UriParams::deserialize(d)?)
            }
            Some(M::TasksGet | M::TasksUpdate | M::TasksCancel) => {
                Params::Task(Box::new(TaskParams::deserialize(d)?))
            }
            Some(M::Discover | M::Ping) | None => Params::Meta(MetaParams::deserialize(d)?),
        })
    }
}

/// A request: its id, its method and its typed params.
#[derive(Debug)]
pub struct Request<'a> {
    /// The request id.
    pub id: RequestId,
    /// The method.
    pub method: MethodName<'a>,
    /// The params (empty params of the method's kind when none were sent).
    pub params: Params<'a>,
}

/// What one incoming message is.
#[derive(Debug)]
pub enum Incoming<'a> {
    /// A request.
    Request(Request<'a>),
    /// A notification (no id). Its params stay raw: a server reads the few it honours.
    Notification {
        /// The notification method.
        method: Cow<'a, str>,
        /// The raw `params`, if any.
        params: Option<&'a RawValue>,
    },
    /// A response (`result` or `error`): only 2025-11-25 servers, which send requests to
    /// their clients, expect these.
    Response {
        /// The id it answers, if readable.
        id: Option<RequestId>,
        /// The raw `result`, when it is a result.
        result: Option<&'a RawValue>,
        /// The raw `error`, when it is an error.
        error: Option<&'a RawValue>,
    },
}

/// Why a message was refused, with the request id when it could be read.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    /// The request id, if it could be read.
    pub id: Option<RequestId>,
    /// What was wrong.
    pub problem: Problem,
    /// The error to answer with, boxed to keep the success path small.
    pub error: Box<ErrorObject>,
}

/// The kinds of malformed message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// Not JSON (-32700).
    Parse,
    /// JSON, but not a valid JSON-RPC message (-32600).
    InvalidMessage,
    /// A valid envelope whose params do not fit the method (-32602).
    InvalidParams,
}

impl Refused {
    fn new(id: Option<RequestId>, problem: Problem, code: ErrorCode, message: String) -> Self {
        Refused {
            id,
            problem,
            error: Box::new(ErrorObject::new(code, message)),
        }
    }

    fn invalid(id: Option<RequestId>, message: &str) -> Self {
        Refused::new(
            id,
            Problem::InvalidMessage,
            ErrorCode::INVALID_REQUEST,
            format!("Invalid request: {message}"),
        )
    }
}

/// Decodes one message (see the [module](self) docs).
///
/// A body that is not UTF-8 is a parse error (RFC 8259 §8.1), wherever the bad bytes are:
/// the one pass skips the members it ignores without reading their strings, so the whole
/// body is checked first.
pub fn decode(bytes: &[u8]) -> Result<Incoming<'_>, Refused> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        Refused::new(
            None,
            Problem::Parse,
            ErrorCode::PARSE_ERROR,
            format!("Parse error: {}", crate::jsonrpc::not_utf8(e)),
        )
    })?;
    let mut de = serde_json::Deserializer::from_str(text);
    let first = de.deserialize_map(EnvelopeVisitor);
    let raw = match first.and_then(|raw| de.end().map(|()| raw)) {
        Ok(raw) => raw,
        // A body that is JSON but not a message we can read in one pass: read it again
        // leniently, so the answer is precise and carries the id.
        Err(e) if e.is_data() => return decode_slowly(bytes),
        // serde_json files a number too large for its type (`1e999`) and arguments nested
        // too deep for a `Value` under syntax, but the text is JSON: the careful path reads
        // the envelope without converting its numbers or building its values.
        Err(e) if e.is_syntax() && is_beyond_reader_limits(&e) => return decode_slowly(bytes),
        Err(e) if e.is_eof() || e.is_syntax() => {
            return Err(Refused::new(
                None,
                Problem::Parse,
                ErrorCode::PARSE_ERROR,
                format!("Parse error: {e}"),
            ));
        }
        Err(e) => return Err(Refused::invalid(None, &e.to_string())),
    };
    let one_pass = matches!(raw.params, ParamsSlot::Typed(_));
    let mut incoming = raw.classify()?;
    // Arguments read in one pass with an `f64` in them may have held a number inexactly:
    // look at their text (read once more, for this rare case only). Params that came
    // before the method were read as text first and need no second look.
    if one_pass
        && let Incoming::Request(Request {
            params: Params::Call(call),
            ..
        }) = &mut incoming
        && call
            .arguments
            .as_ref()
            .is_some_and(crate::numbers::has_float)
        && let Some(text) = arguments_text(bytes)
    {
        call.exact_arguments = crate::numbers::exact_text(text);
    }
    Ok(incoming)
}

/// Whether serde_json refused well-formed JSON only for a limit of its own: a number
/// that does not fit its type, or values nested deeper than it parses into a `Value`.
/// serde_json does not expose its error codes, so this reads the message, on the error path only.
fn is_beyond_reader_limits(e: &serde_json::Error) -> bool {
    let message = e.to_string();
    message.starts_with("number out of range") || message.starts_with("recursion limit exceeded")
}

/// The careful path: the envelope with raw members, then the params on their own.
fn decode_slowly(bytes: &[u8]) -> Result<Incoming<'_>, Refused> {
    let envelope: crate::jsonrpc::Envelope<'_> =
        crate::jsonrpc::Envelope::parse(bytes).map_err(|e| {
            let problem = if e.code == ErrorCode::PARSE_ERROR {
                Problem::Parse
            } else {
                Problem::InvalidMessage
            };
            Refused {
                id: None,
                problem,
                error: Box::new(e),
            }
        })?;
    match envelope.classify() {
        Err(invalid) => Err(Refused {
            id: invalid.id,
            problem: Problem::InvalidMessage,
            error: invalid.error,
        }),
        Ok(crate::jsonrpc::Incoming::Notification { method, params }) => {
            Ok(Incoming::Notification { method, params })
        }
        Ok(crate::jsonrpc::Incoming::Response { id, result, error }) => {
            Ok(Incoming::Response { id, result, error })
        }
        Ok(crate::jsonrpc::Incoming::Request { id, method, params }) => {
            let method = MethodName::from_cow(method);
            let params = typed_params(method.known(), params).map_err(|e| {
                Refused::new(
                    Some(id.clone()),
                    Problem::InvalidParams,
                    ErrorCode::INVALID_PARAMS,
                    format!("Invalid params: {}", crate::quote::quote(&e.to_string())),
                )
            })?;
            Ok(Incoming::Request(Request { id, method, params }))
        }
    }
}

fn typed_params<'a>(
    method: Option<Method>,
    raw: Option<&'a RawValue>,
) -> Result<Params<'a>, serde_json::Error> {
    match raw {
        None => Ok(Params::empty(method)),
        Some(raw) => {
            let mut de = serde_json::Deserializer::from_str(raw.get());
            ParamsSeed {
                method,
                one_pass: false,
            }
            .deserialize(&mut de)
        }
    }
}

/// Params read in the first pass: typed when the method came first, raw otherwise.
enum ParamsSlot<'a> {
    Absent,
    Typed(Params<'a>),
    Raw(&'a RawValue),
}

/// The members of a message as read in one pass.
struct RawMessage<'a> {
    jsonrpc: Option<Cow<'a, str>>,
    id: Option<&'a RawValue>,
    method: Option<MethodName<'a>>,
    params: ParamsSlot<'a>,
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
}

struct EnvelopeVisitor;

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = RawMessage<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawMessage<'de>, A::Error> {
        let mut msg = RawMessage {
            jsonrpc: None,
            id: None,
            method: None,
            params: ParamsSlot::Absent,
            result: None,
            error: None,
        };
        while let Some(CowStr(key)) = map.next_key()? {
            match key.as_ref() {
                "jsonrpc" if msg.jsonrpc.is_none() => {
                    msg.jsonrpc = Some(map.next_value::<CowStr<'de>>()?.0);
                }
                "id" if msg.id.is_none() => msg.id = Some(map.next_value()?),
                "method" if msg.method.is_none() => {
                    msg.method = Some(MethodName::from_cow(map.next_value::<CowStr<'de>>()?.0));
                }
                "params" if matches!(msg.params, ParamsSlot::Absent) => {
                    // Typed at once when this is surely a request's params; notifications
                    // (no id, methods of their own) keep theirs raw.
                    let typed = msg
                        .method
                        .as_ref()
                        .filter(|m| msg.id.is_some() || m.known().is_some());
                    msg.params = match typed {
                        Some(m) => ParamsSlot::Typed(map.next_value_seed(ParamsSeed {
                            method: m.known(),
                            one_pass: true,
                        })?),
                        None => ParamsSlot::Raw(map.next_value()?),
                    };
                }
                "result" if msg.result.is_none() => msg.result = Some(map.next_value()?),
                "error" if msg.error.is_none() => msg.error = Some(map.next_value()?),
                "jsonrpc" | "id" | "method" | "params" | "result" | "error" => {
                    return Err(de::Error::custom(format!("duplicate member {key:?}")));
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(msg)
    }
}

impl<'a> RawMessage<'a> {
    fn classify(self) -> Result<Incoming<'a>, Refused> {
        let id = match self.id {
            None => None,
            Some(raw) => match parse_id(raw) {
                Some(id) => Some(id),
                None => {
                    return Err(Refused::invalid(None, "id must be a string or an integer"));
                }
            },
        };
        if self.jsonrpc.as_deref() != Some(JSONRPC_VERSION) {
            return Err(Refused::invalid(id, "\"jsonrpc\" must be \"2.0\""));
        }
        let Some(method) = self.method else {
            if self.result.is_some() || self.error.is_some() {
                return Ok(Incoming::Response {
                    id,
                    result: self.result,
                    error: self.error,
                });
            }
            return Err(Refused::invalid(id, "no method, result or error"));
        };
        let Some(id) = id else {
            let params = match self.params {
                ParamsSlot::Raw(raw) => Some(raw),
                // A request method sent as a notification: nothing a server reads.
                ParamsSlot::Absent | ParamsSlot::Typed(_) => None,
            };
            let method = match method {
                MethodName::Known(m) => Cow::Borrowed(m.as_str()),
                MethodName::Other(s) => s,
            };
            return Ok(Incoming::Notification { method, params });
        };
        let params = match self.params {
            ParamsSlot::Typed(p) => p,
            ParamsSlot::Absent => Params::empty(method.known()),
            ParamsSlot::Raw(raw) => {
                if !raw.get().trim_start().starts_with('{') {
                    return Err(Refused::invalid(Some(id), "params must be an object"));
                }
                typed_params(method.known(), Some(raw)).map_err(|e| {
                    Refused::new(
                        Some(id.clone()),
                        Problem::InvalidParams,
                        ErrorCode::INVALID_PARAMS,
                        format!("Invalid params: {}", crate::quote::quote(&e.to_string())),
                    )
                })?
            }
        };
        Ok(Incoming::Request(Request { id, method, params }))
    }
}

/// A request id from its raw JSON: a string or an integer.
///
/// As [`RequestId`]'s own reading: `-0` is refused, since serde_json reads it as the
/// float `-0.0` (keeping its sign), not as an integer.
fn parse_id(raw: &RawValue) -> Option<RequestId> {
    let text = raw.get();
    match text.as_bytes().first() {
        Some(b'"') => serde_json::from_str::<String>(text)
            .ok()
            .map(RequestId::String),
        _ if text == "-0" => None,
        _ => text.parse::<i64>().ok().map(RequestId::Number),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(body: &str) -> Request<'_> {
        match decode(body.as_bytes()).unwrap() {
            Incoming::Request(r) => r,
            other => panic!("not a request: {other:?}"),
        }
    }

    #[test]
    fn meta_is_read_into_its_box_and_null_or_absent_meta_is_none() {
        let r = request(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"x.example/k":1}}}"#,
        );
        let meta = r.params.meta().expect("meta");
        assert_eq!(meta.protocol_version.as_deref(), Some("2026-07-28"));
        assert!(meta.client_capabilities.is_some());
        assert_eq!(meta.other["x.example/k"], 1);
        for params in [r#"{"name":"echo","_meta":null}"#, r#"{"name":"echo"}"#] {
            let body =
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}"#);
            assert!(request(&body).params.meta().is_none(), "{params}");
        }
        let twice = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":1,"progressToken":2}}}"#;
        assert!(decode(twice.as_bytes()).is_err());
    }

    #[test]
    fn a_body_that_is_not_utf8_is_a_parse_error_wherever_the_bytes_are() {
        // In a member the one pass skips, in params it skips, and in a string it reads:
        // refused alike, whatever the order of the members.
        for body in [
            &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xff\"}"[..],
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x/y\",\"params\":{\"a\":\"\xc3\"}}",
            b"{\"params\":{\"a\":\"\xc3\"},\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x/y\"}",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"\xe2\x82\"}}",
        ] {
            let refused = decode(body).unwrap_err();
            assert_eq!(refused.problem, Problem::Parse, "{body:?}");
            assert_eq!(refused.error.code, ErrorCode::PARSE_ERROR);
            assert!(refused.error.message.contains("UTF-8"), "{}", refused.error.message);
            let envelope = crate::jsonrpc::Envelope::parse(body).unwrap_err();
            assert_eq!(envelope.code, ErrorCode::PARSE_ERROR);
        }
    }

    #[test]
    fn a_number_too_large_for_its_type_is_json_not_a_parse_error() {
        // `22e22222` is a well-formed JSON number no f64 holds: where the envelope reads it
        // (params that are not an object) the answer is the envelope's, as on the careful path.
        let body =
            br#"{"jsonrpc":"2.0","id":"a","method":"completion/complete","params":22e22222}"#;
        let refused = decode(body).unwrap_err();
        assert_ne!(refused.problem, Problem::Parse, "{}", refused.error.message);
        let careful = crate::jsonrpc::Envelope::parse(body).map(|e| e.classify());
        assert!(careful.is_ok(), "{careful:?}");
        // Inside object params the number is the params' problem, and the id is kept.
        let body = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"n":1e999}}}"#;
        match decode(body) {
            Ok(Incoming::Request(r)) => assert_eq!(r.id, RequestId::Number(7)),
            Err(refused) => {
                assert_eq!(
                    refused.problem,
                    Problem::InvalidParams,
                    "{}",
                    refused.error.message
                );
                assert_eq!(refused.id, Some(RequestId::Number(7)));
            }
            Ok(other) => panic!("{other:?}"),
        }
    }

    /// Arguments are read once when every number in them fits a `Value`; their text is
    /// kept when one does not, whether the params came after the method (one pass, then
    /// the text read again) or before it (the text first), and whatever the number.
    #[test]
    fn arguments_keep_their_text_only_when_a_number_does_not_fit() {
        fn call(body: &str) -> Box<CallParams<'_>> {
            match request(body).params {
                Params::Call(call) => call,
                other => panic!("not call params: {other:?}"),
            }
        }
        for (arguments, exact) in [
            (r#"{"text":"hi \"1e999\" 12345678901234567890123"}"#, false),
            (r#"{"n":42,"x":0.5,"y":[1.25e3]}"#, false),
            (r#"{"n":12345678901234567890123}"#, true),
            (r#"{"n":[{"deep":-1e999}]}"#, true),
            (r#"{"n":0.12345678901234567890}"#, true),
        ] {
            for body in [
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x","arguments":{arguments}}}}}"#
                ),
                format!(
                    r#"{{"params":{{"name":"x","arguments":{arguments}}},"jsonrpc":"2.0","id":1,"method":"tools/call"}}"#
                ),
            ] {
                let call = call(&body);
                assert_eq!(
                    call.exact_arguments.as_deref().map(RawValue::get),
                    exact.then_some(arguments),
                    "{body}"
                );
                assert!(call.arguments.is_some_and(|a| a.is_object()), "{body}");
            }
        }
        let none = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":null}}"#;
        assert!(call(none).arguments.is_none());
    }

    /// Arguments nested deeper than a `Value` is built are JSON: refused as params (with
    /// the id), not as a parse error.
    #[test]
    fn arguments_nested_too_deep_are_invalid_params() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"x","arguments":{{"a":{deep}}}}}}}"#
        );
        let refused = decode(body.as_bytes()).unwrap_err();
        assert_eq!(
            refused.problem,
            Problem::InvalidParams,
            "{}",
            refused.error.message
        );
        assert_eq!(refused.error.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(refused.id, Some(RequestId::Number(3)));
    }

    /// An id is read as the careful path reads it, `-0` included (refused by both).
    #[test]
    fn ids_are_read_as_the_envelope_reads_them() {
        for id in [
            "0",
            "-1",
            "9223372036854775807",
            "\"-0\"",
            "-0",
            "1.0",
            "1e2",
            "null",
        ] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            let fast = match decode(body.as_bytes()) {
                Ok(Incoming::Request(r)) => Some(r.id),
                _ => None,
            };
            let careful = match crate::jsonrpc::Envelope::parse(body.as_bytes())
                .map(crate::jsonrpc::Envelope::classify)
            {
                Ok(Ok(crate::jsonrpc::Incoming::Request { id, .. })) => Some(id),
                _ => None,
            };
            assert_eq!(fast, careful, "{id}");
        }
    }

    #[test]
    fn params_in_either_order() {
        for body in [
            r#"{"jsonrpc":"2.0","id":"a","method":"resources/read","params":{"uri":"x:/1"}}"#,
            r#"{"params":{"uri":"x:/1"},"jsonrpc":"2.0","method":"resources/read","id":"a"}"#,
        ] {
            let r = request(body);
            assert_eq!(r.id, RequestId::String("a".into()));
            assert_eq!(r.method.known(), Some(Method::ResourcesRead));
            assert_eq!(r.params.name_value(), "x:/1");
        }
    }

    #[test]
    fn borrowed_strings() {
        let r =
            request(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#);
        let Params::Call(c) = r.params else { panic!() };
        assert!(matches!(c.name, Some(Cow::Borrowed("echo"))));
    }

    #[test]
    fn unknown_methods_and_missing_params() {
        let r = request(r#"{"jsonrpc":"2.0","id":1,"method":"x/y","params":{"a":1}}"#);
        assert_eq!(r.method, MethodName::Other(Cow::Borrowed("x/y")));
        assert!(matches!(r.params, Params::Meta(_)));
        let r = request(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        assert!(matches!(r.params, Params::List(_)));
    }

    #[test]
    fn refusals_keep_the_id() {
        let e = decode(br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":5}}"#)
            .unwrap_err();
        assert_eq!(e.id, Some(RequestId::Number(4)));
        assert_eq!(e.problem, Problem::InvalidParams);
        assert_eq!(e.error.code, ErrorCode::INVALID_PARAMS);
        let e =
            decode(br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":[1]}"#).unwrap_err();
        assert_eq!(
            (e.id, e.problem),
            (Some(RequestId::Number(5)), Problem::InvalidMessage)
        );
        let e = decode(br#"{"jsonrpc":"1.0","id":6,"method":"m"}"#).unwrap_err();
        assert_eq!(e.id, Some(RequestId::Number(6)));
        let e = decode(br#"{"jsonrpc":"2.0","id":null,"method":"m"}"#).unwrap_err();
        assert_eq!((e.id, e.problem), (None, Problem::InvalidMessage));
        assert_eq!(decode(b"{nope").unwrap_err().problem, Problem::Parse);
        assert_eq!(decode(b"[1]").unwrap_err().problem, Problem::InvalidMessage);
        assert_eq!(decode(b"{} x").unwrap_err().problem, Problem::Parse);
        let e = decode(br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#).unwrap_err();
        assert_eq!(e.problem, Problem::InvalidMessage);
    }

    #[test]
    fn notifications_and_responses() {
        match decode(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        )
        .unwrap()
        {
            Incoming::Notification { method, params } => {
                assert_eq!(method, "notifications/cancelled");
                assert_eq!(params.unwrap().get(), r#"{"requestId":1}"#);
            }
            other => panic!("{other:?}"),
        }
        match decode(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#).unwrap() {
            Incoming::Response { id, result, .. } => {
                assert_eq!(id, Some(RequestId::Number(3)));
                assert!(result.is_some());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn null_input_responses_are_kept() {
        let r = request(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","inputResponses":null}}"#,
        );
        let Params::Call(c) = r.params else { panic!() };
        assert_eq!(c.input_responses, Some(Value::Null));
    }
}
