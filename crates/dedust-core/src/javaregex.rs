//! The Java-compatible regex engine: a Java pattern and replacement applied to a whole URL as
//! `Pattern.compile(p).matcher(url).replaceAll(s)` does it (imported Nutch, ClearURLs, DUD and
//! robots.txt rules).
//!
//! In: a Java pattern and replacement string. Out: [`JavaRegex`], or an error naming what Java
//! would reject. Java regex features that Rust's `regex` lacks (look-around, back-references,
//! inline flag groups such as `((?i)index|default)`) are run by `fancy-regex`; Java's `\w`, `\d`,
//! `\s` are ASCII classes and are translated as such (Rust's are Unicode). The replacement
//! follows `Matcher.appendReplacement`: `\x` is a literal `x`, `$n` takes as many digits as
//! still name an existing group, `${name}` a named group, and a group that did not take part
//! appends nothing. [`regex_rule`] makes a rule of kind [`RuleKind::Regex`] from a pattern and
//! replacement. Invariant: a URL the look-around-free prefilter rejects is returned as is
//! without running the backtracking engine.

// Without the `java-regex` feature the parsing helpers stay (their tests need the feature).
#![cfg_attr(not(feature = "java-regex"), allow(dead_code))]

use crate::error::{Error, Result};
use crate::model::{Rule, RuleKind, Source, Target};

/// Why a Java pattern or replacement was refused ([`JavaRegex::new`]); the messages are Java's.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum JavaRegexError {
    /// The pattern does not compile (the regex engine's message).
    Pattern(String),
    /// The replacement ends in `\`.
    TrailingEscape,
    /// `${name` without its `}`.
    UnclosedGroupName,
    /// `${name}` names no group of the pattern.
    NoNamedGroup(String),
    /// `$n` past the pattern's groups.
    NoGroup(usize),
    /// `$` followed by neither a digit nor `{`.
    BadGroupReference,
    /// dedust-core was built without its `java-regex` feature.
    Unsupported,
}

impl std::fmt::Display for JavaRegexError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JavaRegexError::Pattern(m) => f.write_str(m),
            JavaRegexError::TrailingEscape => {
                f.write_str("character to be escaped is missing at the end")
            }
            JavaRegexError::UnclosedGroupName => {
                f.write_str("named capturing group is missing trailing '}'")
            }
            JavaRegexError::NoNamedGroup(n) => write!(f, "no group with name {{{n}}}"),
            JavaRegexError::NoGroup(g) => write!(f, "no group {g}"),
            JavaRegexError::BadGroupReference => f.write_str("illegal group reference after '$'"),
            JavaRegexError::Unsupported => f.write_str(
                "Java-regex rules need dedust-core's `java-regex` feature (built without it)",
            ),
        }
    }
}

impl std::error::Error for JavaRegexError {}

/// A Java pattern and replacement compiled for [`JavaRegex::replace_all`].
#[derive(Debug, Clone)]
pub struct JavaRegex {
    #[cfg(feature = "java-regex")]
    re: fancy_regex::Regex,
    /// For a pattern with look-arounds: the pattern without them (each assertion taken as
    /// true), run by the `regex` crate's automata. It matches whenever the pattern does, so a
    /// URL it rejects is left as it is without the backtracking engine (a list of hundreds of
    /// rules guarded by look-aheads, such as an imported ClearURLs list, costs one automaton
    /// run per rule instead of one backtracking run).
    #[cfg(feature = "java-regex")]
    pre: Option<regex::Regex>,
    #[cfg_attr(not(feature = "java-regex"), allow(dead_code))]
    replacement: Vec<RepPart>,
}

#[derive(Debug, Clone, PartialEq)]
enum RepPart {
    Lit(String),
    Group(usize),
    Named(String),
}

