//! Changed, cut, forged and garbage `requestState` values.
//!
//! A state is read as runs of base64 or hex text between separators (`.`, `:`, `~` …),
//! so a change lands in the bytes the server decodes, not in padding bits it ignores:
//! each changed run is decoded, changed and encoded again the way it was encoded. A state
//! that is plain JSON is changed character by character, on letters and digits, so the
//! JSON stays well formed.

use base64::Engine;
use base64::engine::GeneralPurpose;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use rand::{Rng, RngCore};
use serde_json::{Map, Value, json};

#[derive(Clone, Copy)]
enum Codec {
    Hex { upper: bool },
    Base64(&'static GeneralPurpose),
}

impl Codec {
    fn encode(self, bytes: &[u8]) -> String {
        match self {
            Codec::Hex { upper } => bytes
                .iter()
                .map(|b| {
                    if upper {
                        format!("{b:02X}")
                    } else {
                        format!("{b:02x}")
                    }
                })
                .collect(),
            Codec::Base64(engine) => engine.encode(bytes),
        }
    }
}

struct Piece {
    text: String,
    decoded: Option<(Codec, Vec<u8>)>,
}

/// A state cut into pieces, some of them decoded.
struct Layout {
    pieces: Vec<Piece>,
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '_' | '-')
}

fn decode_run(run: &str) -> Option<(Codec, Vec<u8>)> {
    if run.len() >= 2 && run.len().is_multiple_of(2) && run.chars().all(|c| c.is_ascii_hexdigit()) {
        let upper = run.chars().any(|c| c.is_ascii_uppercase());
        let lower = run.chars().any(|c| c.is_ascii_lowercase());
        if !(upper && lower) {
            let bytes = (0..run.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&run[i..i + 2], 16))
                .collect::<Result<Vec<u8>, _>>()
                .ok()?;
            return Some((Codec::Hex { upper }, bytes));
        }
    }
    if run.len() < 4 {
        return None;
    }
    for engine in [&URL_SAFE_NO_PAD, &URL_SAFE, &STANDARD, &STANDARD_NO_PAD] {
        if let Ok(bytes) = engine.decode(run)
            && engine.encode(&bytes) == run
            && !bytes.is_empty()
        {
            return Some((Codec::Base64(engine), bytes));
        }
    }
    None
}

impl Layout {
    fn new(state: &str) -> Layout {
        let json_like = serde_json::from_str::<Value>(state)
            .map(|v| v.is_object() || v.is_array())
            .unwrap_or(false);
        if json_like {
            return Layout {
                pieces: vec![Piece {
                    text: state.to_owned(),
                    decoded: None,
                }],
            };
        }
        let mut pieces = Vec::new();
        let mut current = String::new();
        let mut in_token = None;
        for c in state.chars() {
            let t = is_token_char(c);
            if in_token.is_some_and(|was| was != t) {
                pieces.push(std::mem::take(&mut current));
            }
            in_token = Some(t);
            current.push(c);
        }
        if !current.is_empty() {
            pieces.push(current);
        }
        Layout {
            pieces: pieces
                .into_iter()
                .map(|text| {
                    let decoded = if text.chars().all(is_token_char) {
                        decode_run(&text)
                    } else {
                        None
                    };
                    Piece { text, decoded }
                })
                .collect(),
        }
    }

    fn has_decoded(&self) -> bool {
        self.pieces.iter().any(|p| p.decoded.is_some())
    }

    /// Every place a byte can be changed: `(piece, index)`, in decoded bytes when any
    /// piece decodes, else in the text's ASCII characters.
    fn cells(&self) -> Vec<(usize, usize)> {
        let decoded = self.has_decoded();
        let mut cells = Vec::new();
        for (i, p) in self.pieces.iter().enumerate() {
            match &p.decoded {
                Some((_, bytes)) => cells.extend((0..bytes.len()).map(|j| (i, j))),
                None if !decoded => cells.extend(
                    p.text
                        .char_indices()
                        .filter(|(_, c)| c.is_ascii())
                        .map(|(j, _)| (i, j)),
                ),
                None => {}
            }
        }
        cells
    }

    /// Changes one cell, encoding its piece again.
    fn changed(&self, piece: usize, index: usize, f: impl Fn(u8) -> u8) -> String {
        let mut out = String::new();
        for (i, p) in self.pieces.iter().enumerate() {
            if i != piece {
                out.push_str(&p.text);
                continue;
            }
            match &p.decoded {
                Some((codec, bytes)) => {
                    let mut b = bytes.clone();
                    b[index] = f(b[index]);
                    out.push_str(&codec.encode(&b));
                }
                None => {
                    let mut b = p.text.as_bytes().to_vec();
                    b[index] = f(b[index]);
                    out.push_str(&String::from_utf8_lossy(&b));
                }
            }
        }
        out
    }
}

