//! Align: the token sequences of one duplicate cluster become a partial-order alignment graph.
//!
//! In: the tokenized URLs of one cluster. Out: an [`Alignment`] — a directed acyclic `petgraph`
//! graph whose nodes hold the tokens that were aligned together, and for every input sequence the
//! path of nodes it visits. Method (partial-order alignment, as in the graph-based DUST approach):
//! the sequences are sorted by token count, longest first (ties: text order); the first becomes the
//! backbone path; each further sequence is aligned to the whole graph by dynamic programming over the
//! nodes in topological order; a token matched to a node joins it, an unmatched token becomes a new
//! node, and a node that a sequence skips is a gap of that sequence.
//!
//! Scores: identical token 3, same parameter name with another value 2, same kind with other text
//! (word, number, host label, scheme, port) 1; punctuation, slashes and different kinds never match;
//! gaps cost nothing, so the alignment is a weighted longest common subsequence against the graph.
//!
//! Invariants: the graph is acyclic; every path follows edges; each sequence's path visits its tokens
//! in order, one node per token; a node holds tokens of one [`TokenKind`] only.
//!
//! # Complexity
//! Aligning one sequence of length `L` costs `O((|V| + |E|) · L)` time and `O(|V| · L)` memory, so a
//! cluster of `n` URLs costs `O(n · (|V| + |E|) · L)`. `|V|` is bounded by the total token count and
//! stays close to `L` for real clusters, whose URLs share most tokens.

use crate::tokenize::{Token, TokenKind, Tokens};
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::Direction;

/// One node of the alignment graph: tokens aligned together.
#[derive(Debug, Clone)]
pub struct AlignNode {
    /// The kind shared by all tokens of the node.
    pub kind: TokenKind,
    /// `(sequence index, token text)` for every sequence passing through the node.
    pub tokens: Vec<(usize, String)>,
}

impl AlignNode {
    /// The distinct texts of the node, in first-seen order.
    pub fn texts(&self) -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        for (_, t) in &self.tokens {
            if !v.contains(&t.as_str()) {
                v.push(t);
            }
        }
        v
    }
}

/// The alignment of one cluster.
#[derive(Debug, Clone)]
pub struct Alignment {
    /// The partial-order graph; edges follow token order.
    pub(crate) graph: DiGraph<AlignNode, ()>,
    /// For every input sequence (input order), the nodes it visits, one per token.
    pub(crate) paths: Vec<Vec<NodeIndex>>,
}

impl Alignment {
    /// Nodes of the graph (aligned token positions); ids are `0..node_count()`.
    pub fn node_count(&self) -> usize {
        self.graph.node_count()
    }

    /// Node `id`: its token kind and the tokens aligned there.
    ///
    /// # Panics
    /// When `id >= node_count()`.
    pub fn node(&self, id: usize) -> &AlignNode {
        &self.graph[NodeIndex::new(id)]
    }

    /// Input sequences aligned.
    pub fn sequences(&self) -> usize {
        self.paths.len()
    }

    /// The node ids sequence `seq` (input order) visits, one per token.
    pub fn path(&self, seq: usize) -> Vec<usize> {
        self.paths[seq].iter().map(|v| v.index()).collect()
    }
}

fn score(node: &AlignNode, tok: &Token) -> Option<i32> {
    if node.kind != tok.kind {
        return None;
    }
    if node.tokens.iter().any(|(_, t)| *t == tok.text) {
        return Some(3);
    }
    match tok.kind {
        TokenKind::Param => {
            let name = tok.param_name();
            let (_, first) = &node.tokens[0];
            (crate::base::param_name(first) == name).then_some(2)
        }
        TokenKind::Punct | TokenKind::Slash => None,
        _ => Some(1),
    }
}

#[derive(Clone, Copy)]
enum Step {
    Start,
    Match(usize),
    Skip(usize),
    Insert,
}

