//! XML for the Nutch and Heritrix exports: well-formed whatever a rule's text holds.
//!
//! In: element names and layout (constants of the exports), and untrusted text (regexes,
//! replacements and readable patterns made from crawl data). Out: the XML document as a
//! `String`, written by `quick-xml`'s writer, which escapes element text and attribute values
//! (`<`, `>` so `]]>` never closes anything, `&`, quotes; `\r` in text, tab, newline and `\r`
//! in attribute values as character references, so a parser's end-of-line and attribute-value
//! normalization gives the same characters back).
//!
//! Invariants: the document is well-formed XML 1.0. XML 1.0 cannot carry the C0 control
//! characters but tab, newline and carriage return, nor U+FFFE and U+FFFF, not even as
//! character references, so the untrusted text is made safe before it is written:
//! - a Java regex spells such a character with its escape, `\x01` or `\x{FFFE}` ([`java_regex`]:
//!   the same characters match, in Java as in Rust's `regex`); a replacement string has no such
//!   escape, so the exports skip a rule whose replacement holds one ([`is_xml_text`]);
//! - comments hold readable notes only, never a rule's regex: a run of hyphens in them is
//!   spaced out (`---` → `- - -`), a trailing hyphen gets a space after it (so a comment never
//!   holds `--` nor ends with `-`), and a character XML cannot carry is shown as its regex escape
//!   ([`comment_text`]);
//! - text or an attribute value that still holds such a character (never, from the exports,
//!   which skip those rules first) has it written as U+FFFD, so the document stays well-formed.
//!
//! Complexity: `O(n)` in the length of the text written.

use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::Writer;
use std::borrow::Cow;

/// Whether XML 1.0 can carry `c` (its `Char` production): tab, newline, carriage return,
/// U+0020 to U+D7FF, U+E000 to U+FFFD and U+10000 up.
pub(crate) fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// Whether XML 1.0 can carry every character of `s`.
pub(crate) fn is_xml_text(s: &str) -> bool {
    s.chars().all(is_xml_char)
}

/// The regex escape of `c`: `\x01` below U+0100, `\x{FFFE}` above (Java and Rust's `regex`
/// read both forms, in and out of a character class).
fn regex_escape(c: char) -> String {
    let n = u32::from(c);
    if n < 0x100 {
        format!("\\x{n:02X}")
    } else {
        format!("\\x{{{n:X}}}")
    }
}

/// Whether `p` may switch on Java's free-spacing mode (an inline flag group with `x`, such as
/// `(?x)`, `(?ix:…)`), where white space such as U+000B is ignored unless escaped. Errs on the
/// safe side: `(?x` inside an escape or a class counts too.
fn may_free_space(p: &str) -> bool {
    p.match_indices("(?").any(|(i, _)| {
        p[i + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphabetic() || *c == '-')
            .any(|c| c == 'x')
    })
}

/// The Java regex `p` spelled with XML 1.0 characters only: each character XML cannot carry
/// becomes its escape (`\x01`), which matches the same character, so the regex keeps its
/// meaning. A character escaped by `\` (`\` + U+0001) becomes the escape alone; one quoted by
/// `\Q…\E` closes the quote around its escape (`\E\x01\Q`); `\c` + U+0001 (Java: the character
/// U+0001 XOR 64) becomes the escape of that character. `Err(c)`: `p` holds `c`, which XML
/// cannot carry, and may use free-spacing mode, where an escape can change what the regex
/// matches (a raw U+000B is ignored there, `\x0B` is not).
///
/// # Complexity
/// `O(|p|)`.
pub(crate) fn java_regex(p: &str) -> Result<Cow<'_, str>, char> {
    let Some(bad) = p.chars().find(|&c| !is_xml_char(c)) else {
        return Ok(Cow::Borrowed(p));
    };
    if may_free_space(p) {
        return Err(bad);
    }
    let mut out = String::with_capacity(p.len() + 16);
    let mut it = p.chars().peekable();
    let mut quoted = false;
    while let Some(c) = it.next() {
        if quoted {
            if c == '\\' && it.peek() == Some(&'E') {
                it.next();
                quoted = false;
                out.push_str("\\E");
            } else if is_xml_char(c) {
                out.push(c);
            } else {
                out.push_str("\\E");
                out.push_str(&regex_escape(c));
                out.push_str("\\Q");
            }
            continue;
        }
        match c {
            '\\' => match it.next() {
                None => out.push('\\'),
                Some('Q') => {
                    quoted = true;
                    out.push_str("\\Q");
                }
                Some('c') => match it.next() {
                    Some(m) if !is_xml_char(m) => {
                        // Java's `\cX` is the character X XOR 64 (never a surrogate here).
                        let x = char::from_u32(u32::from(m) ^ 64).unwrap_or(m);
                        out.push_str(&regex_escape(x));
                    }
                    Some(m) => {
                        out.push_str("\\c");
                        out.push(m);
                    }
                    None => out.push_str("\\c"),
                },
                Some(n) if !is_xml_char(n) => out.push_str(&regex_escape(n)),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
            },
            c if !is_xml_char(c) => out.push_str(&regex_escape(c)),
            c => out.push(c),
        }
    }
    Ok(Cow::Owned(out))
}

/// `s` made safe inside an XML comment: hyphen runs spaced out (`--` → `- -`), a space after a
/// trailing hyphen, and each character XML cannot carry shown as its regex escape (`\x01`).
///
/// # Complexity
/// `O(|s|)`.
pub(crate) fn comment_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    for c in s.chars() {
        if c == '-' && out.ends_with('-') {
            out.push(' ');
        }
        if is_xml_char(c) {
            out.push(c);
        } else {
            out.push_str(&regex_escape(c));
        }
    }
    if out.ends_with('-') {
        out.push(' ');
    }
    out
}

