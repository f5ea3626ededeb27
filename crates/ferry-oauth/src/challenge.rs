//! `WWW-Authenticate` challenges (RFC 9110 section 11.6.1; RFC 6750 section 3; RFC 9728
//! section 5.1; RFC 9449 section 7.1).

/// One challenge of a `WWW-Authenticate` header: a scheme and its parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Challenge {
    /// The auth scheme, e.g. `Bearer` or `DPoP` (compare it case-insensitively).
    pub scheme: String,
    /// The parameters, names lower-cased, values unquoted.
    pub params: Vec<(String, String)>,
}

impl Challenge {
    /// The value of parameter `name` (lower-case).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the scheme is `scheme`, ignoring case.
    pub fn is(&self, scheme: &str) -> bool {
        self.scheme.eq_ignore_ascii_case(scheme)
    }
}

/// What the server said when it refused a request, gathered from all its
/// `WWW-Authenticate` headers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuthChallenge {
    /// Every challenge, in order.
    pub challenges: Vec<Challenge>,
}

impl AuthChallenge {
    /// Parses the values of every `WWW-Authenticate` header. Unparseable parts are
    /// skipped.
    pub fn parse<'a>(headers: impl IntoIterator<Item = &'a str>) -> Self {
        let mut challenges = Vec::new();
        for value in headers {
            challenges.extend(parse_header(value));
        }
        AuthChallenge { challenges }
    }

    /// The first value of parameter `name` among the `Bearer` and `DPoP` challenges.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.challenges
            .iter()
            .filter(|c| c.is("bearer") || c.is("dpop"))
            .find_map(|c| c.param(name))
    }

    /// The `resource_metadata` URL (RFC 9728 section 5.1).
    pub fn resource_metadata(&self) -> Option<&str> {
        self.param("resource_metadata")
    }

    /// The `scope` parameter split on spaces (RFC 6750 section 3).
    pub fn scopes(&self) -> Option<Vec<String>> {
        self.param("scope")
            .map(|s| s.split_ascii_whitespace().map(str::to_owned).collect())
    }

    /// The `error` parameter, e.g. `invalid_token`, `insufficient_scope` or
    /// `use_dpop_nonce`.
    pub fn error(&self) -> Option<&str> {
        self.param("error")
    }
}

/// Splits one header value into challenges.
fn parse_header(value: &str) -> Vec<Challenge> {
    let mut out: Vec<Challenge> = Vec::new();
    let mut lexer = Lexer {
        s: value.as_bytes(),
        i: 0,
    };
    loop {
        lexer.skip_separators();
        let Some(word) = lexer.token() else {
            // Not a token where one should start: skip a byte and look again.
            if lexer.i >= lexer.s.len() {
                break;
            }
            lexer.i += 1;
            continue;
        };
        lexer.skip_spaces();
        if lexer.peek() == Some(b'=') && !out.is_empty() && !lexer.is_token68_tail() {
            // `name=value` belongs to the current challenge.
            lexer.i += 1;
            lexer.skip_spaces();
            let v = lexer.value().unwrap_or_default();
            if let Some(c) = out.last_mut() {
                c.params.push((word.to_ascii_lowercase(), v));
            }
            continue;
        }
        out.push(Challenge {
            scheme: word,
            params: Vec::new(),
        });
        // A token68 (e.g. `Basic abc==`) right after the scheme is ignored.
        let save = lexer.i;
        if lexer.token68_then_end() {
            continue;
        }
        lexer.i = save;
    }
    out
}

struct Lexer<'a> {
    s: &'a [u8],
    i: usize,
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

impl Lexer<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn skip_spaces(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    fn skip_separators(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b',')) {
            self.i += 1;
        }
    }

    fn token(&mut self) -> Option<String> {
        let start = self.i;
        while self.peek().is_some_and(is_tchar) {
            self.i += 1;
        }
        (self.i > start).then(|| String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    /// Whether the `=` at the cursor ends a token68 (`abc==` followed by `,` or the end)
    /// rather than starting a parameter value.
    fn is_token68_tail(&self) -> bool {
        let mut j = self.i;
        while self.s.get(j) == Some(&b'=') {
            j += 1;
        }
        let mut k = j;
        while matches!(self.s.get(k), Some(b' ' | b'\t')) {
            k += 1;
        }
        j > self.i + 1 && matches!(self.s.get(k), None | Some(b','))
    }

    /// Consumes a token68 that is followed by a comma or the end; false (cursor moved)
    /// otherwise.
    fn token68_then_end(&mut self) -> bool {
        self.skip_spaces();
        let start = self.i;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
        {
            self.i += 1;
        }
        if self.i == start {
            return false;
        }
        while self.peek() == Some(b'=') {
            self.i += 1;
        }
        self.skip_spaces();
        matches!(self.peek(), None | Some(b','))
    }

    fn value(&mut self) -> Option<String> {
        if self.peek() != Some(b'"') {
            // A token; leniently, anything up to the next separator.
            let start = self.i;
            while self
                .peek()
                .is_some_and(|b| !matches!(b, b',' | b' ' | b'\t'))
            {
                self.i += 1;
            }
            return Some(String::from_utf8_lossy(&self.s[start..self.i]).into_owned());
        }
        self.i += 1;
        let mut out = Vec::new();
        while let Some(b) = self.peek() {
            self.i += 1;
            match b {
                b'"' => return Some(String::from_utf8_lossy(&out).into_owned()),
                b'\\' => {
                    if let Some(n) = self.peek() {
                        out.push(n);
                        self.i += 1;
                    }
                }
                _ => out.push(b),
            }
        }
        Some(String::from_utf8_lossy(&out).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_with_quoted_params() {
        let c = AuthChallenge::parse([
            r#"Bearer error="invalid_token", error_description="Invalid Authorization header format, expected 'Bearer TOKEN'", scope="a b", resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp""#,
        ]);
        assert_eq!(c.challenges.len(), 1);
        assert_eq!(c.error(), Some("invalid_token"));
        assert_eq!(c.scopes(), Some(vec!["a".to_owned(), "b".to_owned()]));
        assert_eq!(
            c.resource_metadata(),
            Some("http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp")
        );
    }

    #[test]
    fn several_challenges_and_schemes() {
        let c = AuthChallenge::parse([
            r#"Basic realm="x", DPoP error="use_dpop_nonce", algs="ES256 RS256""#,
            "Bearer scope=files:read",
        ]);
        assert_eq!(c.challenges.len(), 3);
        assert!(c.challenges[0].is("basic"));
        assert!(c.challenges[1].is("DPOP"));
        assert_eq!(c.error(), Some("use_dpop_nonce"));
        assert_eq!(c.scopes(), Some(vec!["files:read".to_owned()]));
    }

    #[test]
    fn token68_and_escapes() {
        let c = AuthChallenge::parse([r#"Negotiate abc==, Bearer realm="a \"b\"""#]);
        assert_eq!(c.challenges.len(), 2);
        assert_eq!(c.challenges[1].param("realm"), Some(r#"a "b""#));
        assert!(AuthChallenge::parse(["", ",,,"]).challenges.is_empty());
        // Garbage does not panic.
        let _ = AuthChallenge::parse(["\"oops", "=", "a=b=c,\\"]);
    }
}