impl JavaRegex {
    /// Compile a Java pattern and a Java replacement string.
    ///
    /// ```
    /// # #[cfg(feature = "java-regex")] { // imported Java regexes need the default feature
    /// use dedust_core::JavaRegex;
    /// let r = JavaRegex::new(r"(?<!:)/{2,}", "/").unwrap();
    /// assert_eq!(r.replace_all("http://a.org//x//y"), "http://a.org/x/y");
    /// let r = JavaRegex::new(r"/((?i)index|default)\.(html?)(\?|&|#|$)", "/$3").unwrap();
    /// assert_eq!(r.replace_all("http://a.org/INDEX.html"), "http://a.org/");
    /// assert_eq!(JavaRegex::new("(a)", "$2").unwrap_err(), dedust_core::JavaRegexError::NoGroup(2));
    /// # }
    /// ```
    pub fn new(pattern: &str, replacement: &str) -> std::result::Result<JavaRegex, JavaRegexError> {
        #[cfg(not(feature = "java-regex"))]
        {
            let _ = (pattern, replacement);
            Err(JavaRegexError::Unsupported)
        }
        #[cfg(feature = "java-regex")]
        Self::compile(pattern, replacement)
    }

    #[cfg(feature = "java-regex")]
    fn compile(pattern: &str, replacement: &str) -> std::result::Result<JavaRegex, JavaRegexError> {
        let translated = translate(pattern);
        let re = fancy_regex::Regex::new(&translated)
            .map_err(|e| JavaRegexError::Pattern(e.to_string()))?;
        let groups = re.captures_len() - 1;
        let names: Vec<String> = re.capture_names().flatten().map(str::to_string).collect();
        let replacement = parse_replacement(replacement, groups, &names)?;
        let loose = without_lookaround(&translated);
        // Free-spacing mode (`(?x)`) has `#` comments the scan does not know: no prefilter.
        let pre =
            (loose != translated && !translated.contains("(?x") && !translated.contains("x)"))
                .then(|| regex::Regex::new(&loose).ok())
                .flatten();
        Ok(JavaRegex {
            re,
            pre,
            replacement,
        })
    }

    /// `matcher(input).replaceAll(replacement)`.
    pub fn replace_all(&self, input: &str) -> String {
        self.replace_all_checked(input).0
    }

    /// [`JavaRegex::replace_all`], and whether the match stopped at the regex engine's
    /// backtracking limit (a pattern such as `(a|a)+!` on a long input): the matches before it
    /// are replaced, the rest of the input is kept as it is.
    ///
    /// ```
    /// # #[cfg(feature = "java-regex")] { // imported Java regexes need the default feature
    /// let r = dedust_core::JavaRegex::new("(a|a)+(?<!x)!|z", "Z").unwrap();
    /// assert_eq!(r.replace_all_checked("az"), ("aZ".to_string(), false));
    /// let (_, hit) = r.replace_all_checked(&format!("{}z", "a".repeat(40)));
    /// assert!(hit);
    /// # }
    /// ```
    pub fn replace_all_checked(&self, input: &str) -> (String, bool) {
        #[cfg(not(feature = "java-regex"))]
        {
            // Never built: `new` refuses every pattern without the feature.
            (input.to_string(), false)
        }
        #[cfg(feature = "java-regex")]
        self.run(input)
    }

    #[cfg(feature = "java-regex")]
    fn run(&self, input: &str) -> (String, bool) {
        if self.pre.as_ref().is_some_and(|p| !p.is_match(input)) {
            return (input.to_string(), false);
        }
        let mut out = String::with_capacity(input.len());
        let mut last = 0;
        let mut hit = false;
        for caps in self.re.captures_iter(input) {
            // A runtime error (backtracking limit) counts as no further match.
            let Ok(caps) = caps else {
                hit = true;
                break;
            };
            let m = caps.get(0).expect("group 0 is always set");
            out.push_str(&input[last..m.start()]);
            for part in &self.replacement {
                match part {
                    RepPart::Lit(l) => out.push_str(l),
                    RepPart::Group(g) => {
                        if let Some(x) = caps.get(*g) {
                            out.push_str(x.as_str());
                        }
                    }
                    RepPart::Named(n) => {
                        if let Some(x) = caps.name(n) {
                            out.push_str(x.as_str());
                        }
                    }
                }
            }
            last = m.end();
        }
        out.push_str(&input[last..]);
        (out, hit)
    }
}

