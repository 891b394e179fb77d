//! Tokenize: a base-normalized URL becomes a typed token sequence.
//!
//! In: a URL string (normally the output of [`crate::base_normalize`]). Out: a [`Tokens`] value —
//! the scheme, the user info (if any), the host labels, the port, the path split into `/`, letter
//! runs, digit runs and single punctuation characters (as DUSTER does), every query parameter as one
//! name/value token, and the fragment. Invariant: [`Tokens::rebuild`] gives back the input
//! byte for byte, for every input that has a `scheme://` authority; other inputs become a single
//! [`TokenKind::Opaque`] token and rebuild to themselves too.

use serde::{Deserialize, Serialize};

/// The type of a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum TokenKind {
    /// `http`, `https` … (without `://`).
    Scheme,
    /// `user:pass` (without `@`).
    UserInfo,
    /// One dot-separated label of the host.
    HostLabel,
    /// The port digits (without `:`).
    Port,
    /// A `/` of the path.
    Slash,
    /// A run of letters (ASCII letters, non-ASCII characters and percent escapes).
    Word,
    /// A run of ASCII digits.
    Number,
    /// One other character of the path.
    Punct,
    /// One query parameter, `name=value` or `name` (without `&`).
    Param,
    /// The fragment (without `#`).
    Fragment,
    /// A URL without an authority (`mailto:…`), kept whole.
    Opaque,
}

/// One token: its type and its exact text.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Token {
    /// The type.
    pub kind: TokenKind,
    /// The exact text (see [`TokenKind`] for what separators are left out).
    pub text: String,
}

impl Token {
    /// For a [`TokenKind::Param`], the name part; otherwise the whole text.
    pub fn param_name(&self) -> &str {
        crate::base::param_name(&self.text)
    }

    /// For a [`TokenKind::Param`], the value (`None` for a bare `name`).
    pub fn param_value(&self) -> Option<&str> {
        self.text.split_once('=').map(|(_, v)| v)
    }
}

/// A tokenized URL.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tokens(pub Vec<Token>);

impl Tokens {
    /// Rebuild the URL text from the tokens.
    ///
    /// ```
    /// use dedust_learn::tokenize;
    /// let u = "https://a.example.com:8080/t-12.html?x=1&y#f";
    /// assert_eq!(tokenize(u).rebuild(), u);
    /// ```
    pub fn rebuild(&self) -> String {
        let mut out = String::new();
        let mut host_started = false;
        let mut query_started = false;
        for t in &self.0 {
            match t.kind {
                TokenKind::Scheme => {
                    out.push_str(&t.text);
                    out.push_str("://");
                }
                TokenKind::UserInfo => {
                    out.push_str(&t.text);
                    out.push('@');
                }
                TokenKind::HostLabel => {
                    if host_started {
                        out.push('.');
                    }
                    host_started = true;
                    out.push_str(&t.text);
                }
                TokenKind::Port => {
                    out.push(':');
                    out.push_str(&t.text);
                }
                TokenKind::Slash
                | TokenKind::Word
                | TokenKind::Number
                | TokenKind::Punct
                | TokenKind::Opaque => out.push_str(&t.text),
                TokenKind::Param => {
                    out.push(if query_started { '&' } else { '?' });
                    query_started = true;
                    out.push_str(&t.text);
                }
                TokenKind::Fragment => {
                    out.push('#');
                    out.push_str(&t.text);
                }
            }
        }
        out
    }

    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there is no token.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

pub use crate::url_parts::{split_url, UrlParts};

fn class(c: char) -> u8 {
    if c.is_ascii_digit() {
        1
    } else if c.is_ascii_alphabetic() || !c.is_ascii() {
        2
    } else {
        0
    }
}

/// Split one path into `/`, letter runs, digit runs and single punctuation tokens, calling `f`
/// with each token's kind and text (no allocation).
///
/// ```
/// let mut v = Vec::new();
/// dedust_learn::tokenize::path_tokens("/t-12.html", |k, s| v.push((k, s.to_string())));
/// assert_eq!(v.len(), 6);
/// ```
pub fn path_tokens(path: &str, mut f: impl FnMut(TokenKind, &str)) {
    let kind = |c: u8| match c {
        1 => TokenKind::Number,
        2 => TokenKind::Word,
        _ => TokenKind::Punct,
    };
    let mut start = 0;
    let mut cur: Option<u8> = None;
    let bytes = path.as_bytes();
    let mut skip_to = 0usize;
    for (i, ch) in path.char_indices() {
        if i < skip_to {
            continue;
        }
        // A percent escape `%XX` belongs to a letter run as a whole.
        let escape = ch == '%'
            && i + 2 < bytes.len()
            && bytes[i + 1].is_ascii_hexdigit()
            && bytes[i + 2].is_ascii_hexdigit();
        if escape {
            skip_to = i + 3;
        }
        if ch == '/' {
            if let Some(c) = cur.take() {
                f(kind(c), &path[start..i]);
            }
            f(TokenKind::Slash, "/");
            start = i + 1;
            continue;
        }
        let c = if escape { 2 } else { class(ch) };
        match cur {
            Some(prev) if prev == c && c != 0 => {}
            Some(prev) => {
                f(kind(prev), &path[start..i]);
                start = i;
                cur = Some(c);
            }
            None => {
                start = i;
                cur = Some(c);
            }
        }
    }
    if let Some(c) = cur {
        f(kind(c), &path[start..]);
    }
}

fn tokenize_path(path: &str, out: &mut Vec<Token>) {
    path_tokens(path, |kind, text| {
        out.push(Token {
            kind,
            text: text.to_string(),
        })
    });
}

/// `tokenize(url).len()` without building the tokens.
///
/// ```
/// let u = "https://a.b.org:81/t-12.html?x=1&y#f";
/// assert_eq!(dedust_learn::tokenize::token_count(u), dedust_learn::tokenize(u).len());
/// ```
pub fn token_count(url: &str) -> usize {
    let Some(p) = split_url(url) else { return 1 };
    let mut n = 1 + p.host.split('.').count();
    if !p.userinfo.is_empty() || url[p.scheme.len() + 3..].starts_with('@') {
        n += 1;
    }
    if !p.port.is_empty() || has_empty_port(url, &p) {
        n += 1;
    }
    path_tokens(p.path, |_, _| n += 1);
    if let Some(q) = p.query {
        n += if q.is_empty() {
            1
        } else {
            dedust_core::__private::url_parts::split_ascii(q, b'&').count()
        };
    }
    n + usize::from(p.fragment.is_some())
}

/// Tokenize a URL.
///
/// ```
/// use dedust_learn::{tokenize, TokenKind};
/// let t = tokenize("https://ubuntuforums.org/showthread.php?t=1&mode=hybrid");
/// let kinds: Vec<TokenKind> = t.0.iter().map(|t| t.kind).collect();
/// use TokenKind::*;
/// assert_eq!(kinds, [Scheme, HostLabel, HostLabel, Slash, Word, Punct, Word, Param, Param]);
/// assert_eq!(t.0[7].param_name(), "t");
/// ```
pub fn tokenize(url: &str) -> Tokens {
    let mut out = Vec::new();
    let Some(p) = split_url(url) else {
        out.push(Token {
            kind: TokenKind::Opaque,
            text: url.to_string(),
        });
        return Tokens(out);
    };
    out.push(Token {
        kind: TokenKind::Scheme,
        text: p.scheme.into(),
    });
    if !p.userinfo.is_empty() || url[p.scheme.len() + 3..].starts_with('@') {
        out.push(Token {
            kind: TokenKind::UserInfo,
            text: p.userinfo.into(),
        });
    }
    for label in p.host.split('.') {
        out.push(Token {
            kind: TokenKind::HostLabel,
            text: label.into(),
        });
    }
    if !p.port.is_empty() || has_empty_port(url, &p) {
        out.push(Token {
            kind: TokenKind::Port,
            text: p.port.into(),
        });
    }
    tokenize_path(p.path, &mut out);
    if let Some(q) = p.query {
        if q.is_empty() {
            // `?` with nothing after it: keep it as one empty parameter so rebuild is exact.
            out.push(Token {
                kind: TokenKind::Param,
                text: String::new(),
            });
        } else {
            for pair in dedust_core::__private::url_parts::split_ascii(q, b'&') {
                out.push(Token {
                    kind: TokenKind::Param,
                    text: pair.into(),
                });
            }
        }
    }
    if let Some(f) = p.fragment {
        out.push(Token {
            kind: TokenKind::Fragment,
            text: f.into(),
        });
    }
    Tokens(out)
}

/// `http://host:/x` has an empty port that must survive a rebuild.
fn has_empty_port(url: &str, p: &UrlParts<'_>) -> bool {
    let auth_start = p.scheme.len() + 3;
    let auth_end = url[auth_start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| auth_start + i);
    let auth = &url[auth_start..auth_end];
    !auth.ends_with(']') && auth.ends_with(':')
}

#[cfg(test)]
mod tests {
    use super::*;
    use TokenKind::*;

