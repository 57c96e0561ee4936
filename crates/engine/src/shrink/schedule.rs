//! The shrink schedule: which passes run, in what order, and what each did.
//!
//! A round runs every pass once. Rounds of the cheap passes repeat until one
//! improves nothing; then one polish round adds the costly moves (see
//! [`Shrinker::shrink`](super::Shrinker::shrink)). Every pass keeps
//! statistics (runs, test cases, improvements, choices deleted) that a
//! caller can show at debug verbosity.
//!
//! The order adapts, as Hypothesis' shrinker's does: after each round the
//! passes are re-sorted by what they did in it, those that deleted choices
//! first, then those that improved the example without deleting, then those
//! that did nothing, keeping the previous order among equals. A deletion
//! makes every later pass cheaper (fewer choices to try), so the passes that
//! delete on this example run before the ones that only polish it.

use super::Shrinker;
use super::passes::{
    characters, choices, deletion, duplicates, element_pairs, float_pairs, regeneration,
    reordering, reshaping, simplification,
};

/// A shrink pass: a name and what it does to the shrinker's best example.
#[derive(Clone, Copy)]
pub(super) struct ShrinkPass {
    /// The name statistics and debug output use.
    pub name: &'static str,
    /// Improves the shrinker's best example in place.
    pub run: fn(&mut Shrinker),
}

/// Every pass, in the starting order (Hypothesis's: simplest spans,
/// deletions, then single choices and pairs).
pub(super) const PASSES: [ShrinkPass; 22] = [
    ShrinkPass {
        name: "remove_discarded",
        run: deletion::remove_discarded,
    },
    ShrinkPass {
        name: "simplify_spans",
        run: simplification::simplify_spans,
    },
    ShrinkPass {
        name: "delete_spans",
        run: deletion::delete_spans,
    },
    ShrinkPass {
        name: "delete_chunks",
        run: deletion::delete_chunks,
    },
    ShrinkPass {
        name: "lower_integers_together",
        run: choices::lower_integers_together,
    },
    ShrinkPass {
        name: "shrink_duplicated_values",
        run: duplicates::shrink_duplicated_values,
    },
    ShrinkPass {
        name: "lower_duplicated_characters",
        run: characters::lower_duplicated_characters,
    },
    ShrinkPass {
        name: "minimize_choices",
        run: choices::minimize_choices,
    },
    ShrinkPass {
        name: "lower_pairs_together",
        run: choices::lower_pairs_together,
    },
    ShrinkPass {
        name: "lower_and_delete",
        run: deletion::lower_and_delete,
    },
    ShrinkPass {
        name: "delete_element_pairs",
        run: element_pairs::delete_element_pairs,
    },
    ShrinkPass {
        name: "merge_collections",
        run: deletion::merge_collections,
    },
    ShrinkPass {
        name: "lift_spans",
        run: reordering::lift_spans,
    },
    ShrinkPass {
        name: "sort_sibling_spans",
        run: reordering::sort_sibling_spans,
    },
    ShrinkPass {
        name: "rotate_sibling_spans",
        run: reordering::rotate_sibling_spans,
    },
    ShrinkPass {
        name: "swap_adjacent_blocks",
        run: reordering::swap_adjacent_blocks,
    },
    ShrinkPass {
        name: "redistribute_pairs",
        run: choices::redistribute_pairs,
    },
    ShrinkPass {
        name: "scale_float_pairs",
        run: float_pairs::scale_float_pairs,
    },
    ShrinkPass {
        name: "raise_to_shorten",
        run: reshaping::raise_to_shorten,
    },
    ShrinkPass {
        name: "lower_and_regenerate",
        run: regeneration::lower_and_regenerate,
    },
    ShrinkPass {
        name: "divide_integers",
        run: choices::divide_integers,
    },
    ShrinkPass {
        name: "simplify_letter_case",
        run: characters::simplify_letter_case,
    },
];

