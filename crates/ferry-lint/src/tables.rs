//! What each rule looks for, as data: protocol strings, SDK calls, SDK names, keys and
//! handler methods, per SDK (the Python SDK and FastMCP, the TypeScript SDK, rmcp, the Go
//! SDK and mcp-go).
//!
//! Protocol strings fire anywhere (outside comments, docstrings and the language's own
//! print and log calls); SDK shapes fire only in files that import an MCP library, since
//! names such as `ping` or `info` mean other things elsewhere.

use crate::language::Family;
use crate::rule::RuleId;

/// What the receiver of a call (or the object of a member access) must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Recv {
    /// Anything, including a plain function call.
    Any,
    /// Any receiver: a method or path call.
    Method,
    /// An MCP session: `session`, `ctx.session`, `req.Session`, `ss`.
    Session,
    /// An MCP session, server, client or peer, or a FastMCP `Context`.
    Mcp,
    /// A FastMCP `Context`: a parameter annotated with `Context` (imported from an MCP
    /// library), or a variable assigned from `get_context()`.
    PyContext,
    /// A Go package imported from an MCP library (`mcp.NewSSEHandler`).
    McpPackage,
    /// A transport, the TypeScript SDK's handler `extra`, or a FastMCP `Context`.
    Transport,
}

/// An SDK call.
pub(crate) struct CallShape {
    pub names: &'static [&'static str],
    pub recv: Recv,
    pub family: Option<Family>,
    pub rule: RuleId,
    pub what: &'static str,
}

const PY: Option<Family> = Some(Family::Python);
const JS: Option<Family> = Some(Family::Js);
const RS: Option<Family> = Some(Family::Rust);
const GO: Option<Family> = Some(Family::Go);
const ANY: Option<Family> = None;

macro_rules! call {
    ($rule:ident, $recv:ident, $fam:expr, [$($name:literal),+ $(,)?], $what:literal) => {
        CallShape { names: &[$($name),+], recv: Recv::$recv, family: $fam, rule: RuleId::$rule, what: $what }
    };
}