/// Align the token sequences of one cluster.
///
/// ```
/// use dedust_learn::{align, tokenize};
/// let seqs = vec![
///     tokenize("https://h.org/show.php?mode=hybrid&t=1"),
///     tokenize("https://h.org/show.php?t=1"),
/// ];
/// let a = align(&seqs);
/// // The longer URL is the backbone: 9 tokens, one node each; the shorter one skips `mode`.
/// assert_eq!(a.node_count(), 9);
/// assert_eq!(a.path(1).len(), 8);
/// ```
///
/// # Complexity
/// `O(n · (|V| + |E|) · L)` for `n` sequences of length at most `L` (see the module docs).
pub fn align(seqs: &[Tokens]) -> Alignment {
    let mut order: Vec<usize> = (0..seqs.len()).collect();
    order.sort_by(|&a, &b| {
        seqs[b]
            .len()
            .cmp(&seqs[a].len())
            .then_with(|| seqs[a].cmp(&seqs[b]))
    });
    let mut graph: DiGraph<AlignNode, ()> = DiGraph::new();
    let mut paths: Vec<Vec<NodeIndex>> = vec![Vec::new(); seqs.len()];
    for &si in &order {
        let path = align_one(&mut graph, si, &seqs[si].0);
        paths[si] = path;
    }
    Alignment { graph, paths }
}