/// What one shrink pass did, summed over the rounds it ran in.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PassStatistics {
    /// The pass's name.
    pub name: &'static str,
    /// Rounds it ran in.
    pub runs: u64,
    /// Test cases it ran.
    pub calls: u64,
    /// Candidates of its that became the best example.
    pub improvements: u64,
    /// Choices its improvements removed from the example.
    pub choices_deleted: u64,
}

impl PassStatistics {
    /// Adds another shrink's figures for the same pass.
    pub fn add(&mut self, other: &PassStatistics) {
        self.runs += other.runs;
        self.calls += other.calls;
        self.improvements += other.improvements;
        self.choices_deleted += other.choices_deleted;
    }
}

impl std::fmt::Display for PassStatistics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} runs, {} test cases, {} improvements, {} choices deleted",
            self.name, self.runs, self.calls, self.improvements, self.choices_deleted
        )
    }
}

/// Fresh statistics for every pass, in [`PASSES`] order.
pub(super) fn new_statistics() -> Vec<PassStatistics> {
    PASSES
        .iter()
        .map(|pass| PassStatistics {
            name: pass.name,
            ..PassStatistics::default()
        })
        .collect()
}

/// What a pass did in one round, best first: the key the order is sorted by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum RoundOutcome {
    /// The example lost choices.
    Deleted,
    /// The example became smaller without losing choices.
    Improved,
    /// Nothing changed.
    Nothing,
}

/// The next round's order: a stable sort of `order` by each pass' outcome in
/// this round (`outcomes` is indexed like [`PASSES`]).
pub(super) fn reorder(order: &mut [usize], outcomes: &[RoundOutcome]) {
    order.sort_by_key(|&index| outcomes[index]);
}

/// One round: every pass once, in the shrinker's current order; then the
/// order is adapted to what each pass did.
pub(super) fn run_round(s: &mut Shrinker) {
    let mut outcomes = vec![RoundOutcome::Nothing; PASSES.len()];
    for k in 0..s.order.len() {
        let index = s.order[k];
        let pass = PASSES[index];
        let (calls, improvements, length) = (s.calls, s.improvements, s.best.nodes.len());
        (pass.run)(s);
        outcomes[index] = if s.best.nodes.len() < length {
            RoundOutcome::Deleted
        } else if s.improvements > improvements {
            RoundOutcome::Improved
        } else {
            RoundOutcome::Nothing
        };
        let statistics = &mut s.statistics[index];
        statistics.runs += 1;
        statistics.calls += (s.calls - calls) as u64;
        statistics.improvements += (s.improvements - improvements) as u64;
        statistics.choices_deleted += length.saturating_sub(s.best.nodes.len()) as u64;
        if s.debug != super::Debug::Off {
            eprintln!(
                "{}: {} calls, {} improvements, best {:?}",
                pass.name,
                s.calls - calls,
                s.improvements - improvements,
                s.best.choices()
            );
        }
    }
    reorder(&mut s.order, &outcomes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_that_deleted_run_first_then_those_that_improved() {
        let mut order: Vec<usize> = (0..PASSES.len()).collect();
        let mut outcomes = vec![RoundOutcome::Nothing; PASSES.len()];
        outcomes[7] = RoundOutcome::Deleted;
        outcomes[3] = RoundOutcome::Improved;
        outcomes[9] = RoundOutcome::Deleted;
        outcomes[0] = RoundOutcome::Improved;
        reorder(&mut order, &outcomes);
        let mut expected = vec![7, 9, 0, 3];
        expected.extend((0..PASSES.len()).filter(|i| ![7, 9, 0, 3].contains(i)));
        assert_eq!(order, expected);
    }

    #[test]
    fn the_sort_is_stable_across_rounds() {
        // Equals keep the order the previous round left them in.
        let mut order = vec![4, 2, 0, 1, 3];
        order.extend(5..PASSES.len());
        let mut outcomes = vec![RoundOutcome::Nothing; PASSES.len()];
        outcomes[0] = RoundOutcome::Deleted;
        outcomes[4] = RoundOutcome::Deleted;
        reorder(&mut order, &outcomes);
        let mut expected = vec![4, 0, 2, 1, 3];
        expected.extend(5..PASSES.len());
        assert_eq!(order, expected);
    }
}
