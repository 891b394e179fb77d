//! Consensus: an alignment graph read breadth-first into classified columns.
//!
//! In: an [`Alignment`]. Out: a [`Consensus`] — one [`Column`] per graph node, in breadth-first
//! topological order from the source nodes (Kahn's algorithm with a FIFO queue, ties by node index),
//! each with the token every sequence has there (or a gap) and its class:
//! *invariant* (one token, no gap), *variant* (several tokens, no gap) or *optional* (a gap).
//!
//! Invariants: every sequence's tokens appear in its row in order; a row has exactly as many
//! non-gap cells as the sequence has tokens.
//!
//! # Complexity
//! `O(|V| + |E| + |V| · n)` for `n` sequences.

use crate::align::Alignment;
use crate::tokenize::TokenKind;
use petgraph::graph::NodeIndex;
use petgraph::Direction;
use std::collections::VecDeque;

/// The class of a consensus column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnClass {
    /// Every sequence has the same token here.
    Invariant,
    /// Every sequence has a token here, not all the same.
    Variant,
    /// Some sequences have no token here.
    Optional,
}

/// One column of the consensus.
#[derive(Debug, Clone)]
pub struct Column {
    /// The alignment node of the column ([`Alignment::node`]).
    pub node: usize,
    /// Token kind of the column.
    pub kind: TokenKind,
    /// Its class.
    pub class: ColumnClass,
    /// Per sequence (input order), its token text, `None` for a gap.
    pub cells: Vec<Option<String>>,
}

/// The consensus of one cluster.
#[derive(Debug, Clone)]
pub struct Consensus {
    /// Columns in breadth-first order.
    pub columns: Vec<Column>,
}

impl Consensus {
    /// Number of sequences.
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.cells.len())
    }

    /// How many sequences fill each column (used to rank canonical candidates).
    pub fn occupancy(&self) -> Vec<usize> {
        self.columns
            .iter()
            .map(|c| c.cells.iter().filter(|x| x.is_some()).count())
            .collect()
    }
}

/// Read an alignment into consensus columns.
///
/// ```
/// use dedust_learn::{align, consensus, tokenize, ColumnClass};
/// let seqs = vec![tokenize("http://h/a?t=1"), tokenize("http://h/a?mode=x&t=1")];
/// let c = consensus(&align(&seqs));
/// let classes: Vec<ColumnClass> = c.columns.iter().map(|c| c.class).collect();
/// use ColumnClass::*;
/// assert_eq!(classes, [Invariant, Invariant, Invariant, Invariant, Optional, Invariant]);
/// ```
pub fn consensus(a: &Alignment) -> Consensus {
    let g = &a.graph;
    let n = a.paths.len();
    let mut indeg: Vec<usize> = g
        .node_indices()
        .map(|v| g.neighbors_directed(v, Direction::Incoming).count())
        .collect();
    let mut queue: VecDeque<NodeIndex> =
        g.node_indices().filter(|v| indeg[v.index()] == 0).collect();
    let mut order = Vec::with_capacity(g.node_count());
    while let Some(v) = queue.pop_front() {
        order.push(v);
        let mut next: Vec<NodeIndex> = g.neighbors_directed(v, Direction::Outgoing).collect();
        next.sort_unstable();
        for w in next {
            indeg[w.index()] -= 1;
            if indeg[w.index()] == 0 {
                queue.push_back(w);
            }
        }
    }
    let columns = order
        .into_iter()
        .map(|v| {
            let node = &g[v];
            let mut cells: Vec<Option<String>> = vec![None; n];
            for (s, t) in &node.tokens {
                cells[*s] = Some(t.clone());
            }
            let gap = cells.iter().any(|c| c.is_none());
            let first = cells.iter().flatten().next();
            let same = cells.iter().flatten().all(|c| Some(c) == first);
            let class = if gap {
                ColumnClass::Optional
            } else if same {
                ColumnClass::Invariant
            } else {
                ColumnClass::Variant
            };
            Column {
                node: v.index(),
                kind: node.kind,
                class,
                cells,
            }
        })
        .collect();
    Consensus { columns }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{align, tokenize};
    use ColumnClass::*;

    #[test]
    fn classes_table() {
        let cases: &[(&[&str], &[ColumnClass])] = &[
            (
                &["http://h/a", "http://h/a"],
                &[Invariant, Invariant, Invariant, Invariant],
            ),
            (
                &["http://h/a", "https://h/a"],
                &[Variant, Invariant, Invariant, Invariant],
            ),
            (
                &["http://www.h/a", "http://h/a"],
                &[Invariant, Optional, Invariant, Invariant, Invariant],
            ),
            (
                &["http://h/a?p=1&t=2", "http://h/a?p=3&t=2", "http://h/a?t=2"],
                &[
                    Invariant, Invariant, Invariant, Invariant, Optional, Invariant,
                ],
            ),
        ];
        for (urls, want) in cases {
            let seqs: Vec<_> = urls.iter().map(|u| tokenize(u)).collect();
            let c = consensus(&align(&seqs));
            let got: Vec<ColumnClass> = c.columns.iter().map(|c| c.class).collect();
            assert_eq!(&got, want, "{urls:?}");
            for (i, s) in seqs.iter().enumerate() {
                let row: Vec<&str> = c
                    .columns
                    .iter()
                    .filter_map(|col| col.cells[i].as_deref())
                    .collect();
                let toks: Vec<&str> = s.0.iter().map(|t| t.text.as_str()).collect();
                assert_eq!(row, toks, "row {i} of {urls:?}");
            }
        }
    }
}
