//! Import: Nutch `regex-normalize.xml` files into dedust rules (run by the Java-compatible regex
//! engine of [`crate::javaregex`]).
//!
//! In: the text of a Nutch urlnormalizer-regex file (`<regex-normalize>` with `<regex>` children
//! holding `<pattern>` and `<substitution>`). Out: [`Rule`]s of kind [`RuleKind::Regex`](crate::model::RuleKind::Regex), in file
//! order, each holding the Java pattern and replacement verbatim. Invariants: every imported rule
//! compiles ([`JavaRegex::new`] is run on it) and its replacement only names groups the pattern
//! has; applying a rule is `Pattern.compile(p).matcher(url).replaceAll(s)` as Java does it.

use crate::error::{Error, Result};
use crate::model::Rule;

pub use crate::javaregex::{regex_rule, JavaRegex};

/// Read a Nutch `regex-normalize.xml` into rules, in file order; `path` is used in messages.
///
/// A `<regex>` without a `<pattern>` is skipped as Nutch skips it; an empty or missing
/// `<substitution>` is the empty string. A pattern Java would reject, or that no engine here can
/// run, is an error naming the line.
///
/// ```
/// let xml = "<regex-normalize><regex><pattern>&amp;{2,}</pattern>\
///            <substitution>&amp;</substitution></regex></regex-normalize>";
/// let rules = dedust_interop::import_nutch(xml, "n.xml").unwrap();
/// assert_eq!(rules[0].regex.as_deref(), Some("&{2,}"));
/// ```
pub fn import_nutch(text: &str, path: &str) -> Result<Vec<Rule>> {
    let err = |m: String| Error::RuleFile {
        path: path.to_string(),
        message: m,
    };
    let doc = roxmltree::Document::parse(text).map_err(|e| err(format!("not XML: {e}")))?;
    let root = doc.root_element();
    if root.tag_name().name() != "regex-normalize" {
        return Err(err(format!(
            "top-level element is <{}>, not <regex-normalize>",
            root.tag_name().name()
        )));
    }
    let mut rules = Vec::new();
    // Line numbers counted forward from the previous element (children come in document
    // order): linear in the file, where a lookup from the start per element is quadratic.
    let (mut at, mut line) = (0usize, 1usize);
    for regex in root.children().filter(|n| n.is_element()) {
        let start = regex.range().start;
        line += memchr::memchr_iter(b'\n', &text.as_bytes()[at..start]).count();
        at = start;
        if regex.tag_name().name() != "regex" {
            return Err(err(format!(
                "line {line}: <{}> where <regex> was expected",
                regex.tag_name().name()
            )));
        }
        let field = |name: &str| {
            regex
                .children()
                .find(|n| n.is_element() && n.tag_name().name() == name)
                .map(|n| n.text().unwrap_or("").to_string())
        };
        let Some(pattern) = field("pattern") else {
            continue;
        };
        let substitution = field("substitution").unwrap_or_default();
        rules.push(regex_rule(
            &pattern,
            &substitution,
            &format!("{path}:{line}"),
        )?);
    }
    Ok(rules)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn import_errors_name_the_file_and_line() {
        let xml = "<regex-normalize>\n<regex><pattern>(</pattern></regex>\n</regex-normalize>";
        let e = import_nutch(xml, "n.xml").unwrap_err().to_string();
        assert!(e.contains("n.xml:2"), "{e}");
        assert!(import_nutch("<other/>", "n.xml").is_err());
        assert!(import_nutch("<regex-normalize>", "n.xml").is_err());
        let ok = import_nutch(
            "<regex-normalize><regex><substitution>x</substitution></regex></regex-normalize>",
            "n.xml",
        )
        .unwrap();
        assert!(ok.is_empty());
    }
}
