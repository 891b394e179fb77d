//! TDW: the term-document-weighting features of one HTML page.
//!
//! In: a page's URL and HTML. Out: a [`Features`] record: the TDW vector (for each mapped,
//! stemmed term, Σ count × tag weight), the raw term counts, and the page's sentence count.
//! Invariants: scripts, styles and comments contribute nothing; the same input gives the same
//! features; terms are lower-case, not stop words, mapped to their shortest WordNet synonym
//! ([`map_word`]) and then Porter-stemmed (Snowball English).
//!
//! Tag weights ([`Weights::default`]): URL 2, headings 2, title 2, anchor text to the same site 1,
//! anchor text to another site 0.5, meta keywords 3, meta description 3, main block 1. The HTML is
//! read by `html5gum`, a WHATWG tokenizer (with its script/style state switching on).

use rust_stemmers::{Algorithm, Stemmer};
use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

/// Weight of each place a term can occur.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    /// Words of the page URL.
    pub url: f64,
    /// `<h1>`…`<h6>`.
    pub heading: f64,
    /// `<title>`.
    pub title: f64,
    /// Text of a link to the same site.
    pub anchor_same: f64,
    /// Text of a link to another site.
    pub anchor_other: f64,
    /// `<meta name="keywords">`.
    pub meta_keywords: f64,
    /// `<meta name="description">`.
    pub meta_description: f64,
    /// All other visible text.
    pub main: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            url: 2.0,
            heading: 2.0,
            title: 2.0,
            anchor_same: 1.0,
            anchor_other: 0.5,
            meta_keywords: 3.0,
            meta_description: 3.0,
            main: 1.0,
        }
    }
}

/// The features of one page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Features {
    /// The page URL.
    pub url: String,
    /// TDW vector: term → Σ count × tag weight.
    pub tdw: BTreeMap<String, f64>,
    /// Term → occurrences (any place).
    pub tf: BTreeMap<String, u32>,
    /// Sentences in the visible text.
    pub sentences: usize,
}

/// English stop words (function words that carry no topic).
const STOP: &str = "a about above after again against all am an and any are as at be because been \
before being below between both but by can could did do does doing down during each few for from \
further had has have having he her here hers herself him himself his how i if in into is it its \
itself just me more most my myself no nor not now of off on once only or other our ours ourselves \
out over own same she should so some such than that the their theirs them themselves then there \
these they this those through to too under until up very was we were what when where which while \
who whom why will with would you your yours yourself yourselves also may might must shall upon \
us via yet www http https com org net html php htm";

fn stop_words() -> &'static std::collections::HashSet<&'static str> {
    static S: OnceLock<std::collections::HashSet<&'static str>> = OnceLock::new();
    S.get_or_init(|| STOP.split_whitespace().collect())
}

/// The WordNet table (`crates/dedust-content/data/wordnet-synonyms.tsv.gz`, made by `scripts/wordnet_synonyms.py`).
fn synonyms() -> &'static HashMap<String, String> {
    static T: OnceLock<HashMap<String, String>> = OnceLock::new();
    T.get_or_init(|| {
        use std::io::Read;
        let gz: &[u8] = include_bytes!("../data/wordnet-synonyms.tsv.gz");
        let mut text = String::new();
        flate2::read::GzDecoder::new(gz)
            .read_to_string(&mut text)
            .expect("embedded synonym table is valid gzip UTF-8");
        text.lines()
            .filter_map(|l| l.split_once('\t'))
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    })
}

/// A word's shortest WordNet synonym (the word itself when none is shorter).
///
/// ```
/// assert_eq!(dedust_content::tdw::map_word("automobile"), "car");
/// assert_eq!(dedust_content::tdw::map_word("purchase"), "buy");
/// assert_eq!(dedust_content::tdw::map_word("zebra"), "zebra");
/// ```
pub fn map_word(w: &str) -> &str {
    synonyms().get(w).map_or(w, String::as_str)
}

fn stemmer() -> &'static Stemmer {
    static S: OnceLock<Stemmer> = OnceLock::new();
    S.get_or_init(|| Stemmer::create(Algorithm::English))
}

