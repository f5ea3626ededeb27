//! Reading the access token from a request (RFC 6750 §2.1, RFC 9449 §7.1; authorization
//! spec, "Token Requirements"). Anything ambiguous is refused as malformed (400).

use http::HeaderMap;
use http::header::AUTHORIZATION;

/// The scheme the token was presented with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scheme {
    /// `Authorization: Bearer <token>`.
    Bearer,
    /// `Authorization: DPoP <token>` with a `DPoP` proof header.
    Dpop,
}

impl Scheme {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Scheme::Bearer => "Bearer",
            Scheme::Dpop => "DPoP",
        }
    }
}

/// What a request carries.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Credentials<'a> {
    /// No `Authorization` header.
    Absent,
    /// Credentials of a scheme this resource does not take (e.g. `Basic`): treated as no
    /// token at all (RFC 6750 §3.1).
    OtherScheme,
    /// An access token.
    Token { scheme: Scheme, token: &'a str },
}

/// Why the request's credentials are malformed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Malformed(pub(crate) &'static str);

/// Reads the credentials of a request with these `headers` and URI `query`.
pub(crate) fn read<'a>(
    headers: &'a HeaderMap,
    query: Option<&str>,
    max_token_bytes: usize,
) -> Result<Credentials<'a>, Malformed> {
    if let Some(q) = query
        && q.split('&')
            .any(|pair| pair.split('=').next() == Some("access_token"))
    {
        return Err(Malformed(
            "access tokens are not accepted in the query string",
        ));
    }
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Ok(Credentials::Absent);
    };
    if values.next().is_some() {
        return Err(Malformed("several Authorization headers"));
    }
    let value = trim_spaces(value.as_bytes());
    let (scheme, rest) = match value.iter().position(|b| *b == b' ') {
        Some(i) => (&value[..i], trim_spaces(&value[i + 1..])),
        None => (value, &[][..]),
    };
    let scheme = if scheme.eq_ignore_ascii_case(b"bearer") {
        Scheme::Bearer
    } else if scheme.eq_ignore_ascii_case(b"dpop") {
        Scheme::Dpop
    } else {
        if !value.iter().all(|b| (b' '..=b'~').contains(b)) {
            return Err(Malformed("the Authorization header is not visible ASCII"));
        }
        if value.contains(&b',') {
            return Err(Malformed("several credentials in the Authorization header"));
        }
        return Ok(Credentials::OtherScheme);
    };
    if rest.is_empty() {
        return Err(Malformed("empty access token"));
    }
    if rest.len() > max_token_bytes {
        return Err(Malformed("access token too long"));
    }
    // The token68 syntax is checked by `check_syntax` before a token is validated; a token
    // found in the cache of validated tokens passed it when it was first seen.
    let token = std::str::from_utf8(rest)
        .map_err(|_| Malformed("the Authorization header is not visible ASCII"))?;
    Ok(Credentials::Token { scheme, token })
}

/// Checks that a token read by [`read`] is one `token68`, which rules out a second scheme,
/// a comma-separated list, quotes and anything outside visible ASCII.
pub(crate) fn check_syntax(token: &str) -> Result<(), Malformed> {
    if is_token68(token.as_bytes()) {
        Ok(())
    } else {
        Err(Malformed(
            "the access token is not a token68 (one scheme and one token only)",
        ))
    }
}

fn trim_spaces(mut b: &[u8]) -> &[u8] {
    while let [b' ', rest @ ..] = b {
        b = rest;
    }
    while let [rest @ .., b' '] = b {
        b = rest;
    }
    b
}

/// The bytes of `token68` before its `=` padding.
const TOKEN68: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/');
        i += 1;
    }
    t
};

/// `token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="` (RFC 7235).
/// Branch-free over the body: tokens are long and almost always valid.
fn is_token68(s: &[u8]) -> bool {
    let padding = s.iter().rev().take_while(|b| **b == b'=').count();
    let body = &s[..s.len() - padding];
    !body.is_empty()
        && body
            .iter()
            .fold(true, |ok, b| ok & TOKEN68[usize::from(*b)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn with(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(
                AUTHORIZATION,
                HeaderValue::from_bytes(v.as_bytes()).unwrap(),
            );
        }
        h
    }

    #[test]
    fn well_formed() {
        let h = with(&["Bearer abc.def-ghi_~+/=="]);
        assert_eq!(
            read(&h, None, 100),
            Ok(Credentials::Token {
                scheme: Scheme::Bearer,
                token: "abc.def-ghi_~+/=="
            })
        );
        let h = with(&["bearer   tok"]);
        assert!(matches!(
            read(&h, None, 100),
            Ok(Credentials::Token { token: "tok", .. })
        ));
        let h = with(&["DPoP tok"]);
        assert!(matches!(
            read(&h, None, 100),
            Ok(Credentials::Token {
                scheme: Scheme::Dpop,
                ..
            })
        ));
        assert_eq!(
            read(&HeaderMap::new(), Some("a=b"), 100),
            Ok(Credentials::Absent)
        );
        assert_eq!(
            read(&with(&["Basic YWxpY2U6eA=="]), None, 100),
            Ok(Credentials::OtherScheme)
        );
    }

    #[test]
    fn malformed() {
        let cases: &[(&[&str], Option<&str>)] = &[
            (&["Bearer"], None),
            (&["Bearer "], None),
            (&["Bearer a b"], None),
            (&["Bearer abc, Basic xyz"], None),
            (&["Basic xyz, Bearer abc"], None),
            (&["Bearer DPoP abc"], None),
            (&["Bearer a\"b"], None),
            (&["Bearer a=b"], None),
            (&["Bearer ==="], None),
            (&["Bearer é"], None),
            (&["Bearer a", "Bearer b"], None),
            (&["Bearer a", "Basic b"], None),
            (&["Bearer aaaaaaaaaaaaaaaaaaaaaaaa"], None),
            (&[], Some("access_token=abc")),
            (&["Bearer a"], Some("x=1&access_token=abc")),
        ];
        for (values, query) in cases {
            let h = with(values);
            let verdict = read(&h, *query, 16).and_then(|c| match c {
                Credentials::Token { token, .. } => check_syntax(token),
                _ => Ok(()),
            });
            assert!(verdict.is_err(), "{values:?} {query:?}");
        }
    }
}