/// SDK calls, by rule.
pub(crate) static CALLS: &[CallShape] = &[
    // Sampling.
    call!(
        Sampling,
        Mcp,
        PY,
        ["create_message"],
        "sends a sampling request (sampling/createMessage)"
    ),
    call!(
        Sampling,
        Mcp,
        JS,
        ["createMessage"],
        "sends a sampling request (sampling/createMessage)"
    ),
    call!(
        Sampling,
        Mcp,
        RS,
        ["create_message"],
        "sends a sampling request (sampling/createMessage)"
    ),
    call!(
        Sampling,
        Mcp,
        GO,
        ["CreateMessage", "Sample", "RequestSampling"],
        "sends a sampling request (sampling/createMessage)"
    ),
    call!(
        Sampling,
        PyContext,
        PY,
        ["sample"],
        "asks the client to sample an LLM (sampling/createMessage)"
    ),
    call!(
        Sampling,
        Mcp,
        JS,
        ["requestSampling"],
        "sends a sampling request (sampling/createMessage)"
    ),
    call!(
        Sampling,
        Method,
        RS,
        ["enable_sampling"],
        "declares the sampling capability"
    ),
    // Roots.
    call!(
        Roots,
        Mcp,
        ANY,
        ["list_roots", "listRoots", "ListRoots"],
        "asks the client for its roots (roots/list)"
    ),
    call!(
        Roots,
        Mcp,
        ANY,
        [
            "send_roots_list_changed",
            "sendRootsListChanged",
            "notify_roots_list_changed",
            "AddRoots",
            "RemoveRoots"
        ],
        "announces a change of roots (notifications/roots/list_changed)"
    ),
    call!(
        Roots,
        Method,
        RS,
        ["enable_roots", "enable_roots_list_changed"],
        "declares the roots capability"
    ),
    // Logging.
    call!(
        Logging,
        Mcp,
        ANY,
        [
            "send_log_message",
            "sendLoggingMessage",
            "notify_logging_message",
            "SendLogMessageToClient",
            "SendLogMessageToSpecificClient"
        ],
        "sends a protocol log message (notifications/message)"
    ),
    call!(
        Logging,
        Mcp,
        ANY,
        ["set_logging_level", "setLoggingLevel", "SetLoggingLevel"],
        "uses logging/setLevel, which 2026-07-28 removes (the level now travels in each request's _meta, io.modelcontextprotocol/logLevel)"
    ),
    call!(
        Logging,
        Mcp,
        RS,
        ["set_level"],
        "uses logging/setLevel, which 2026-07-28 removes (the level now travels in each request's _meta, io.modelcontextprotocol/logLevel)"
    ),
    call!(
        Logging,
        PyContext,
        PY,
        [
            "log",
            "debug",
            "info",
            "notice",
            "warning",
            "error",
            "critical",
            "alert",
            "emergency"
        ],
        "sends a protocol log message to the client (notifications/message)"
    ),
    call!(
        Logging,
        Session,
        GO,
        ["Log"],
        "sends a protocol log message (notifications/message)"
    ),
    call!(
        Logging,
        McpPackage,
        GO,
        ["NewLoggingHandler", "WithLogging"],
        "sends logs as protocol log messages (notifications/message)"
    ),
    call!(
        Logging,
        Method,
        RS,
        ["enable_logging"],
        "declares the logging capability"
    ),
    // Ping.
    call!(
        Ping,
        Any,
        ANY,
        ["send_ping", "sendPing", "SendPing"],
        "sends a ping request"
    ),
    call!(Ping, Mcp, ANY, ["ping", "Ping"], "sends a ping request"),
    // elicitationId and the completion notification.
    call!(
        ElicitationId,
        Any,
        ANY,
        [
            "send_elicit_complete",
            "createElicitationCompletionNotifier",
            "notify_elicitation_complete",
            "SendElicitationComplete"
        ],
        "sends notifications/elicitation/complete"
    ),
    // Sessions.
    call!(
        SessionId,
        Any,
        PY,
        ["get_session_id"],
        "reads the Mcp-Session-Id of the transport"
    ),
    call!(
        SessionId,
        Session,
        GO,
        ["ID"],
        "reads the session's Mcp-Session-Id"
    ),
    // Dynamic client registration.
    call!(
        Dcr,
        Any,
        ANY,
        ["registerClient", "register_client", "RegisterClient"],
        "registers an OAuth client dynamically (RFC 7591)"
    ),
    // HTTP+SSE.
    call!(
        HttpSseTransport,
        Any,
        PY,
        ["sse_client", "sse_app", "run_sse_async"],
        "uses the HTTP+SSE transport"
    ),
    call!(
        HttpSseTransport,
        Method,
        PY,
        ["connect_sse", "handle_post_message"],
        "serves the HTTP+SSE transport"
    ),
    call!(
        HttpSseTransport,
        Any,
        GO,
        ["NewSSEHandler", "NewSSEServer", "NewSSEMCPClient"],
        "uses the HTTP+SSE transport"
    ),
    // Server-to-client requests outside MRTR.
    call!(
        ServerRequestOutsideMrtr,
        Session,
        PY,
        ["elicit", "elicit_form", "elicit_url"],
        "sends elicitation/create as a server-to-client request"
    ),
    call!(
        ServerRequestOutsideMrtr,
        PyContext,
        PY,
        ["elicit", "elicit_url"],
        "sends elicitation/create as a server-to-client request"
    ),
    call!(
        ServerRequestOutsideMrtr,
        Mcp,
        JS,
        ["elicitInput"],
        "sends elicitation/create as a server-to-client request"
    ),
    call!(
        ServerRequestOutsideMrtr,
        Mcp,
        RS,
        ["create_elicitation", "elicit"],
        "sends elicitation/create as a server-to-client request"
    ),
    call!(
        ServerRequestOutsideMrtr,
        Session,
        GO,
        ["Elicit"],
        "sends elicitation/create as a server-to-client request"
    ),
    call!(
        ServerRequestOutsideMrtr,
        Mcp,
        GO,
        ["RequestElicitation"],
        "sends elicitation/create as a server-to-client request"
    ),
];