/// Align one sequence to the graph and merge it in; returns its path.
fn align_one(graph: &mut DiGraph<AlignNode, ()>, si: usize, seq: &[Token]) -> Vec<NodeIndex> {
    let topo = petgraph::algo::toposort(&*graph, None).expect("alignment graph is acyclic");
    let n = topo.len();
    let m = seq.len();
    let mut row_of = vec![0usize; graph.node_count()];
    for (r, v) in topo.iter().enumerate() {
        row_of[v.index()] = r + 1;
    }
    let w = m + 1;
    let mut dp = vec![i32::MIN; (n + 1) * w];
    let mut bp = vec![Step::Start; (n + 1) * w];
    for j in 0..=m {
        dp[j] = 0;
        bp[j] = if j == 0 { Step::Start } else { Step::Insert };
    }
    let mut preds: Vec<usize> = Vec::new();
    for (r0, &v) in topo.iter().enumerate() {
        let r = r0 + 1;
        preds.clear();
        preds.extend(
            graph
                .neighbors_directed(v, Direction::Incoming)
                .map(|p| row_of[p.index()]),
        );
        if preds.is_empty() {
            preds.push(0);
        }
        preds.sort_unstable();
        let node = &graph[v];
        for j in 0..=m {
            let mut best = i32::MIN;
            let mut step = Step::Start;
            if j > 0 {
                if let Some(s) = score(node, &seq[j - 1]) {
                    for &p in &preds {
                        let prev = dp[p * w + j - 1];
                        if prev != i32::MIN && prev + s > best {
                            best = prev + s;
                            step = Step::Match(p);
                        }
                    }
                }
            }
            for &p in &preds {
                let prev = dp[p * w + j];
                if prev > best {
                    best = prev;
                    step = Step::Skip(p);
                }
            }
            if j > 0 {
                let prev = dp[r * w + j - 1];
                if prev > best {
                    best = prev;
                    step = Step::Insert;
                }
            }
            dp[r * w + j] = best;
            bp[r * w + j] = step;
        }
    }
    // Best end row for the full sequence (ties: the earliest row, i.e. fewest skipped tails).
    let mut end = 0;
    for r in 1..=n {
        if dp[r * w + m] > dp[end * w + m] {
            end = r;
        }
    }
    let mut matched: Vec<Option<NodeIndex>> = vec![None; m];
    let (mut r, mut j) = (end, m);
    while r > 0 || j > 0 {
        match bp[r * w + j] {
            Step::Match(p) => {
                matched[j - 1] = Some(topo[r - 1]);
                r = p;
                j -= 1;
            }
            Step::Skip(p) => r = p,
            Step::Insert => j -= 1,
            Step::Start => break,
        }
    }
    let mut path = Vec::with_capacity(m);
    for (j, tok) in seq.iter().enumerate() {
        let v = match matched[j] {
            Some(v) => {
                graph[v].tokens.push((si, tok.text.clone()));
                v
            }
            None => graph.add_node(AlignNode {
                kind: tok.kind,
                tokens: vec![(si, tok.text.clone())],
            }),
        };
        if let Some(&prev) = path.last() {
            if graph.find_edge(prev, v).is_none() {
                graph.add_edge(prev, v, ());
            }
        }
        path.push(v);
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenize::tokenize;

    /// Node texts along each sequence's path, with `-` where a backbone node is skipped.
    fn columns(urls: &[&str]) -> (usize, Vec<Vec<String>>) {
        let seqs: Vec<Tokens> = urls.iter().map(|u| tokenize(u)).collect();
        let a = align(&seqs);
        assert!(!petgraph::algo::is_cyclic_directed(&a.graph));
        let topo = petgraph::algo::toposort(&a.graph, None).unwrap();
        let rows = a
            .paths
            .iter()
            .enumerate()
            .map(|(row, p)| {
                topo.iter()
                    .map(|v| match p.iter().position(|x| x == v) {
                        Some(_) => a.graph[*v]
                            .tokens
                            .iter()
                            .find(|(s, _)| *s == row)
                            .map(|(_, t)| t.clone())
                            .unwrap(),
                        None => "-".into(),
                    })
                    .collect()
            })
            .collect();
        (a.graph.node_count(), rows)
    }

    #[test]
    fn gaps_and_variants() {
        // (urls, expected node count, expected rows in topological order)
        let cases: &[(&[&str], usize, &[&str])] = &[
            (
                &["http://h/a?t=1", "http://h/a?mode=x&t=1"],
                6,
                &["http h / a - t=1", "http h / a mode=x t=1"],
            ),
            (
                // Same parameter name with another value: one node (a variant column).
                &["http://h/a?p=1&t=9", "http://h/a?p=2&t=9"],
                6,
                &["http h / a p=1 t=9", "http h / a p=2 t=9"],
            ),
            (
                // Host alias: `www` is a gap of the bare host; scheme is a variant.
                &["https://www.h.org/x", "http://h.org/x"],
                6,
                &["https www h org / x", "http - h org / x"],
            ),
            (
                // Trailing slash is an optional column.
                &["http://h/g.php/", "http://h/g.php"],
                7,
                &["http h / g . php /", "http h / g . php -"],
            ),
        ];
        for (urls, nodes, rows) in cases {
            let (n, got) = columns(urls);
            assert_eq!(n, *nodes, "{urls:?}");
            let got: Vec<String> = got.iter().map(|r| r.join(" ")).collect();
            let want: Vec<String> = rows.iter().map(|s| s.to_string()).collect();
            assert_eq!(got, want, "{urls:?}");
        }
    }

    #[test]
    fn reordering_makes_parallel_nodes() {
        // Different words in the same position align as a variant (score 1) rather than two gaps.
        let seqs = vec![
            tokenize("http://h/forum.php?s=1"),
            tokenize("http://h/index.php?s=1"),
        ];
        let a = align(&seqs);
        assert_eq!(a.graph.node_count(), 7);
        let word_nodes: Vec<_> = a
            .graph
            .node_indices()
            .filter(|v| a.graph[*v].texts() == ["forum", "index"])
            .collect();
        assert_eq!(word_nodes.len(), 1);
    }

    #[test]
    fn paths_follow_edges() {
        let urls = [
            "https://ubuntuforums.org/showthread.php?t=2396025&p=13788960&highlight=",
            "https://ubuntuforums.org/showthread.php?p=13782566",
            "https://ubuntuforums.org/showthread.php?t=2396025",
            "https://ubuntuforums.org/showthread.php?mode=hybrid&t=2396025",
        ];
        let seqs: Vec<Tokens> = urls.iter().map(|u| tokenize(u)).collect();
        let a = align(&seqs);
        for (i, p) in a.paths.iter().enumerate() {
            assert_eq!(p.len(), seqs[i].len());
            for w in p.windows(2) {
                assert!(a.graph.find_edge(w[0], w[1]).is_some());
            }
        }
    }
}
