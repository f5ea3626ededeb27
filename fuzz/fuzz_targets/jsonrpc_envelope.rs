//! The JSON-RPC envelope (`ferry_protocol::jsonrpc`): the strict and lenient readers of
//! `JsonRpcMessage` and the zero-copy `Envelope`.
//!
//! Checks: a message the strict reader accepts re-serialises and re-parses to the same
//! value, and the lenient reader reads it the same way; whatever the envelope classifies
//! as a request or notification, the strict reader reads as one, with the same id and
//! method, and its params are an object.
//!
//! The envelope reads only the members it needs and keeps params raw, so valid JSON that a
//! `serde_json::Value` cannot hold (a number beyond `f64`, a lone surrogate escape) in a
//! member it skips, or inside params, is the envelope's to accept: the strict reader, which
//! reads the whole document, refuses it, and typed params decoding refuses it later as
//! invalid params. The cross-checks apply to every document a `Value` can hold; on the rest
//! the envelope must only classify without panicking.
#![no_main]

use ferry_protocol::jsonrpc::{Envelope, Incoming, JsonRpcMessage};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let strict = serde_json::from_slice::<JsonRpcMessage>(data).ok();
    let lenient = JsonRpcMessage::parse_lenient(data);
    if let Some(message) = &strict {
        let bytes = serde_json::to_vec(message).expect("a message serialises");
        let again: JsonRpcMessage =
            serde_json::from_slice(&bytes).expect("a re-serialised message re-parses");
        assert_eq!(
            &again,
            message,
            "round trip through {}",
            String::from_utf8_lossy(&bytes)
        );
        assert_eq!(
            lenient.as_ref(),
            Some(message),
            "lenient and strict readers differ"
        );
    }

    let Ok(envelope) = Envelope::parse(data) else {
        return;
    };
    if serde_json::from_slice::<serde_json::Value>(data).is_err() {
        let _ = envelope.classify();
        return;
    }
    match envelope.classify() {
        Ok(Incoming::Request { id, method, params }) => {
            if let Some(p) = params {
                let value: serde_json::Value =
                    serde_json::from_str(p.get()).expect("raw params are JSON");
                assert!(value.is_object(), "request params must be an object");
            }
            match strict {
                Some(JsonRpcMessage::Request(r)) => {
                    assert_eq!(r.id, id);
                    assert_eq!(r.method, method);
                }
                other => panic!("envelope read a request, the strict reader {other:?}"),
            }
        }
        Ok(Incoming::Notification { method, params }) => {
            if let Some(p) = params {
                let value: serde_json::Value =
                    serde_json::from_str(p.get()).expect("raw params are JSON");
                assert!(value.is_object(), "notification params must be an object");
            }
            match strict {
                Some(JsonRpcMessage::Notification(n)) => assert_eq!(n.method, method),
                other => panic!("envelope read a notification, the strict reader {other:?}"),
            }
        }
        Ok(Incoming::Response { .. }) | Err(_) => {}
    }
});
