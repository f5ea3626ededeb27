//! Looking for a known value inside a `requestState`: as it is, or under base64, base64url
//! or hex, at any alignment, two layers deep.

use base64::Engine;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

const LENIENT: GeneralPurposeConfig = GeneralPurposeConfig::new()
    .with_decode_padding_mode(DecodePaddingMode::Indifferent)
    .with_decode_allow_trailing_bits(true);
const STD: GeneralPurpose = GeneralPurpose::new(&alphabet::STANDARD, LENIENT);
const URL: GeneralPurpose = GeneralPurpose::new(&alphabet::URL_SAFE, LENIENT);

/// The most decoded candidates looked at.
const MAX_CANDIDATES: usize = 512;

/// Runs of base64 (either alphabet) or hex text, at least `min` long.
fn runs(text: &[u8], min: usize) -> Vec<&[u8]> {
    let ok = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'_' | b'-' | b'=');
    text.split(|b| !ok(*b)).filter(|r| r.len() >= min).collect()
}

fn decodings(run: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let trimmed: &[u8] = {
        let mut end = run.len();
        while end > 0 && run[end - 1] == b'=' {
            end -= 1;
        }
        &run[..end]
    };
    for offset in 0..4.min(trimmed.len()) {
        let mut part = &trimmed[offset..];
        if part.len() % 4 == 1 {
            part = &part[..part.len() - 1];
        }
        for (name, engine) in [("base64url", &URL), ("base64", &STD)] {
            if let Ok(bytes) = engine.decode(part)
                && !bytes.is_empty()
            {
                let at = if offset == 0 {
                    String::new()
                } else {
                    format!(" from character {}", offset + 1)
                };
                out.push((format!("{name}{at}"), bytes));
            }
        }
    }
    if trimmed.len() >= 2 && trimmed.iter().all(u8::is_ascii_hexdigit) {
        for offset in 0..2.min(trimmed.len()) {
            let part = &trimmed[offset..];
            let bytes: Option<Vec<u8>> = part
                .chunks_exact(2)
                .map(|p| {
                    std::str::from_utf8(p)
                        .ok()
                        .and_then(|s| u8::from_str_radix(s, 16).ok())
                })
                .collect();
            if let Some(b) = bytes.filter(|b| !b.is_empty()) {
                out.push(("hex".to_owned(), b));
            }
        }
    }
    out
}

/// Where `needle` can be read in `state`, e.g. "base64url of the text", or `None`.
pub(crate) fn find(state: &str, needle: &[u8]) -> Option<String> {
    if needle.is_empty() {
        return None;
    }
    let contains = |hay: &[u8]| hay.windows(needle.len()).any(|w| w == needle);
    if contains(state.as_bytes()) {
        return Some("in plain text".to_owned());
    }
    let mut layer: Vec<(String, Vec<u8>)> = vec![(String::new(), state.as_bytes().to_vec())];
    let mut looked = 0;
    for _depth in 0..2 {
        let mut next = Vec::new();
        for (path, bytes) in &layer {
            for run in runs(bytes, 8) {
                for (how, decoded) in decodings(run) {
                    looked += 1;
                    if looked > MAX_CANDIDATES {
                        return None;
                    }
                    let path = if path.is_empty() {
                        how
                    } else {
                        format!("{how} inside {path}")
                    };
                    if contains(&decoded) {
                        return Some(format!("after {path} decoding"));
                    }
                    next.push((path, decoded));
                }
            }
        }
        layer = next;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};

    const M: &[u8] = b"ferryaudit1234abcd";

    #[test]
    fn plain_and_encoded_values_are_found() {
        let json = r#"{"args":{"path":"/tmp/x-ferryaudit1234abcd"}}"#;
        assert_eq!(find(json, M).as_deref(), Some("in plain text"));
        let b64 = URL_SAFE_NO_PAD.encode(json);
        assert!(
            find(&format!("{b64}.c2ln"), M)
                .unwrap()
                .contains("base64url")
        );
        // Glued to a prefix, so the payload starts mid-run.
        let glued = format!("v1{}", STANDARD.encode(json));
        assert!(find(&glued, M).is_some());
        let hex: String = json.bytes().map(|b| format!("{b:02x}")).collect();
        assert!(find(&hex, M).is_some());
        // Two layers: base64 of JSON holding base64.
        let inner = STANDARD.encode(json);
        let outer = URL_SAFE_NO_PAD.encode(format!("{{\"s\":\"{inner}\"}}"));
        assert!(find(&outer, M).is_some());
    }

    #[test]
    fn sealed_bytes_reveal_nothing() {
        let mut noise = vec![0u8; 300];
        rand::RngCore::fill_bytes(&mut rand::rng(), &mut noise);
        assert_eq!(find(&URL_SAFE_NO_PAD.encode(noise), M), None);
        assert_eq!(find("", M), None);
    }
}