/// The terms of a text: words (letters and digits, with at least one letter, 2+ characters),
/// lower-cased, stop words removed, mapped to the shortest synonym, Porter-stemmed.
///
/// ```
/// assert_eq!(dedust_content::tdw::terms("The Automobiles were running!"), vec!["car", "run"]);
/// ```
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for w in text.split(|c: char| !c.is_alphanumeric()) {
        if w.chars().count() < 2 || !w.chars().any(char::is_alphabetic) {
            continue;
        }
        let w = w.to_lowercase();
        if stop_words().contains(w.as_str()) {
            continue;
        }
        // WordNet lists base forms: try the word, then without a plural `s` / `es`.
        let mapped = [Some(w.as_str()), w.strip_suffix('s'), w.strip_suffix("es")]
            .into_iter()
            .flatten()
            .find_map(|c| synonyms().get(c).map(String::as_str))
            .unwrap_or(&w);
        let stem = stemmer().stem(mapped).into_owned();
        if !stop_words().contains(stem.as_str()) {
            out.push(stem);
        }
    }
    out
}

/// Sentences in a text: terminators `.`, `!`, `?` that follow a letter or digit and end the text
/// or precede white space; text after the last one counts as one more sentence.
///
/// ```
/// assert_eq!(dedust_content::tdw::sentence_count("One. Two! 3.5 is a number? Four"), 4);
/// assert_eq!(dedust_content::tdw::sentence_count(""), 0);
/// ```
pub fn sentence_count(text: &str) -> usize {
    let c: Vec<char> = text.chars().collect();
    let mut n = 0;
    let mut pending = false;
    for i in 0..c.len() {
        if c[i].is_alphanumeric() {
            pending = true;
        }
        if matches!(c[i], '.' | '!' | '?')
            && i > 0
            && c[i - 1].is_alphanumeric()
            && c.get(i + 1).is_none_or(|x| x.is_whitespace())
        {
            n += 1;
            pending = false;
        }
    }
    n + usize::from(pending)
}

/// Registered-ish site of a host: the host without a leading `www.`.
fn site(host: &str) -> &str {
    host.strip_prefix("www.").unwrap_or(host)
}

#[derive(Clone, Copy, PartialEq)]
enum Place {
    Title,
    Heading,
    AnchorSame,
    AnchorOther,
    Skip,
}

