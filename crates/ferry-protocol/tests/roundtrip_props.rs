//! Property tests: every JSON-RPC message survives a round trip (serialise, then parse,
//! gives the message back), and the server's one-pass reader sees a request's id and
//! method as they were sent.

use ferry_protocol::ErrorObject;
use ferry_protocol::jsonrpc::{
    JsonRpcErrorResponse, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest,
    JsonRpcResultResponse, LenientMessage, RequestId,
};
use ferry_protocol::request::{self, Incoming};
use proptest::prelude::*;
use serde_json::{Map, Value};

/// Any JSON value a peer could send (finite numbers only: JSON has no others).
fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(any::<String>(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn object() -> impl Strategy<Value = Value> {
    prop::collection::btree_map(any::<String>(), json(), 0..6)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

fn id() -> impl Strategy<Value = RequestId> {
    prop_oneof![
        any::<i64>().prop_map(RequestId::Number),
        any::<String>().prop_map(RequestId::String),
    ]
}

fn message() -> impl Strategy<Value = JsonRpcMessage> {
    prop_oneof![
        (id(), any::<String>(), prop::option::of(object())).prop_map(|(id, method, params)| {
            let mut r = JsonRpcRequest::new(id, method, Value::Null);
            r.params = params;
            JsonRpcMessage::Request(r)
        }),
        (any::<String>(), prop::option::of(object())).prop_map(|(method, params)| {
            let mut n = JsonRpcNotification::new(method, Value::Null);
            n.params = params;
            JsonRpcMessage::Notification(n)
        }),
        (id(), object()).prop_map(|(id, result)| {
            JsonRpcMessage::Result(JsonRpcResultResponse::new(id, result))
        }),
        (
            prop::option::of(id()),
            any::<i64>(),
            any::<String>(),
            prop::option::of(json())
        )
            .prop_map(|(id, code, message, data)| {
                let mut e = ErrorObject::new(ferry_protocol::ErrorCode(code), message);
                e.data = data;
                JsonRpcMessage::Error(JsonRpcErrorResponse::new(id, e))
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn messages_parse_back_to_themselves(msg in message()) {
        let bytes = serde_json::to_vec(&msg).unwrap();
        let back: JsonRpcMessage = serde_json::from_slice(&bytes).unwrap();
        prop_assert_eq!(&back, &msg);
        if !matches!(&msg, JsonRpcMessage::Error(e) if e.id.is_none()) {
            prop_assert_eq!(JsonRpcMessage::parse_lenient(&bytes), Some(msg.clone()));
        }
        // The raw reader reads the same message, with a result kept as its text.
        let raw = match JsonRpcMessage::parse_lenient_raw(&bytes) {
            Some(LenientMessage::Result { id, result }) => {
                let result = serde_json::from_str(result.get()).unwrap();
                Some(JsonRpcMessage::Result(JsonRpcResultResponse::new(id, result)))
            }
            Some(LenientMessage::Other(m)) => Some(m),
            None => None,
        };
        prop_assert_eq!(raw, JsonRpcMessage::parse_lenient(&bytes));
    }

    #[test]
    fn the_server_reader_sees_id_and_method_as_sent(
        id in id(),
        method in "[a-z]{1,8}/[a-z]{1,8}x",
        params in prop::option::of(object()),
    ) {
        let mut r = JsonRpcRequest::new(id.clone(), method.clone(), Value::Null);
        r.params = params;
        let bytes = serde_json::to_vec(&r).unwrap();
        match request::decode(&bytes) {
            Ok(Incoming::Request(req)) => {
                prop_assert_eq!(req.id, id);
                prop_assert_eq!(req.method.as_str(), method.as_str());
            }
            other => prop_assert!(false, "{:?}", other),
        }
    }
}
