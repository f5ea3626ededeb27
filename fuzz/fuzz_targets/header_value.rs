//! `Mcp-Name` and `Mcp-Param-*` header values (ferry-protocol `headers`): the
//! `=?base64?…?=` sentinel encoding that servers decode before comparing with the body.
//!
//! Checks: a value that decodes encodes again to a header-safe value that decodes to the
//! same text, and matches itself as a string parameter; a value that does not decode has
//! bytes outside the header-safe set or a bad sentinel; any text (the input as UTF-8)
//! encodes to a valid HTTP field value that decodes back to exactly that text.
#![no_main]

use ferry_protocol::headers::{
    HeaderValueError, ParamHeader, ParamKind, decode_value, encode_value, is_plain_safe,
};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn header_safe(b: u8) -> bool {
    (0x21..=0x7e).contains(&b) || b == b' ' || b == b'\t'
}

fn check_encoded(text: &str) {
    let encoded = encode_value(text);
    assert!(
        encoded.bytes().all(header_safe),
        "{encoded:?} is not header-safe"
    );
    let http_value = http::HeaderValue::from_str(&encoded).expect("a valid field value");
    assert_eq!(http_value.as_bytes(), encoded.as_bytes());
    // HTTP drops a value's leading and trailing whitespace: an encoded value has none.
    assert_eq!(encoded.trim_matches([' ', '\t']), encoded);
    assert_eq!(
        decode_value(encoded.as_bytes()).as_deref(),
        Ok(text),
        "via {encoded:?}"
    );
    if is_plain_safe(text) {
        assert_eq!(encoded, text, "a plain-safe value is sent as-is");
    }
}

fuzz_target!(|data: &[u8]| {
    match decode_value(data) {
        Ok(decoded) => {
            assert!(data.iter().copied().all(header_safe));
            check_encoded(&decoded);
            let param = ParamHeader {
                name: "Value".into(),
                header: "mcp-param-value".into(),
                path: vec!["value".into()],
                kind: ParamKind::String,
            };
            assert!(param.matches(&decoded, &Value::String(decoded.to_string())));
            if let Ok(n) = decoded.parse::<i64>()
                && n.unsigned_abs() < (1 << 53)
            {
                let integer = ParamHeader {
                    kind: ParamKind::Integer,
                    ..param
                };
                assert!(
                    integer.matches(&decoded, &Value::from(n)),
                    "{decoded} vs {n}"
                );
            }
        }
        Err(HeaderValueError::InvalidCharacters) => {
            assert!(!data.iter().copied().all(header_safe));
        }
        Err(HeaderValueError::InvalidBase64) => {
            assert!(data.starts_with(b"=?base64?") && data.ends_with(b"?="));
        }
    }
    if let Ok(text) = std::str::from_utf8(data) {
        check_encoded(text);
    }
});