/// `s` with each character XML cannot carry replaced by U+FFFD (the last line of defence; the
/// exports never hand such text to the writer).
fn xml_safe(s: &str) -> Cow<'_, str> {
    if is_xml_text(s) {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(
            s.chars()
                .map(|c| if is_xml_char(c) { c } else { '\u{FFFD}' })
                .collect(),
        )
    }
}

/// An XML document being written, without indentation of its own: the exports lay it out with
/// [`Xml::layout`].
pub(crate) struct Xml(Writer<Vec<u8>>);

impl Xml {
    pub(crate) fn new() -> Xml {
        Xml(Writer::new(Vec::new()))
    }

    fn put(&mut self, e: Event<'_>) {
        // Writing to a `Vec<u8>` cannot fail.
        self.0.write_event(e).expect("writing XML to memory");
    }

    /// `<?xml version="1.0"?>`.
    pub(crate) fn decl(&mut self) {
        self.put(Event::Decl(BytesDecl::new("1.0", None, None)));
    }

    /// White space (or other text) between elements.
    pub(crate) fn layout(&mut self, s: &str) {
        self.put(Event::Text(BytesText::new(&xml_safe(s))));
    }

    /// `<!--text-->`, with `text` made safe by [`comment_text`].
    pub(crate) fn comment(&mut self, text: &str) {
        self.put(Event::Comment(BytesText::from_escaped(comment_text(text))));
    }

    fn tag<'a>(name: &'a str, attrs: &[(&str, &str)]) -> BytesStart<'a> {
        let mut t = BytesStart::new(name);
        for (k, v) in attrs {
            t.push_attribute((*k, xml_safe(v)));
        }
        t
    }

    /// `<name attr="value"…>`.
    pub(crate) fn start(&mut self, name: &str, attrs: &[(&str, &str)]) {
        self.put(Event::Start(Self::tag(name, attrs)));
    }

    /// `</name>`.
    pub(crate) fn end(&mut self, name: &str) {
        self.put(Event::End(BytesEnd::new(name)));
    }

    /// `<name attr="value"…/>`.
    pub(crate) fn empty(&mut self, name: &str, attrs: &[(&str, &str)]) {
        self.put(Event::Empty(Self::tag(name, attrs)));
    }

    /// `<name>text</name>`.
    pub(crate) fn element(&mut self, name: &str, text: &str) {
        self.start(name, &[]);
        self.put(Event::Text(BytesText::new(&xml_safe(text))));
        self.end(name);
    }

    /// The document.
    pub(crate) fn finish(self) -> String {
        // Every piece written was a `&str` or ASCII markup.
        String::from_utf8(self.0.into_inner()).expect("XML written from UTF-8 text")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_regex_table() {
        // (regex, as written in XML): each escape matches what the raw character matched.
        let cases: &[(&str, &str)] = &[
            ("plain/x\\.y", "plain/x\\.y"),
            ("a\tb\nc\rd", "a\tb\nc\rd"),
            ("a\u{1}b", "a\\x01b"),
            ("a\u{1f}b\u{0}", "a\\x1Fb\\x00"),
            ("[^\u{1}=&#]", "[^\\x01=&#]"),
            ("a\\\u{1}", "a\\x01"),
            ("a\\\\\u{1}", "a\\\\\\x01"),
            ("\\Qa\u{1}b\\E\u{2}", "\\Qa\\E\\x01\\Qb\\E\\x02"),
            ("\\Q\\\u{1}", "\\Q\\\\E\\x01\\Q"),
            ("\\c\u{1}", "\\x41"),
            ("\\cA\u{1}", "\\cA\\x01"),
            ("x\u{FFFE}\u{FFFF}", "x\\x{FFFE}\\x{FFFF}"),
            ("(?i)a\u{1}", "(?i)a\\x01"),
            ("(?x)a b", "(?x)a b"),
        ];
        for (p, want) in cases {
            assert_eq!(java_regex(p).as_deref(), Ok(*want), "{p:?}");
        }
        for p in ["(?x)a\u{b}", "(?ix:a)\u{1}", "(?-x)\u{c}"] {
            assert!(java_regex(p).is_err(), "{p:?}");
        }
    }

    #[test]
    fn comment_text_table() {
        let cases: &[(&str, &str)] = &[
            ("a-b", "a-b"),
            ("a--b", "a- -b"),
            ("a---b", "a- - -b"),
            ("----", "- - - - "),
            ("end-", "end- "),
            ("-", "- "),
            ("x]]>y<&\"'", "x]]>y<&\"'"),
            ("a\u{1}\u{1f}\tb\u{FFFF}", "a\\x01\\x1F\tb\\x{FFFF}"),
        ];
        for (s, want) in cases {
            let got = comment_text(s);
            assert_eq!(got, *want, "{s:?}");
            assert!(!got.contains("--") && !got.ends_with('-'), "{got:?}");
        }
    }

    #[test]
    fn the_writer_escapes_text_and_attributes() {
        let mut x = Xml::new();
        x.decl();
        x.start("a", &[("v", "t\tn\nr\r<>&\"'\u{1}")]);
        x.element("b", "]]>\r\u{2}<&");
        x.comment(" -- ");
        x.end("a");
        assert_eq!(
            x.finish(),
            "<?xml version=\"1.0\"?><a v=\"t&#9;n&#10;r&#13;&lt;&gt;&amp;&quot;&apos;\u{FFFD}\">\
             <b>]]&gt;&#13;\u{FFFD}&lt;&amp;</b><!-- - - --></a>"
        );
    }
}