/// A name of an SDK's type, schema, constant or function, fired where it is referenced
/// (not where it is imported or defined).
pub(crate) struct NameShape {
    pub names: &'static [&'static str],
    pub rule: RuleId,
    pub what: &'static str,
}

macro_rules! name {
    ($rule:ident, [$($name:literal),+ $(,)?], $what:literal) => {
        NameShape { names: &[$($name),+], rule: RuleId::$rule, what: $what }
    };
}

/// SDK names, by rule.
pub(crate) static NAMES: &[NameShape] = &[
    name!(
        Sampling,
        [
            "CreateMessageRequestSchema",
            "CreateMessageResultSchema",
            "CreateMessageRequest",
            "CreateMessageRequestParams",
            "CreateMessageRequestParam",
            "CreateMessageParams",
            "CreateMessageResult",
            "SamplingCapability",
            "SamplingFnT",
            "MethodSamplingCreateMessage",
            "CreateMessageHandler",
            "SamplingHandler",
            "WithSamplingHandler",
        ],
        "belongs to sampling"
    ),
    name!(
        IncludeContext,
        ["ThisServer", "AllServers"],
        "asks for sampling context other than \"none\""
    ),
    name!(
        Roots,
        [
            "ListRootsRequestSchema",
            "ListRootsResultSchema",
            "ListRootsRequest",
            "ListRootsResult",
            "RootsCapability",
            "RootsCapabilities",
            "RootsListChangedNotificationSchema",
            "RootsListChangedNotification",
            "ListRootsFnT",
            "MethodListRoots",
            "ListRootsParams",
            "RootsListChangedHandler",
            "RootsListChangedParams",
        ],
        "belongs to roots"
    ),
    name!(
        Logging,
        [
            "SetLevelRequestSchema",
            "SetLevelRequest",
            "SetLevelRequestParams",
            "SetLevelRequestParam",
            "LoggingMessageNotificationSchema",
            "LoggingMessageNotification",
            "LoggingMessageNotificationParams",
            "LoggingMessageNotificationParam",
            "LoggingMessageParams",
            "LoggingCapability",
            "LoggingFnT",
            "MethodSetLogLevel",
            "LoggingHandlerOptions",
            "LoggingMessageHandler",
            "SetLoggingLevelParams",
        ],
        "belongs to protocol logging"
    ),
    name!(
        Ping,
        [
            "PingRequestSchema",
            "PingRequest",
            "PingRequestMethod",
            "PingParams",
            "MethodPing",
        ],
        "is the ping request"
    ),
    name!(
        ElicitationId,
        [
            "ElicitationCompleteNotificationSchema",
            "ElicitationCompleteNotification",
            "ElicitCompleteNotification",
            "ElicitationCompleteNotificationParams",
            "ElicitationCompleteNotificationParam",
        ],
        "is notifications/elicitation/complete"
    ),
    name!(
        SessionId,
        ["MCP_SESSION_ID_HEADER", "SessionIdGenerator"],
        "is the Mcp-Session-Id header"
    ),
    name!(
        Dcr,
        [
            "ClientRegistrationOptions",
            "RegistrationHandler",
            "registration_endpoint",
            "registrationEndpoint",
        ],
        "belongs to dynamic client registration"
    ),
    name!(
        HttpSseTransport,
        [
            "SSEServerTransport",
            "SSEClientTransport",
            "SseServerTransport",
            "SseServer",
            "SseServerConfig",
            "SseClientTransport",
            "SseClientConfig",
            "SSEHandler",
            "SSEServer",
            "SSEMCPClient",
            "SSEServerTransportOptions",
            "SSEClientTransportOptions",
            "sse_client",
            "SseTransport",
        ],
        "is the HTTP+SSE transport"
    ),
];