/// A different byte of the same kind: a letter or digit becomes the next of its class
/// (so text stays text), anything else has its lowest bit flipped.
fn flip(b: u8) -> u8 {
    match b {
        b'0'..=b'8' | b'a'..=b'y' | b'A'..=b'Y' => b + 1,
        b'9' => b'0',
        b'z' => b'a',
        b'Z' => b'A',
        other => other ^ 0x01,
    }
}

/// The state with one byte changed at the start, a quarter, the middle, three quarters
/// and the end: `(where, changed state)`.
pub(crate) fn bitflips(state: &str) -> Vec<(String, String)> {
    let layout = Layout::new(state);
    let cells = layout.cells();
    if cells.is_empty() {
        return Vec::new();
    }
    let n = cells.len();
    let decoded = layout.has_decoded();
    let mut picks: Vec<usize> = vec![0, n / 4, n / 2, (3 * n) / 4, n - 1];
    if !decoded {
        // In plain text, move each pick to the next letter or digit: a flipped quote or
        // brace only tests the parser.
        for p in &mut picks {
            let start = *p;
            if let Some(k) = (start..n).chain(0..start).find(|&k| {
                let (pi, j) = cells[k];
                layout.pieces[pi].text.as_bytes()[j].is_ascii_alphanumeric()
            }) {
                *p = k;
            }
        }
    }
    picks.dedup();
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for k in picks {
        if !seen.insert(k) {
            continue;
        }
        let (piece, index) = cells[k];
        let changed = layout.changed(piece, index, flip);
        if changed != state {
            let unit = if decoded { "decoded byte" } else { "character" };
            out.push((format!("{unit} {} of {n}", k + 1), changed));
        }
    }
    out
}

/// The state cut short: `(how, cut state)`.
pub(crate) fn truncations(state: &str) -> Vec<(String, String)> {
    let chars: Vec<char> = state.chars().collect();
    let mut out = Vec::new();
    if chars.len() >= 2 {
        out.push((
            "the last character removed".to_owned(),
            chars[..chars.len() - 1].iter().collect(),
        ));
        out.push((
            "the second half removed".to_owned(),
            chars[..chars.len() / 2].iter().collect(),
        ));
    }
    let layout = Layout::new(state);
    if let Some(last) = layout
        .pieces
        .iter()
        .rposition(|p| p.decoded.as_ref().is_some_and(|(_, b)| b.len() > 1))
    {
        let mut text = String::new();
        for (i, p) in layout.pieces.iter().enumerate() {
            match (&p.decoded, i == last) {
                (Some((codec, bytes)), true) => {
                    text.push_str(&codec.encode(&bytes[..bytes.len() - 1]))
                }
                _ => text.push_str(&p.text),
            }
        }
        if text != state {
            out.push(("the last decoded byte removed".to_owned(), text));
        }
    }
    out
}

