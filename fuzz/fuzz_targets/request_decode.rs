//! The one-pass request parser (`ferry_protocol::request::decode`), the first thing a
//! server runs on every message body.
//!
//! Checks: its verdict agrees with the careful two-step reading (`Envelope::parse`, then
//! `classify`): a request has the same id and method, and params that are an object; a
//! notification the same method; a response the same id; a message refused for its params
//! is a request to the envelope, and one refused as not JSON is not JSON to it either.
#![no_main]

use ferry_protocol::jsonrpc::{self, Envelope};
use ferry_protocol::request::{self, Incoming, Problem};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let fast = request::decode(data);
    let careful = Envelope::parse(data).map(Envelope::classify);
    match fast {
        Ok(Incoming::Request(req)) => match careful {
            Ok(Ok(jsonrpc::Incoming::Request { id, method, params })) => {
                assert_eq!(req.id, id);
                assert_eq!(req.method.as_str(), method);
                if let Some(p) = params {
                    assert!(
                        p.get().starts_with('{'),
                        "params {} taken for a request",
                        p.get()
                    );
                }
            }
            other => panic!("decode read a request, the envelope {other:?}"),
        },
        Ok(Incoming::Notification { method, .. }) => match careful {
            Ok(Ok(jsonrpc::Incoming::Notification { method: m, .. })) => assert_eq!(method, m),
            // A notification's params are not read by decode: the envelope refuses any
            // that are not an object, decode leaves them to the handler.
            Ok(Err(_)) => {}
            other => panic!("decode read a notification, the envelope {other:?}"),
        },
        Ok(Incoming::Response { id, .. }) => match careful {
            Ok(Ok(jsonrpc::Incoming::Response { id: i, .. })) => assert_eq!(id, i),
            other => panic!("decode read a response, the envelope {other:?}"),
        },
        Err(refused) => {
            assert_eq!(
                refused.error.code.0,
                match refused.problem {
                    Problem::Parse => -32700,
                    Problem::InvalidMessage => -32600,
                    Problem::InvalidParams => -32602,
                    _ => refused.error.code.0,
                }
            );
            match refused.problem {
                Problem::Parse => {
                    assert!(careful.is_err(), "decode: not JSON; envelope: {careful:?}")
                }
                Problem::InvalidParams => match careful {
                    Ok(Ok(jsonrpc::Incoming::Request { id, .. })) => {
                        assert_eq!(refused.id, Some(id));
                    }
                    other => {
                        panic!("decode refused params of a request the envelope read as {other:?}")
                    }
                },
                _ => assert!(
                    !matches!(careful, Ok(Ok(jsonrpc::Incoming::Request { .. }))),
                    "decode refused a message the envelope read as a request"
                ),
            }
        }
    }
});