/// Extract the features of a page.
///
/// ```
/// let html = r#"<html><head><title>Blue Widgets</title><script>var x = "ignored";</script>
///   <meta name="keywords" content="widget"></head>
///   <body><h1>Widgets</h1><p>Buy a widget. It is blue.</p>
///   <a href="/other">more widgets</a><a href="http://elsewhere.org/">partner</a></body></html>"#;
/// let f = dedust_content::tdw::features("http://shop.example/widgets", html, &Default::default());
/// let term = |w: &str| dedust_content::tdw::terms(w).remove(0); // "widget" maps to WordNet's "gismo"
/// // url 2 + title 2 + meta keywords 3 + heading 2 + main 1 + same-site anchor 1
/// assert_eq!(f.tdw[&term("widget")], 11.0);
/// assert_eq!(f.tdw[&term("partner")], 0.5);
/// assert!(!f.tdw.contains_key(&term("ignored")));
/// // "Buy a widget." "It is blue." and the link text after them
/// assert_eq!(f.sentences, 3);
/// ```
pub fn features(url: &str, html: &str, w: &Weights) -> Features {
    use html5gum::{DefaultEmitter, Token, Tokenizer};
    let mut f = Features {
        url: url.to_string(),
        ..Default::default()
    };
    let base = url::Url::parse(url).ok();
    let own = base
        .as_ref()
        .and_then(|u| u.host_str().map(|h| site(h).to_string()))
        .unwrap_or_default();
    let add = |text: &str, weight: f64, f: &mut Features| {
        for t in terms(text) {
            *f.tdw.entry(t.clone()).or_insert(0.0) += weight;
            *f.tf.entry(t).or_insert(0) += 1;
        }
    };
    // URL words: host labels and path/query words (none with a zero weight: not even counted).
    if let Some(u) = base.as_ref().filter(|_| w.url > 0.0) {
        let mut s = String::new();
        if let Some(h) = u.host_str() {
            s.push_str(h);
        }
        s.push(' ');
        s.push_str(u.path());
        s.push(' ');
        s.push_str(u.query().unwrap_or(""));
        add(&s, w.url, &mut f);
    }
    let mut em = DefaultEmitter::default();
    em.naively_switch_states(true);
    let mut stack: Vec<(Vec<u8>, Place)> = Vec::new();
    let mut visible = String::new();
    for tok in Tokenizer::new_with_emitter(html, em).flatten() {
        match tok {
            Token::StartTag(tag) => {
                let name = tag.name.to_ascii_lowercase();
                let attr = |k: &str| {
                    tag.attributes
                        .get(k.as_bytes())
                        .map(|v| String::from_utf8_lossy(v).into_owned())
                };
                let place = match name.as_slice() {
                    b"script" | b"style" | b"noscript" | b"template" => Some(Place::Skip),
                    b"title" => Some(Place::Title),
                    b"h1" | b"h2" | b"h3" | b"h4" | b"h5" | b"h6" => Some(Place::Heading),
                    b"a" => {
                        let href = attr("href").unwrap_or_default();
                        let target = base.as_ref().and_then(|b| b.join(href.trim()).ok());
                        let same = target
                            .as_ref()
                            .and_then(|t| t.host_str().map(|h| site(h) == own))
                            .unwrap_or(true);
                        Some(if same {
                            Place::AnchorSame
                        } else {
                            Place::AnchorOther
                        })
                    }
                    b"meta" => {
                        let n = attr("name").unwrap_or_default().to_ascii_lowercase();
                        let content = attr("content").unwrap_or_default();
                        match n.as_str() {
                            "keywords" => add(&content, w.meta_keywords, &mut f),
                            "description" => add(&content, w.meta_description, &mut f),
                            _ => {}
                        }
                        None
                    }
                    _ => None,
                };
                if let Some(p) = place {
                    if !tag.self_closing {
                        stack.push((name, p));
                    }
                }
            }
            Token::EndTag(tag) => {
                let name = tag.name.to_ascii_lowercase();
                if let Some(k) = stack.iter().rposition(|(n, _)| *n == name) {
                    stack.truncate(k);
                }
                // Block ends separate sentences and words.
                visible.push(' ');
            }
            Token::String(s) => {
                let text = String::from_utf8_lossy(&s.value).into_owned();
                let places: Vec<Place> = stack.iter().map(|(_, p)| *p).collect();
                if places.contains(&Place::Skip) {
                    continue;
                }
                let weight = if places.contains(&Place::Title) {
                    w.title
                } else if places.contains(&Place::Heading) {
                    w.heading
                } else if places.contains(&Place::AnchorOther) {
                    w.anchor_other
                } else if places.contains(&Place::AnchorSame) {
                    w.anchor_same
                } else {
                    w.main
                };
                if !places.contains(&Place::Title) {
                    visible.push_str(&text);
                }
                add(&text, weight, &mut f);
            }
            _ => {}
        }
    }
    f.sentences = sentence_count(&visible);
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_table() {
        // (html, term, expected TDW weight) with the default weights; the URL adds nothing here.
        let cases = [
            ("<title>zebra</title>", "zebra", 2.0),
            ("<h2>zebra</h2><h6>zebra</h6>", "zebra", 4.0),
            ("<p>zebra zebra</p>", "zebra", 2.0),
            ("<a href='/x'>zebra</a>", "zebra", 1.0),
            ("<a href='https://other.org/'>zebra</a>", "zebra", 0.5),
            ("<a href='http://www.a.org/y'>zebra</a>", "zebra", 1.0),
            ("<meta name='keywords' content='zebra'>", "zebra", 3.0),
            ("<meta name='Description' content='zebra'>", "zebra", 3.0),
            (
                "<style>zebra{}</style><script>zebra()</script><!-- zebra -->",
                "zebra",
                0.0,
            ),
            ("<h1><a href='/'>zebra</a></h1>", "zebra", 2.0),
        ];
        for (html, term, want) in cases {
            let f = features("http://a.org/", html, &Weights::default());
            assert_eq!(f.tdw.get(term).copied().unwrap_or(0.0), want, "{html}");
        }
    }

    #[test]
    fn mapping_stemming_and_stop_words() {
        // (text, terms)
        let cases: [(&str, &[&str]); 5] = [
            ("the and of", &[]),
            ("Running runners ran", &["run", "runner", "ran"]),
            ("automobile car", &["car", "car"]),
            ("purchases", &["buy"]),
            ("x 42 a1", &["a1"]),
        ];
        for (text, want) in cases {
            assert_eq!(terms(text), want, "{text}");
        }
    }

    #[test]
    fn sentence_table() {
        for (text, n) in [
            ("Hello world.", 1),
            ("Hello world", 1),
            ("A. B. C.", 3),
            ("e.g. this", 2),
            ("...", 0),
            ("Version 2.5 is out!", 1),
        ] {
            assert_eq!(sentence_count(text), n, "{text}");
        }
    }

    #[test]
    fn url_words_weigh_two() {
        let f = features("https://zoo.org/zebra/stripes", "", &Weights::default());
        assert_eq!(f.tdw["zebra"], 2.0);
        assert_eq!(f.tdw["stripe"], 2.0);
    }
}