/// A key: an object property, a keyword argument or a struct field.
pub(crate) struct KeyShape {
    pub names: &'static [&'static str],
    pub rule: RuleId,
    /// What the value must be for the key to fire.
    pub value: Value,
    /// Fires without an MCP import (a protocol field, not an SDK option).
    pub protocol: bool,
    pub what: &'static str,
}

/// A condition on a key's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Value {
    /// Anything that is not `None`/`null`/`undefined`/`nil`/`false`.
    Present,
    /// `true`.
    True,
    /// `false`.
    False,
    /// This string.
    Str(&'static str),
    /// A string other than this one.
    StrOtherThan(&'static str),
}

macro_rules! key {
    ($rule:ident, $protocol:literal, $value:expr, [$($name:literal),+ $(,)?], $what:literal) => {
        KeyShape { names: &[$($name),+], rule: RuleId::$rule, value: $value, protocol: $protocol, what: $what }
    };
}

/// Keys, by rule.
pub(crate) static KEYS: &[KeyShape] = &[
    key!(
        IncludeContext,
        true,
        Value::StrOtherThan("none"),
        ["includeContext", "include_context", "IncludeContext"],
        "asks for sampling context other than \"none\""
    ),
    key!(
        Sampling,
        false,
        Value::Present,
        [
            "sampling_callback",
            "CreateMessageHandler",
            "samplingHandler"
        ],
        "handles sampling requests"
    ),
    key!(
        Roots,
        false,
        Value::Present,
        [
            "list_roots_callback",
            "RootsListChangedHandler",
            "listRootsHandler"
        ],
        "handles roots requests"
    ),
    key!(
        Logging,
        false,
        Value::Present,
        ["logging_callback", "LoggingMessageHandler"],
        "handles protocol log messages"
    ),
    key!(
        ElicitationId,
        true,
        Value::Present,
        ["elicitationId", "elicitation_id", "ElicitationID"],
        "is the elicitationId of URL elicitation"
    ),
    key!(
        SessionId,
        false,
        Value::Present,
        ["sessionIdGenerator"],
        "turns on Mcp-Session-Id sessions"
    ),
    key!(
        SessionId,
        false,
        Value::Present,
        ["onsessioninitialized", "onsessionclosed"],
        "depends on Mcp-Session-Id sessions"
    ),
    key!(
        SessionId,
        false,
        Value::True,
        ["stateful_mode"],
        "turns on Mcp-Session-Id sessions"
    ),
    key!(
        SessionId,
        false,
        Value::False,
        ["stateless_http"],
        "keeps Mcp-Session-Id sessions on"
    ),
    key!(
        Dcr,
        false,
        Value::Present,
        [
            "registration_endpoint",
            "registrationEndpoint",
            "RegistrationEndpoint",
            "client_registration_options",
            "clientRegistrationOptions"
        ],
        "advertises or uses the dynamic client registration endpoint"
    ),
    key!(
        HttpSseTransport,
        false,
        Value::Str("sse"),
        ["transport"],
        "selects the HTTP+SSE transport"
    ),
    key!(
        HttpSseTransport,
        false,
        Value::Present,
        ["sse_path", "message_path"],
        "configures the HTTP+SSE transport's endpoints"
    ),
];

/// Capabilities that a `capabilities` object (or a `...Capabilities` constructor) turns on.
pub(crate) static CAPABILITIES: &[(&str, RuleId)] = &[
    ("sampling", RuleId::Sampling),
    ("Sampling", RuleId::Sampling),
    ("roots", RuleId::Roots),
    ("Roots", RuleId::Roots),
    ("logging", RuleId::Logging),
    ("Logging", RuleId::Logging),
];

/// Members read off a transport, handler `extra` or FastMCP `Context`.
pub(crate) static MEMBERS: &[(&[&str], Recv, RuleId, &str)] = &[
    (
        &["sessionId", "session_id", "SessionID", "mcpSessionId"],
        Recv::Transport,
        RuleId::SessionId,
        "reads the Mcp-Session-Id",
    ),
    (
        &["elicitationId", "elicitation_id", "ElicitationID"],
        Recv::Method,
        RuleId::ElicitationId,
        "reads the elicitationId of URL elicitation",
    ),
];

/// Protocol strings, matched against a literal's whole value.
pub(crate) enum StrRole {
    /// Fires anywhere.
    Anywhere,
    /// Fires where a JSON-RPC method goes: the value of a `method` key, the first argument
    /// of a request-sending call, a comparison with or a `case` on a `method` expression.
    Method,
    /// Fires where an HTTP route goes: the first argument of a routing call (`app.get`,
    /// `Route`, `HandleFunc`, ...) or the value of a `path` key.
    Route,
    /// A route, in a file that also routes `/sse`.
    RouteBesideSse,
    /// A method sent as a request (`request`, `send_request`, ...), not one listed in an
    /// `inputRequests` map.
    SentRequest,
}

/// Protocol strings and where they fire.
pub(crate) static STRINGS: &[(&str, StrRole, RuleId, bool, &str)] = &[
    // (value, role, rule, needs an MCP import, what)
    (
        "sampling/createMessage",
        StrRole::Anywhere,
        RuleId::Sampling,
        false,
        "is the sampling request",
    ),
    (
        "roots/list",
        StrRole::Anywhere,
        RuleId::Roots,
        false,
        "is the roots request",
    ),
    (
        "notifications/roots/list_changed",
        StrRole::Anywhere,
        RuleId::Roots,
        false,
        "is a roots notification, which 2026-07-28 removes",
    ),
    (
        "logging/setLevel",
        StrRole::Anywhere,
        RuleId::Logging,
        false,
        "is removed in 2026-07-28 (the level now travels in each request's _meta, io.modelcontextprotocol/logLevel)",
    ),
    (
        "notifications/message",
        StrRole::Anywhere,
        RuleId::Logging,
        false,
        "is the protocol log notification",
    ),
    (
        "ping",
        StrRole::Method,
        RuleId::Ping,
        false,
        "is the ping method",
    ),
    (
        "notifications/elicitation/complete",
        StrRole::Anywhere,
        RuleId::ElicitationId,
        false,
        "is removed in 2026-07-28",
    ),
    (
        "elicitationId",
        StrRole::Anywhere,
        RuleId::ElicitationId,
        false,
        "is the elicitationId of URL elicitation",
    ),
    (
        "mcp-session-id",
        StrRole::Anywhere,
        RuleId::SessionId,
        false,
        "is the session header",
    ),
    (
        "registration_endpoint",
        StrRole::Anywhere,
        RuleId::Dcr,
        true,
        "is the dynamic client registration endpoint",
    ),
    (
        "/register",
        StrRole::Anywhere,
        RuleId::Dcr,
        true,
        "is the dynamic client registration endpoint",
    ),
    (
        "/sse",
        StrRole::Route,
        RuleId::HttpSseTransport,
        false,
        "is the HTTP+SSE transport's event-stream endpoint",
    ),
    (
        "/messages",
        StrRole::RouteBesideSse,
        RuleId::HttpSseTransport,
        false,
        "is the HTTP+SSE transport's message endpoint",
    ),
    (
        "/messages/",
        StrRole::RouteBesideSse,
        RuleId::HttpSseTransport,
        false,
        "is the HTTP+SSE transport's message endpoint",
    ),
    (
        "/message",
        StrRole::RouteBesideSse,
        RuleId::HttpSseTransport,
        false,
        "is the HTTP+SSE transport's message endpoint",
    ),
    (
        "elicitation/create",
        StrRole::SentRequest,
        RuleId::ServerRequestOutsideMrtr,
        false,
        "is sent as a server-to-client request",
    ),
];

/// Calls that send a JSON-RPC request by method name.
pub(crate) static REQUEST_SENDERS: &[&str] = &[
    "request",
    "send_request",
    "sendRequest",
    "SendRequest",
    "send_request_raw",
    "call",
    "notify",
    "send_notification",
    "sendNotification",
];

/// Calls that register an HTTP route.
pub(crate) static ROUTERS: &[&str] = &[
    "get",
    "post",
    "all",
    "use",
    "route",
    "Route",
    "Mount",
    "mount",
    "handle",
    "Handle",
    "HandleFunc",
    "add_route",
    "add_api_route",
    "api_route",
    "nest",
    "nest_service",
    "route_service",
    "GET",
    "POST",
];

/// Keys whose string value is a route.
pub(crate) static ROUTE_KEYS: &[&str] = &["path", "sse_path", "endpoint", "route"];

/// Handler methods that serve a deprecated feature, when defined in an implementation of
/// an rmcp handler trait (`impl ServerHandler for ...`, `impl ClientHandler for ...`).
pub(crate) static HANDLER_METHODS: &[(&str, RuleId, &str)] = &[
    (
        "create_message",
        RuleId::Sampling,
        "answers sampling requests",
    ),
    ("list_roots", RuleId::Roots, "answers roots requests"),
    (
        "on_roots_list_changed",
        RuleId::Roots,
        "handles roots notifications",
    ),
    (
        "set_level",
        RuleId::Logging,
        "handles logging/setLevel, which 2026-07-28 removes",
    ),
    (
        "on_logging_message",
        RuleId::Logging,
        "handles protocol log messages",
    ),
    ("ping", RuleId::Ping, "answers ping requests"),
];

/// Functions and methods whose definition implements a deprecated feature (in a file that
/// imports an MCP library).
pub(crate) static DEFINITIONS: &[(&str, RuleId, &str)] = &[
    (
        "register_client",
        RuleId::Dcr,
        "implements dynamic client registration",
    ),
    (
        "registerClient",
        RuleId::Dcr,
        "implements dynamic client registration",
    ),
];

/// Calls that print or log: strings passed straight to them are messages, not protocol.
pub(crate) fn is_output_call(fam: Family, receiver: Option<&str>, name: &str) -> bool {
    match fam {
        Family::Python => {
            name == "print"
                || receiver.is_some_and(|r| {
                    r == "logging" || r.ends_with("logger") || r.ends_with("log") || r == "warnings"
                })
        }
        Family::Js => {
            receiver == Some("console") || receiver.is_some_and(|r| r.ends_with("logger"))
        }
        Family::Go => {
            matches!(receiver, Some("fmt" | "log" | "slog" | "errors"))
                || receiver.is_some_and(|r| r.ends_with("logger") || r.ends_with("Logger"))
        }
        Family::Rust => false,
    }
}

/// Rust macros whose string arguments are messages.
pub(crate) fn is_output_macro(name: &str) -> bool {
    matches!(
        name,
        "println"
            | "eprintln"
            | "print"
            | "eprint"
            | "format"
            | "format_args"
            | "write"
            | "writeln"
            | "panic"
            | "unreachable"
            | "todo"
            | "unimplemented"
            | "assert"
            | "assert_eq"
            | "assert_ne"
            | "debug_assert"
            | "debug_assert_eq"
            | "debug_assert_ne"
            | "trace"
            | "debug"
            | "info"
            | "warn"
            | "error"
            | "event"
            | "span"
            | "info_span"
            | "debug_span"
            | "trace_span"
            | "warn_span"
            | "error_span"
            | "log"
            | "anyhow"
            | "bail"
            | "ensure"
            | "concat"
            | "stringify"
            | "compile_error"
    )
}
