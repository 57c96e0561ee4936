//! Independent streams of one test case: a test that draws from several
//! threads at once gives each thread its own stream (libhegel's
//! `hegel_test_case_clone`), so that what each thread draws depends only on
//! that thread's own calls, never on how the threads interleaved.
//!
//! A stream is a [`TestData`] of its own, forked from its parent's at a
//! point in the parent's choices ([`TestData::fork_stream`]) and spliced
//! back there when the test case ends ([`TestData::join_stream`]). The
//! test case's choice sequence is then one sequence, which replays,
//! shrinks and is stored like any other: at the fork point, a forced
//! integer choice (the *marker*) holds the number of choices the stream
//! made, and those choices follow it, under a span labelled
//! [`labels::STREAM`](super::labels::STREAM). Replaying the sequence, the
//! fork reads the marker from the prefix and hands the stream exactly
//! that many choices, so every stream replays its own choices whatever
//! the timing, and streams forked from streams nest the same way.
//!
//! The marker is forced so that the shrinker never edits it on its own;
//! deleting the stream's span removes the marker with the choices it
//! counts.

use super::{Mode, Nodes, Span, StopTest, TestData, labels};
use crate::choice::{ChoiceNode, ChoiceValue, Constraints, IntegerConstraints};

/// The marker's constraints: a count of choices.
const MARKER: IntegerConstraints = IntegerConstraints {
    min: Some(0),
    max: None,
    shrink_towards: 0,
};

impl TestData {
    /// Starts an independent stream here: records the marker and returns
    /// the stream's own data. Its prefix is the choices the marker counts
    /// in this test case's prefix (none past the prefix); it generates from
    /// a random source split from this one's, or replays simplest values
    /// when this one does. Its budget is what this one has left.
    ///
    /// Join it back with [`TestData::join_stream`] at the returned
    /// position once the test case is over.
    pub fn fork_stream(&mut self) -> Result<(usize, TestData), StopTest> {
        if self.status.is_some() {
            return Err(StopTest);
        }
        let at = self.nodes.len();
        if at >= self.max_choices {
            self.conclude(super::Status::Overrun, None);
            return Err(StopTest);
        }
        let recorded = match self.prefix.get(at) {
            None => 0,
            Some(ChoiceValue::Integer(n)) if *n >= 0 => *n,
            Some(_) => {
                self.misaligned = true;
                0
            }
        };
        let available = self.prefix.len().saturating_sub(at + 1);
        let count = usize::try_from(recorded).map_or(available, |n| n.min(available));
        let prefix: Vec<ChoiceValue> = if count == 0 {
            Vec::new()
        } else {
            self.prefix.drain(at + 1..at + 1 + count).collect()
        };
        let marker = ChoiceNode {
            constraints: Constraints::integer(MARKER),
            value: ChoiceValue::Integer(0),
            forced: true,
        };
        self.length += marker.value.serialized_size();
        self.nodes.push(marker);
        let mode = match &mut self.mode {
            Mode::Generate(source) => Mode::Generate(source.split()),
            Mode::Replay => Mode::Replay,
            Mode::ReplayFar => Mode::ReplayFar,
        };
        let mut stream = TestData::new(prefix, mode, self.max_choices - self.nodes.len());
        stream.max_length = self.max_length.saturating_sub(self.length);
        Ok((at, stream))
    }

    /// Splices `stream`, forked at `at` by [`TestData::fork_stream`], back
    /// into this test case's choices ([`TestData::join_streams`] for one).
    pub fn join_stream(&mut self, at: usize, stream: TestData) {
        self.join_streams(vec![(at, stream)]);
    }