/// `p` (a translated pattern) without its look-around groups (`(?=…)`, `(?!…)`, `(?<=…)`,
/// `(?<!…)`): a pattern that matches wherever `p` does. Escapes and character classes are
/// skipped over, so a `(` inside them opens nothing.
///
/// # Complexity
/// `O(|p|)`.
fn without_lookaround(p: &str) -> String {
    let b = p.as_bytes();
    let mut out = String::with_capacity(p.len());
    let mut i = 0;
    // Byte index just past the escape, class or group starting at `i` (only `(` is asked for).
    let skip_group = |mut i: usize| -> usize {
        let mut depth = 0usize;
        let mut class = 0usize;
        while i < b.len() {
            match b[i] {
                b'\\' => i += 1,
                b'[' => class += 1,
                b']' if class > 0 => class -= 1,
                b'(' if class == 0 => depth += 1,
                b')' if class == 0 => {
                    depth -= 1;
                    if depth == 0 {
                        return i + 1;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        b.len()
    };
    let mut class = 0usize;
    let mut last = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'[' => class += 1,
            b']' if class > 0 => class -= 1,
            b'(' if class == 0 => {
                let rest = &p[i..];
                if ["(?=", "(?!", "(?<=", "(?<!"]
                    .iter()
                    .any(|s| rest.starts_with(s))
                {
                    out.push_str(&p[last..i]);
                    i = skip_group(i);
                    last = i;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out.push_str(&p[last.min(p.len())..]);
    out
}

/// Rewrite the Java classes whose meaning differs in Rust (`\w \d \s` and their negations are
/// ASCII in Java, Unicode in Rust); everything else is passed through.
fn translate(p: &str) -> String {
    let mut out = String::with_capacity(p.len() + 16);
    let mut chars = p.chars().peekable();
    let mut class_depth = 0usize;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(n) = chars.next() else {
                    out.push('\\');
                    break;
                };
                let (inside, outside) = match n {
                    'w' => ("0-9A-Za-z_", "[0-9A-Za-z_]"),
                    'd' => ("0-9", "[0-9]"),
                    's' => (" \\t\\n\\x0B\\f\\r", "[ \\t\\n\\x0B\\f\\r]"),
                    'W' => ("", "[^0-9A-Za-z_]"),
                    'D' => ("", "[^0-9]"),
                    'S' => ("", "[^ \\t\\n\\x0B\\f\\r]"),
                    _ => ("", ""),
                };
                if class_depth > 0 && !inside.is_empty() {
                    out.push_str(inside);
                } else if class_depth == 0 && !outside.is_empty() {
                    out.push_str(outside);
                } else {
                    out.push('\\');
                    out.push(n);
                }
            }
            '[' => {
                class_depth += 1;
                out.push(c);
                // A `]` right after `[` or `[^` is a literal in both dialects.
                if chars.peek() == Some(&'^') {
                    out.push(chars.next().unwrap_or('^'));
                }
                if chars.peek() == Some(&']') {
                    chars.next();
                    out.push_str("\\]");
                }
            }
            ']' if class_depth > 0 => {
                class_depth -= 1;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// Parse a Java replacement string (see the module docs); `groups` is the pattern's group count.
fn parse_replacement(
    s: &str,
    groups: usize,
    names: &[String],
) -> std::result::Result<Vec<RepPart>, JavaRegexError> {
    let mut parts = Vec::new();
    let mut lit = String::new();
    let b: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            '\\' => {
                let c = *b.get(i + 1).ok_or(JavaRegexError::TrailingEscape)?;
                lit.push(c);
                i += 2;
            }
            '$' => {
                if !lit.is_empty() {
                    parts.push(RepPart::Lit(std::mem::take(&mut lit)));
                }
                i += 1;
                match b.get(i) {
                    Some('{') => {
                        let end = b[i..]
                            .iter()
                            .position(|&c| c == '}')
                            .ok_or(JavaRegexError::UnclosedGroupName)?;
                        let name: String = b[i + 1..i + end].iter().collect();
                        if !names.contains(&name) {
                            return Err(JavaRegexError::NoNamedGroup(name));
                        }
                        parts.push(RepPart::Named(name));
                        i += end + 1;
                    }
                    Some(d) if d.is_ascii_digit() => {
                        let mut g = d.to_digit(10).unwrap_or(0) as usize;
                        if g > groups {
                            return Err(JavaRegexError::NoGroup(g));
                        }
                        i += 1;
                        while let Some(d) = b.get(i).and_then(|c| c.to_digit(10)) {
                            let next = g * 10 + d as usize;
                            if next > groups {
                                break;
                            }
                            g = next;
                            i += 1;
                        }
                        parts.push(RepPart::Group(g));
                    }
                    _ => return Err(JavaRegexError::BadGroupReference),
                }
            }
            c => {
                lit.push(c);
                i += 1;
            }
        }
    }
    if !lit.is_empty() {
        parts.push(RepPart::Lit(lit));
    }
    Ok(parts)
}

/// A rule of kind [`RuleKind::Regex`] for a Java pattern and replacement (checked to compile).
///
/// ```
/// # #[cfg(feature = "java-regex")] { // imported Java regexes need the default feature
/// let r = dedust_core::regex_rule("[\\?&\\.]$", "", "nutch.xml:1").unwrap();
/// assert_eq!(r.kind, dedust_core::RuleKind::Regex);
/// assert!(dedust_core::regex_rule("(", "", "x").is_err());
/// # }
/// ```
pub fn regex_rule(pattern: &str, replacement: &str, origin: &str) -> Result<Rule> {
    JavaRegex::new(pattern, replacement).map_err(|m| Error::RuleFile {
        path: origin.to_string(),
        message: format!("pattern {pattern:?} / substitution {replacement:?}: {m}"),
    })?;
    let mut rule = Rule::bare(
        RuleKind::Regex,
        Source {
            host: String::new(),
            ..Source::everywhere()
        },
        Target::unchanged(),
    );
    rule.id = format!(
        "x{:016x}",
        crate::hash::fnv(&format!("{pattern}\u{0}{replacement}"))
    );
    rule.scope = "*".into();
    rule.pattern = pattern.to_string();
    rule.target = replacement.to_string();
    rule.regex = Some(pattern.to_string());
    rule.replacement = Some(replacement.to_string());
    Ok(rule)
}

#[cfg(all(test, feature = "java-regex"))]
mod tests {
    use super::*;

    #[test]
    fn lookarounds_are_taken_out_of_the_prefilter() {
        // (pattern, without its look-arounds)
        let cases = [
            ("(?<!:)/{2,}", "/{2,}"),
            ("^(?=(?i:.*?a(b)))(?!x[(])c", "^c"),
            ("a\\(?=b)", "a\\(?=b)"),
            ("[(?=]x(?<name>y)", "[(?=]x(?<name>y)"),
            ("(?:a(?=b)|c)+", "(?:a|c)+"),
            ("plain", "plain"),
        ];
        for (p, want) in cases {
            assert_eq!(without_lookaround(p), want, "{p}");
        }
        // The prefilter never changes a result: URLs it rejects are those the pattern rejects.
        let r = JavaRegex::new("^(?=[^?]*\\?)(?!.*keep)(.*?)[?&]x=[^&]*", "$1").unwrap();
        assert!(r.pre.is_some());
        for (u, want) in [
            ("http://a.org/p?x=1", "http://a.org/p"),
            ("http://a.org/p?y=1", "http://a.org/p?y=1"),
            ("http://keep.org/p?x=1", "http://keep.org/p?x=1"),
        ] {
            assert_eq!(r.replace_all(u), want, "{u}");
        }
    }

    #[test]
    fn replacement_table() {
        // (pattern, replacement, input, expected) — each checked against what Java prints.
        let cases = [
            ("(a)(b)", "$2$1", "xaby", "xbay"),
            ("(a)", "\\$1", "a", "$1"),
            ("(a)", "$10", "a", "a0"),
            ("(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)", "$10", "abcdefghij", "j"),
            ("(a)|(b)", "[$1$2]", "ab", "[a][b]"),
            ("(?<n>x)", "${n}${n}", "x", "xx"),
            ("#.*?(\\?|&|$)", "$1", "/a.html#s?x=y", "/a.html?x=y"),
            ("\\?&", "\\?", "/f?&x=1", "/f?x=1"),
            ("\\w+", "w", "é-ab_1", "é-w"),
            ("[\\w]+\\.", "", "ab.é.", "é."),
        ];
        for (p, r, input, want) in cases {
            let re = JavaRegex::new(p, r).unwrap_or_else(|e| panic!("{p}: {e}"));
            assert_eq!(re.replace_all(input), want, "{p} / {r} on {input}");
        }
    }

    #[test]
    fn bad_replacements_are_errors() {
        for (p, r) in [("(a)", "$2"), ("a", "$"), ("a", "\\"), ("a", "${x}")] {
            assert!(JavaRegex::new(p, r).is_err(), "{p} / {r}");
        }
    }
}