/// A state of the same shape with random content.
pub(crate) fn random_like(state: &str) -> String {
    let layout = Layout::new(state);
    let mut rng = rand::rng();
    if layout.has_decoded() {
        let mut out = String::new();
        for p in &layout.pieces {
            match &p.decoded {
                Some((codec, bytes)) => {
                    let mut r = vec![0u8; bytes.len()];
                    rng.fill_bytes(&mut r);
                    out.push_str(&codec.encode(&r));
                }
                None => out.push_str(&p.text),
            }
        }
        if out != state {
            return out;
        }
    }
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    (0..state.chars().count().max(16))
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Edits of a JSON object: a field added; the expiry moved ten years ahead.
fn edits(obj: &Map<String, Value>) -> Vec<(String, Map<String, Value>)> {
    let mut out = Vec::new();
    let mut added = obj.clone();
    added.insert("ferryAudit".into(), json!("forged"));
    out.push(("a field added to the JSON inside".to_owned(), added));
    let later = |v: &Value| -> Option<Value> {
        let n = v.as_u64()?;
        let ten_years = 10 * 365 * 24 * 3600;
        Some(if n > 100_000_000_000 {
            json!((now_secs() + ten_years) * 1000)
        } else {
            json!(now_secs() + ten_years)
        })
    };
    let is_expiry = |k: &str| {
        let k = k.to_ascii_lowercase();
        k == "exp" || k.starts_with("expir") || k.starts_with("expires") || k == "deadline"
    };
    let mut moved = obj.clone();
    let mut changed = false;
    for (k, v) in moved.iter_mut() {
        if is_expiry(k) {
            if let Some(n) = later(v) {
                *v = n;
                changed = true;
            }
        } else if let Value::Object(inner) = v {
            for (k2, v2) in inner.iter_mut() {
                if is_expiry(k2)
                    && let Some(n) = later(v2)
                {
                    *v2 = n;
                    changed = true;
                }
            }
        }
    }
    if changed {
        out.push(("the expiry moved ten years ahead".to_owned(), moved));
    }
    out
}

/// Forged states, when the state is (or carries) readable JSON: `(how, forged state)`.
/// Empty when there is no JSON to edit.
pub(crate) fn forgeries(state: &str) -> Vec<(String, String)> {
    if let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(state) {
        return edits(&obj)
            .into_iter()
            .map(|(how, o)| (how, Value::Object(o).to_string()))
            .collect();
    }
    let layout = Layout::new(state);
    let mut out = Vec::new();
    for (i, p) in layout.pieces.iter().enumerate() {
        let Some((codec, bytes)) = &p.decoded else {
            continue;
        };
        let Ok(Value::Object(obj)) = serde_json::from_slice::<Value>(bytes) else {
            continue;
        };
        for (how, edited) in edits(&obj) {
            let encoded = codec.encode(Value::Object(edited).to_string().as_bytes());
            let text: String = layout
                .pieces
                .iter()
                .enumerate()
                .map(|(j, q)| {
                    if j == i {
                        encoded.as_str()
                    } else {
                        q.text.as_str()
                    }
                })
                .collect();
            out.push((format!("{how} (encoded piece {})", i + 1), text));
        }
    }
    out
}

/// Values no server issued, some of them not even strings: `(what, value)`.
pub(crate) fn garbage() -> Vec<(&'static str, Value)> {
    let mut random = [0u8; 48];
    rand::rng().fill_bytes(&mut random);
    vec![
        ("an empty string", json!("")),
        ("one character", json!("A")),
        ("the text null", json!("null")),
        ("64 KiB of the letter A", json!("A".repeat(64 * 1024))),
        (
            "48 random bytes in base64url",
            json!(URL_SAFE_NO_PAD.encode(random)),
        ),
        (
            "a JSON object as text",
            json!(r#"{"admin":true,"approved":true}"#),
        ),
        (
            "a JSON object in base64",
            json!(STANDARD.encode(br#"{"admin":true,"approved":true}"#)),
        ),
        (
            "control characters and non-ASCII text",
            json!("\u{0}\u{1b}[31m\u{2603}"),
        ),
        ("a number instead of a string", json!(42)),
        ("an object instead of a string", json!({"admin": true})),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEALED: &str = "AQhlMDZhMWI2YxgU5wMzlpaavJOSDjfZZb3Ao2WZNKT0sEX62LbwcyOSB3GsteJJvZtY-BaWI3b80OLwgKimcL2f1JZYe7wUnYR2r_WU0ol3cyfKmyzNgAdUnVQV3qprqwlqm5KRVgFSw__t6Ah29AEaDp_T-89v4Ggfykoaz8T9GoCqJr5_0_y5fVXGef7XDC1Pte09oop21nVDsGtf63UhaGhncIo5JvUCQP-AyC3hTd74E6Sj1NAjAGPHCw7gV6IiciUa9uryMUevf_hh3eHjsHqxVxgba8AzhTFEhi7LhRg";

    #[test]
    fn flips_change_the_decoded_bytes() {
        let flips = bitflips(SEALED);
        assert_eq!(flips.len(), 5);
        let original = URL_SAFE_NO_PAD.decode(SEALED).unwrap();
        for (where_, s) in &flips {
            let b = URL_SAFE_NO_PAD.decode(s).unwrap();
            assert_eq!(b.len(), original.len());
            let diff = b.iter().zip(&original).filter(|(x, y)| x != y).count();
            assert_eq!(diff, 1, "{where_}");
        }
        assert_eq!(flips[0].0, format!("decoded byte 1 of {}", original.len()));
    }

    #[test]
    fn flips_in_plain_json_keep_it_json() {
        let state = r#"{"tool":"delete","exp":1767225600,"args":{"path":"/tmp/x"}}"#;
        for (_, s) in bitflips(state) {
            assert_ne!(s, state);
            let _: Value = serde_json::from_str(&s).expect("still JSON");
        }
    }

    #[test]
    fn dotted_tokens_are_changed_piece_by_piece() {
        let payload = URL_SAFE_NO_PAD.encode(br#"{"args":{"path":"/tmp/x"},"exp":1767225600}"#);
        let state = format!("{payload}.c2lnbmF0dXJl");
        let forged = forgeries(&state);
        assert_eq!(forged.len(), 2);
        for (_, f) in &forged {
            let (p, sig) = f.split_once('.').unwrap();
            assert_eq!(sig, "c2lnbmF0dXJl");
            let v: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(p).unwrap()).unwrap();
            assert!(v.get("ferryAudit").is_some() || v["exp"].as_u64().unwrap() > 1767225600);
        }
        assert!(forgeries(SEALED).is_empty());
    }

    #[test]
    fn hex_stays_hex() {
        let state = "00ff10ab";
        for (_, s) in bitflips(state).into_iter().chain(truncations(state)) {
            assert!(s.chars().all(|c| c.is_ascii_hexdigit()), "{s}");
        }
        assert!(random_like(state).chars().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn truncations_and_random_differ() {
        let t = truncations(SEALED);
        assert_eq!(t.len(), 3);
        assert!(t.iter().all(|(_, s)| s.len() < SEALED.len()));
        let r = random_like(SEALED);
        assert_eq!(r.len(), SEALED.len());
        assert_ne!(r, SEALED);
        assert!(garbage().len() >= 8);
    }
}