    /// Splices the streams forked from this one back into its choices, in
    /// one pass whatever their number: each marker counts its stream's
    /// choices, which follow it under a [`labels::STREAM`] span, and the
    /// streams' spans, targets, misalignment and nesting too deep become
    /// this test case's.
    /// A stream's own streams must be joined into it first. Positions that
    /// are not forks of this test case are ignored.
    pub fn join_streams(&mut self, mut streams: Vec<(usize, TestData)>) {
        self.too_deep |= streams.iter().any(|(_, stream)| stream.too_deep);
        streams.retain(|(at, _)| *at < self.nodes.len());
        if streams.is_empty() {
            return;
        }
        streams.sort_by_key(|(at, _)| *at);
        // How many spans cover each position, for the streams' depths.
        let n = self.nodes.len();
        let mut open = vec![0isize; n + 1];
        for span in &self.spans {
            if span.start < n {
                open[span.start] += 1;
                if span.end <= n {
                    open[span.end] -= 1;
                }
            }
        }
        let mut covering = Vec::with_capacity(n);
        let mut depth = 0isize;
        for delta in &open[..n] {
            depth += delta;
            covering.push(depth.max(0) as usize);
        }
        // Where each fork's stream goes, and the shift of later positions.
        let forks: Vec<(usize, usize)> = streams
            .iter()
            .map(|(at, stream)| (*at, stream.nodes.len()))
            .collect();
        // Choices of the streams forked before each fork, then in all.
        let mut inserted = Vec::with_capacity(forks.len() + 1);
        inserted.push(0usize);
        for (_, count) in &forks {
            inserted.push(inserted[inserted.len() - 1] + count);
        }
        let shift = |position: usize| -> usize {
            if position == usize::MAX {
                return position;
            }
            position + inserted[forks.partition_point(|(at, _)| *at < position)]
        };
        let mut blocks: Vec<Vec<Span>> = Vec::with_capacity(streams.len());
        let mut nodes = Vec::with_capacity(n + forks.iter().map(|(_, c)| c).sum::<usize>());
        let mut old = std::mem::take(&mut self.nodes)
            .into_vec()
            .into_iter()
            .enumerate();
        for (at, mut stream) in streams {
            for (i, node) in old.by_ref() {
                nodes.push(node);
                if i == at {
                    break;
                }
            }
            let count = stream.nodes.len();
            let marker = nodes.len() - 1;
            nodes[marker].value = ChoiceValue::Integer(count as i128);
            let depth = covering[at];
            let mut block = vec![Span {
                label: labels::STREAM,
                start: marker,
                end: marker + 1 + count,
                depth,
                discarded: false,
            }];
            block.extend(stream.spans.drain(..).map(|s| Span {
                start: s.start + marker + 1,
                end: s.end.min(count) + marker + 1,
                depth: s.depth + depth + 1,
                ..s
            }));
            blocks.push(block);
            nodes.append(&mut stream.nodes);
            self.length += stream.length;
            self.misaligned |= stream.misaligned;
            self.target_observations
                .append(&mut stream.target_observations);
        }
        nodes.extend(old.map(|(_, node)| node));
        self.nodes = Nodes::from_vec(nodes);
        // Each stream's spans go where spans opened after its fork begin.
        let mut spans =
            Vec::with_capacity(self.spans.len() + blocks.iter().map(Vec::len).sum::<usize>());
        let mut pending = forks.iter().map(|(at, _)| *at).zip(blocks).peekable();
        // Where each of this test case's spans lands among them all: the
        // spans still open are found by index, and must stay found (a test
        // case concluded after the join closes them).
        let mut moved_to = Vec::with_capacity(self.spans.len());
        for mut span in std::mem::take(&mut self.spans) {
            while let Some((_, block)) = pending.next_if(|(at, _)| span.start > *at) {
                spans.extend(block);
            }
            span.start = shift(span.start);
            span.end = shift(span.end);
            moved_to.push(spans.len());
            spans.push(span);
        }
        spans.extend(pending.flat_map(|(_, block)| block));
        self.spans = spans;
        for open in &mut self.open_spans {
            *open = moved_to[*open];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::Source;

    /// A test case of one stream forked after one choice, each drawing
    /// `own` and `forked` integers; the stream draws first, as a thread
    /// scheduled first would.
    fn program(mut root: TestData, own: usize, forked: usize) -> (TestData, Vec<i128>, Vec<i128>) {
        let c = IntegerConstraints::bounded(0, 1000);
        let first = root.draw_integer(c).unwrap();
        let (at, mut stream) = root.fork_stream().unwrap();
        let theirs: Vec<i128> = (0..forked)
            .map(|_| stream.draw_integer(c).unwrap())
            .collect();
        let mut mine = vec![first];
        mine.extend((1..own).map(|_| root.draw_integer(c).unwrap()));
        root.join_stream(at, stream);
        root.conclude(crate::Status::Valid, None);
        (root, mine, theirs)
    }

    /// Strings (whose prefix values a replay moves into its choices, not
    /// copies, leaving a placeholder behind) drawn before a fork, in the
    /// stream and after it, replay to the same values: neither the fork
    /// nor a later draw reads the prefix at a choice already made.
    #[test]
    fn strings_around_a_fork_replay_to_the_same_values() {
        let alphabet =
            std::sync::Arc::new(crate::charset::CharSet::from_intervals(vec![(0x61, 0x7a)]));
        let size = crate::choice::SizeConstraints {
            min_size: 1,
            max_size: 5,
        };
        let draw = |data: &mut TestData| -> Vec<Vec<u32>> {
            let mut out = vec![data.draw_string(alphabet.clone(), size).unwrap()];
            let (at, mut stream) = data.fork_stream().unwrap();
            out.push(stream.draw_string(alphabet.clone(), size).unwrap());
            out.push(data.draw_string(alphabet.clone(), size).unwrap());
            let (inner_at, mut inner) = stream.fork_stream().unwrap();
            out.push(inner.draw_string(alphabet.clone(), size).unwrap());
            out.push(stream.draw_string(alphabet.clone(), size).unwrap());
            stream.join_stream(inner_at, inner);
            data.join_stream(at, stream);
            data.conclude(crate::Status::Valid, None);
            out
        };
        for seed in 0..if cfg!(miri) { 2 } else { 20 } {
            let mut first = TestData::generating(Vec::new(), Source::from_seed(seed), 100);
            let values = draw(&mut first);
            let choices = first.choices();
            let mut again = TestData::replaying(choices.clone(), 100);
            assert_eq!(draw(&mut again), values, "seed {seed}");
            assert_eq!(again.choices(), choices);
            assert!(!again.misaligned);
        }
    }

    #[test]
    fn a_joined_stream_replays_to_the_same_values_whatever_drew_first() {
        for seed in 0..20 {
            let generated = TestData::generating(Vec::new(), Source::from_seed(seed), 100);
            let (data, mine, theirs) = program(generated, 3, 2);
            let choices = data.choices();
            // One choice, the marker (2), the stream's two, the root's two.
            assert_eq!(choices.len(), 6);
            assert_eq!(choices[1], ChoiceValue::Integer(2));
            assert!(data.nodes[1].forced);
            let (again, mine_again, theirs_again) =
                program(TestData::replaying(choices.clone(), 100), 3, 2);
            assert_eq!((mine_again, theirs_again), (mine, theirs), "seed {seed}");
            assert_eq!(again.choices(), choices);
            assert!(!again.misaligned);
        }
    }

    #[test]
    fn the_stream_is_a_span_over_its_marker_and_choices() {
        let generated = TestData::generating(Vec::new(), Source::from_seed(1), 100);
        let (data, _, _) = program(generated, 2, 3);
        let stream = data
            .spans
            .iter()
            .find(|s| s.label == labels::STREAM)
            .unwrap();
        assert_eq!((stream.start, stream.end), (1, 5));
        // Deleting the span's choices leaves a test case without the stream.
        let mut choices = data.choices();
        choices.drain(1..5);
        let (shorter, _, theirs) = program(TestData::replaying(choices, 100), 2, 3);
        assert_eq!(theirs, [0, 0, 0], "simplest values past the prefix");
        assert!(!shorter.misaligned || shorter.choices().len() == 6);
    }

    #[test]
    fn streams_share_the_budget_left_at_the_fork() {
        let mut root = TestData::replaying(Vec::new(), 5);
        root.draw_boolean(0.5).unwrap();
        let (_, mut stream) = root.fork_stream().unwrap();
        // Five choices in all: one, the marker, then three.
        for _ in 0..3 {
            stream.draw_boolean(0.5).unwrap();
        }
        assert_eq!(stream.draw_boolean(0.5), Err(StopTest));
        assert_eq!(stream.status, Some(crate::Status::Overrun));
    }

    /// A test case that ends inside a span (a test failing mid-value) is
    /// joined, then concluded: the span still open is closed at the end,
    /// and the stream's span, joined before it, keeps its own end.
    #[test]
    fn a_span_open_at_the_join_is_closed_in_its_place() {
        let c = IntegerConstraints::bounded(0, 1000);
        let mut root = TestData::replaying(Vec::new(), 100);
        let (at, mut stream) = root.fork_stream().unwrap();
        stream.start_span(3);
        stream.draw_integer(c).unwrap();
        stream.stop_span(false);
        root.start_span(5);
        root.draw_integer(c).unwrap();
        root.draw_integer(c).unwrap();
        root.join_stream(at, stream);
        root.conclude(crate::Status::Interesting, None);
        let ends = |label| {
            root.spans
                .iter()
                .filter(|s| s.label == label)
                .map(|s| (s.start, s.end))
                .collect::<Vec<_>>()
        };
        // The marker and the stream's choice, then the root's two.
        assert_eq!(ends(labels::STREAM), [(0, 2)]);
        assert_eq!(ends(3), [(1, 2)]);
        assert_eq!(ends(5), [(2, 4)]);
    }

    #[test]
    fn the_shrinker_deletes_inside_a_stream() {
        use crate::shrink::{Example, Shrinker};
        // The root draws a number, forks a stream that draws a list, then
        // draws another; the test fails when the list's last value is 10 or
        // more and the root's second number 5 or more. The minimal failure
        // is the list [10] between 0 and 5: the elements before the last go
        // only by deletions inside the stream, which must leave the root's
        // number where it was.
        let test = |choices: Vec<ChoiceValue>, generate: Option<u64>| -> TestData {
            let mut root = match generate {
                Some(seed) => TestData::generating(choices, Source::from_seed(seed), 1000),
                None => TestData::replaying(choices, 1000),
            };
            let c = IntegerConstraints::bounded(0, 100);
            let run = |root: &mut TestData| -> Result<bool, StopTest> {
                root.draw_integer(c)?;
                let (at, mut stream) = root.fork_stream()?;
                let mut big = false;
                while stream.draw_boolean(0.9)? {
                    stream.start_span(7);
                    big = stream.draw_integer(c)? >= 10;
                    stream.stop_span(false);
                }
                let after = root.draw_integer(c)?;
                root.join_stream(at, stream);
                Ok(big && after >= 5)
            };
            let status = match run(&mut root) {
                Ok(true) => crate::Status::Interesting,
                Ok(false) => crate::Status::Valid,
                Err(StopTest) => crate::Status::Overrun,
            };
            root.conclude(status, Some("big".into()));
            root
        };
        let failing = (0..100)
            .map(|seed| test(Vec::new(), Some(seed)))
            .find(|data| {
                data.status == Some(crate::Status::Interesting)
                    && matches!(data.choices()[1], ChoiceValue::Integer(n) if n > 4)
            })
            .unwrap();
        let mut replay = |choices: Vec<ChoiceValue>| test(choices, None);
        let mut shrinker = Shrinker::new(&mut replay, Example::from_data(&failing), 10_000);
        shrinker.shrink();
        let i = ChoiceValue::Integer;
        let b = ChoiceValue::Boolean;
        assert_eq!(
            shrinker.best.choices(),
            [i(0), i(3), b(true), i(10), b(false), i(5)]
        );
    }

    #[test]
    fn nested_streams_join_innermost_first() {
        let c = IntegerConstraints::bounded(0, 1000);
        let run = |mut root: TestData| {
            let (at, mut child) = root.fork_stream().unwrap();
            let a = child.draw_integer(c).unwrap();
            let (inner_at, mut grandchild) = child.fork_stream().unwrap();
            let b = grandchild.draw_integer(c).unwrap();
            let d = child.draw_integer(c).unwrap();
            let e = root.draw_integer(c).unwrap();
            child.join_stream(inner_at, grandchild);
            root.join_stream(at, child);
            (root.choices(), [a, b, d, e])
        };
        let (choices, values) = run(TestData::generating(Vec::new(), Source::from_seed(9), 100));
        // Marker 4, a, marker 1, b, d, e.
        assert_eq!(choices.len(), 6);
        assert_eq!(choices[0], ChoiceValue::Integer(4));
        assert_eq!(choices[2], ChoiceValue::Integer(1));
        assert_eq!(
            run(TestData::replaying(choices.clone(), 100)),
            (choices, values)
        );
    }

    #[test]
    fn joining_many_streams_in_one_pass_matches_joining_them_one_by_one() {
        let c = IntegerConstraints::bounded(0, 1000);
        // The root opens spans around some forks; each stream draws and
        // opens spans of its own, one of them left open.
        let build = |seed: u64| {
            let mut root = TestData::generating(Vec::new(), Source::from_seed(seed), 1000);
            let mut streams = Vec::new();
            for k in 0..6 {
                root.start_span(1);
                root.draw_integer(c).unwrap();
                if k % 2 == 0 {
                    root.start_span(2);
                }
                let (at, mut stream) = root.fork_stream().unwrap();
                for j in 0..k {
                    stream.start_span(3);
                    stream.draw_integer(c).unwrap();
                    if j + 1 < k {
                        stream.stop_span(false);
                    }
                }
                streams.push((at, stream));
                root.draw_integer(c).unwrap();
                if k % 2 == 0 {
                    root.stop_span(false);
                }
                if k % 3 != 2 {
                    root.stop_span(false);
                }
            }
            (root, streams)
        };
        for seed in 0..10 {
            let (mut one_pass, streams) = build(seed);
            one_pass.join_streams(streams);
            let (mut one_by_one, mut streams) = build(seed);
            while let Some((at, stream)) = streams.pop() {
                one_by_one.join_stream(at, stream);
            }
            assert_eq!(one_pass.choices(), one_by_one.choices(), "seed {seed}");
            assert_eq!(one_pass.spans, one_by_one.spans, "seed {seed}");
            assert_eq!(one_pass.length, one_by_one.length, "seed {seed}");
        }
    }
}