    #[test]
    fn table() {
        let cases: &[(&str, &[(TokenKind, &str)])] = &[
            (
                "http://a.b/x",
                &[
                    (Scheme, "http"),
                    (HostLabel, "a"),
                    (HostLabel, "b"),
                    (Slash, "/"),
                    (Word, "x"),
                ],
            ),
            (
                "https://h.org/archive/t-986974.html",
                &[
                    (Scheme, "https"),
                    (HostLabel, "h"),
                    (HostLabel, "org"),
                    (Slash, "/"),
                    (Word, "archive"),
                    (Slash, "/"),
                    (Word, "t"),
                    (Punct, "-"),
                    (Number, "986974"),
                    (Punct, "."),
                    (Word, "html"),
                ],
            ),
            (
                "http://h/a..b/?k=v&flag#frag",
                &[
                    (Scheme, "http"),
                    (HostLabel, "h"),
                    (Slash, "/"),
                    (Word, "a"),
                    (Punct, "."),
                    (Punct, "."),
                    (Word, "b"),
                    (Slash, "/"),
                    (Param, "k=v"),
                    (Param, "flag"),
                    (Fragment, "frag"),
                ],
            ),
            (
                "http://u:p@h:81/%C3%A9t%C3%A92",
                &[
                    (Scheme, "http"),
                    (UserInfo, "u:p"),
                    (HostLabel, "h"),
                    (Port, "81"),
                    (Slash, "/"),
                    (Word, "%C3%A9t%C3%A9"),
                    (Number, "2"),
                ],
            ),
            ("mailto:x@y.z", &[(Opaque, "mailto:x@y.z")]),
        ];
        for (url, want) in cases {
            let got = tokenize(url);
            let got: Vec<(TokenKind, &str)> =
                got.0.iter().map(|t| (t.kind, t.text.as_str())).collect();
            assert_eq!(&got, want, "{url}");
        }
    }

    #[test]
    fn rebuild_is_exact() {
        for u in [
            "http://a.b/x",
            "http://a.b",
            "http://a.b?",
            "http://a.b/?#",
            "http://@a.b:/x//y",
            "http://[::1]:8080/x?a=&b==c",
            "https://ubuntuforums.org/showthread.php?t=2396025&p=13788960&highlight=",
            "data:text/plain,hi",
        ] {
            assert_eq!(tokenize(u).rebuild(), u);
        }
    }
}
