//! The pretty-printer documents of the ABI: a test case's document of drawn
//! values and notes, and standalone ones (`hegel_printer_new`).
//!
//! A document records commands (text, break points, groups, comments ...)
//! into regions: the main body, and holes opened in it later filled in
//! (`hegel_printer_deferred`, and each test-case clone's region) or indented
//! blocks (`hegel_test_case_block`). Writes may be speculative, kept or
//! retracted as a whole (a draw that a filter rejects). Reading the document
//! seals it and lays it out ([`layout`]) at its width; later writes fail as
//! writes to a dead region, harmlessly.

mod abi_fns;
pub mod layout;
pub mod reflow;

pub use abi_fns::*;

use crate::error::AbiError;
use std::sync::{Arc, Mutex, MutexGuard};

/// The default line width.
pub const DEFAULT_WIDTH: u64 = 79;

/// The regions a document makes room for at its first region after the body.
const REGIONS_GROWTH: usize = 32;

/// Where a write goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The document body.
    Main,
    /// A region opened in the body (a hole or a block).
    Region(usize),
    /// A region that never came to be (opened on a sealed document).
    Dead,
}

/// A recorded command.
#[derive(Clone, Debug)]
pub enum Op {
    /// Unbreakable text.
    Text(String),
    /// A break point with its flat separator.
    Break(String),
    /// Text shown only when the innermost group breaks.
    IfBroken(String),
    /// A hard line break.
    Newline,
    /// A group opening: its indentation and open text.
    Open {
        /// Added indentation.
        indent: usize,
        /// Open text.
        text: String,
    },
    /// A group closing with its text.
    Close(String),
    /// An indentation shift.
    Shift(isize),
    /// A line comment.
    Comment(String),
    /// A region spliced in here.
    Splice(usize),
    /// Text ahead of the line's indentation.
    Prefix(String),
}

/// A region's recorded commands.
#[derive(Debug, Default)]
pub struct Region {
    /// Committed commands.
    pub ops: Vec<Op>,
    /// Open speculative drafts, innermost last.
    drafts: Vec<Vec<Op>>,
    /// Notes held back while a draft is open.
    held_notes: Vec<Vec<Op>>,
    dead: bool,
    /// Block indentation of every line in the region.
    pub indent: usize,
    /// Whether the region was opened at the start of a line.
    begins_line: bool,
}

/// Misuse of a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PrinterError {
    /// The region is dead: resolved, aborted, or the document was read.
    #[error(
        "the print region is dead: its document was read or resolved, or its speculative region aborted"
    )]
    Dead,
    /// A group was closed with none open.
    #[error("end_group without a matching begin_group")]
    Unbalanced,
    /// Commit or abort without an open speculative region.
    #[error("commit or abort without an open speculative region")]
    NoDraft,
    /// The document was read with holes unresolved.
    #[error("the document has deferred holes not yet resolved (call hegel_printer_resolve first)")]
    Unresolved,
    /// Resolve without holes outstanding.
    #[error("resolve with no deferred holes outstanding")]
    NothingToResolve,
}

/// The ABI's code for a printer error.
pub fn to_abi(error: PrinterError) -> AbiError {
    match error {
        PrinterError::Dead => AbiError::InvalidHandle(error.to_string()),
        _ => AbiError::InvalidArg(error.to_string()),
    }
}

struct State {
    width: usize,
    /// Region 0 is the body.
    regions: Vec<Region>,
    /// Blocks opened and not yet made (see [`Document::block`]), in the
    /// order they were opened, as runs of blocks with the same target and
    /// indentation (a state machine opens the same block at every step):
    /// each run's target, indentation and length; block
    /// `regions.len() + i` is the `i`-th of them all.
    pending_blocks: Vec<(Target, usize, usize)>,
    /// How many blocks `pending_blocks` holds.
    pending_count: usize,
    /// Groups open in the body's committed commands.
    open_groups: isize,
    unresolved: bool,
    sealed: bool,
    rendered: Option<String>,
}

/// A document, shared by the handles writing to it.
pub struct Document {
    state: Mutex<State>,
}

impl Document {
    /// An empty document at the default width.
    pub fn new() -> Arc<Document> {
        Arc::new(Document {
            state: Mutex::new(State {
                width: DEFAULT_WIDTH as usize,
                regions: vec![Region {
                    begins_line: true,
                    ..Region::default()
                }],
                pending_blocks: Vec::new(),
                pending_count: 0,
                open_groups: 0,
                unresolved: false,
                sealed: false,
                rendered: None,
            }),
        })
    }

    /// The document's state, with every pending block made first: whatever
    /// a caller does with it sees the document as if each block had been
    /// opened when asked for.
    fn lock(&self) -> MutexGuard<'_, State> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if !state.pending_blocks.is_empty() {
            state.make_pending_blocks();
        }
        state
    }

    /// Sets the width the document is laid out at.
    pub fn set_width(&self, width: u64) {
        let mut state = self.lock();
        state.width = usize::try_from(width).unwrap_or(usize::MAX);
        state.rendered = None;
    }

    /// Records `op` on `target`.
    pub fn record(&self, target: Target, op: Op) -> Result<(), PrinterError> {
        self.lock().record(target, op)
    }

    /// Records `op`, preceded by `prefix` when the target is at a line start.
    pub fn record_prefixed(
        &self,
        target: Target,
        op: Op,
        prefix: Option<&str>,
    ) -> Result<(), PrinterError> {
        let mut state = self.lock();
        if let Some(prefix) = prefix
            && state.live(target)?
            && state.at_line_start(target)
        {
            state.record(target, Op::Prefix(prefix.to_string()))?;
        }
        state.record(target, op)
    }

    /// Opens a hole at the target's current position.
    pub fn deferred(&self, target: Target) -> Result<Target, PrinterError> {
        self.lock().open_region(target, 0)
    }

    /// Opens an indented block at the target's current position.
    ///
    /// The block is only noted here, and made (its region opened, a splice
    /// recorded in the target) when anything next reads or changes the
    /// document, before that happens ([`Document::lock`]): the document is
    /// then exactly as it was when the block was asked for, so the block
    /// comes out the same. A state machine's frontend opens a block at every
    /// step, most of them in documents never printed and never touched
    /// again, where they are never made at all.
    pub fn block(&self, target: Target, indent: usize) -> Result<Target, PrinterError> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let made = state.regions.len();
        let id = made + state.pending_count;
        // The checks `open_region` makes of its target now; a pending
        // block is live (nothing has happened since it was asked for).
        let live = !state.sealed
            && match target {
                Target::Main => true,
                Target::Region(i) if i < made => !state.regions[i].dead,
                Target::Region(i) => i < id,
                Target::Dead => false,
            };
        if !live {
            return Err(PrinterError::Dead);
        }
        state.pending_count += 1;
        match state.pending_blocks.last_mut() {
            Some((t, i, run)) if *t == target && *i == indent => *run += 1,
            _ => state.pending_blocks.push((target, indent, 1)),
        }
        Ok(Target::Region(id))
    }

    /// Opens a speculative draft on the target.
    pub fn begin_speculative(&self, target: Target) -> Result<(), PrinterError> {
        let mut state = self.lock();
        let index = state.index(target)?;
        state.regions[index].drafts.push(Vec::new());
        Ok(())
    }

    /// Keeps the innermost draft's content.
    pub fn commit_speculative(&self, target: Target) -> Result<(), PrinterError> {
        self.lock().commit(target)
    }

    /// Discards the innermost draft's content (regions opened in it die).
    pub fn abort_speculative(&self, target: Target) -> Result<(), PrinterError> {
        let mut state = self.lock();
        let index = state.index(target)?;
        let region = &mut state.regions[index];
        let draft = region.drafts.pop().ok_or(PrinterError::NoDraft)?;
        let outermost = region.drafts.is_empty();
        state.kill_spliced(&draft);
        if outermost {
            state.release_notes(index);
        }
        Ok(())
    }

    /// Appends a note: each line as text and a hard break, held back while
    /// a draft is open on the target.
    pub fn note(
        &self,
        target: Target,
        text: &str,
        prefix: Option<&str>,
    ) -> Result<(), PrinterError> {
        let mut state = self.lock();
        let index = state.index(target)?;
        let mut ops = Vec::new();
        for line in text.split('\n') {
            if let Some(prefix) = prefix {
                ops.push(Op::Prefix(prefix.to_string()));
            }
            if !line.is_empty() {
                ops.push(Op::Text(line.to_string()));
            }
            ops.push(Op::Newline);
        }
        if !state.regions[index].drafts.is_empty() {
            state.regions[index].held_notes.push(ops);
            return Ok(());
        }
        for op in ops {
            state.record(target, op)?;
        }
        Ok(())
    }

    /// Splices every hole in and seals the document.
    pub fn resolve(&self) -> Result<(), PrinterError> {
        let mut state = self.lock();
        if !state.unresolved {
            return Err(PrinterError::NothingToResolve);
        }
        state.seal();
        state.unresolved = false;
        state.rendered()?;
        Ok(())
    }

    /// Seals the document and lays it out.
    pub fn value(&self) -> Result<String, PrinterError> {
        let mut state = self.lock();
        if state.unresolved {
            return Err(PrinterError::Unresolved);
        }
        state.seal();
        state.rendered().map(str::to_string)
    }

    /// Whether the target can still be written to.
    pub fn is_live(&self, target: Target) -> bool {
        self.lock().live(target).unwrap_or(false)
    }
}

impl State {
    fn index(&self, target: Target) -> Result<usize, PrinterError> {
        if self.sealed {
            return Err(PrinterError::Dead);
        }
        match target {
            Target::Main => Ok(0),
            Target::Region(i) if i < self.regions.len() && !self.regions[i].dead => Ok(i),
            _ => Err(PrinterError::Dead),
        }
    }

    fn live(&self, target: Target) -> Result<bool, PrinterError> {
        self.index(target).map(|_| true)
    }

    fn record(&mut self, target: Target, op: Op) -> Result<(), PrinterError> {
        let index = self.index(target)?;
        if let Some(draft) = self.regions[index].drafts.last_mut() {
            draft.push(op);
            return Ok(());
        }
        if index == 0 {
            match &op {
                Op::Open { .. } => self.open_groups += 1,
                Op::Close(_) => {
                    // Group structure may span holes, so balance is only
                    // checked here while there are none.
                    if self.regions.len() == 1 && self.open_groups == 0 {
                        return Err(PrinterError::Unbalanced);
                    }
                    self.open_groups -= 1;
                }
                Op::Splice(_) => self.unresolved = true,
                _ => {}
            }
        }
        self.regions[index].ops.push(op);
        Ok(())
    }

    /// Makes the pending blocks, in the order they were asked for.
    #[cold]
    #[inline(never)]
    fn make_pending_blocks(&mut self) {
        self.pending_count = 0;
        for (target, indent, run) in std::mem::take(&mut self.pending_blocks) {
            for _ in 0..run {
                // Cannot fail: each target was live when the block was
                // asked for, and nothing but the blocks before it happened
                // since.
                let made = self.open_region(target, indent);
                debug_assert_eq!(made, Ok(Target::Region(self.regions.len() - 1)));
            }
        }
    }

    fn open_region(&mut self, target: Target, indent: usize) -> Result<Target, PrinterError> {
        let index = self.index(target)?;
        let begins_line = self.at_line_start(target);
        let id = self.regions.len();
        // A frontend that opens one block per step of a state machine opens
        // dozens: grow in large steps rather than by doubling from one.
        if id == self.regions.capacity() {
            self.regions.reserve(id.max(REGIONS_GROWTH));
        }
        // Each block leaves a splice in its target: grow that in large
        // steps too.
        let ops = &mut self.regions[index].ops;
        if ops.len() == ops.capacity() {
            ops.reserve(ops.len().max(REGIONS_GROWTH));
        }
        self.regions.push(Region {
            indent,
            begins_line,
            ..Region::default()
        });
        self.record(target, Op::Splice(id))?;
        Ok(Target::Region(id))
    }

    fn commit(&mut self, target: Target) -> Result<(), PrinterError> {
        let index = self.index(target)?;
        let region = &mut self.regions[index];
        let draft = region.drafts.pop().ok_or(PrinterError::NoDraft)?;
        if let Some(outer) = region.drafts.last_mut() {
            outer.extend(draft);
            return Ok(());
        }
        if index == 0 {
            let checked = self.regions.len() == 1;
            let mut balance = self.open_groups;
            for op in &draft {
                match op {
                    Op::Open { .. } => balance += 1,
                    Op::Close(_) => {
                        balance -= 1;
                        if checked && balance < 0 {
                            // Refused atomically: the draft stays open.
                            self.regions[0].drafts.push(draft);
                            return Err(PrinterError::Unbalanced);
                        }
                    }
                    _ => {}
                }
            }
            if draft.iter().any(|op| matches!(op, Op::Splice(_))) {
                self.unresolved = true;
            }
            self.open_groups = balance;
        }
        self.regions[index].ops.extend(draft);
        self.release_notes(index);
        Ok(())
    }

    fn release_notes(&mut self, index: usize) {
        let region = &mut self.regions[index];
        for note in std::mem::take(&mut region.held_notes) {
            region.ops.extend(note);
        }
    }

    fn kill_spliced(&mut self, ops: &[Op]) {
        let mut work: Vec<usize> = spliced(ops).collect();
        while let Some(id) = work.pop() {
            let region = &mut self.regions[id];
            region.dead = true;
            let mut nested: Vec<usize> = spliced(&region.ops).collect();
            for draft in &region.drafts {
                nested.extend(spliced(draft));
            }
            work.extend(nested);
        }
    }

    /// Whether the next content on `target` starts a line (indentation
    /// shifts looked past).
    fn at_line_start(&self, target: Target) -> bool {
        let Ok(index) = self.index(target) else {
            return false;
        };
        let region = &self.regions[index];
        let last = region
            .drafts
            .iter()
            .rev()
            .flat_map(|d| d.iter().rev())
            .chain(region.ops.iter().rev())
            .find(|op| !matches!(op, Op::Shift(_)));
        match last {
            Some(op) => self.ends_line(op),
            None => region.begins_line,
        }
    }

    fn ends_line(&self, op: &Op) -> bool {
        match op {
            Op::Newline => true,
            Op::Splice(id) => {
                let region = &self.regions[*id];
                match region
                    .ops
                    .iter()
                    .rev()
                    .find(|op| !matches!(op, Op::Shift(_)))
                {
                    Some(op) => self.ends_line(op),
                    None => region.begins_line,
                }
            }
            _ => false,
        }
    }

    fn seal(&mut self) {
        for region in &mut self.regions {
            region.drafts.clear();
            region.dead = true;
        }
        self.sealed = true;
    }

    fn rendered(&mut self) -> Result<&str, PrinterError> {
        if self.rendered.is_none() {
            let text = layout::render(&self.regions[0].ops, &self.regions, self.width)?;
            self.rendered = Some(text);
        }
        Ok(self.rendered.as_deref().unwrap_or_default())
    }
}

fn spliced(ops: &[Op]) -> impl Iterator<Item = usize> + '_ {
    ops.iter().filter_map(|op| match op {
        Op::Splice(id) => Some(*id),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(doc: &Document, t: Target, items: &[&str]) {
        doc.record(
            t,
            Op::Open {
                indent: 1,
                text: "[".into(),
            },
        )
        .unwrap();
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                doc.record(t, Op::Text(",".into())).unwrap();
                doc.record(t, Op::Break(" ".into())).unwrap();
            }
            doc.record(t, Op::Text(item.to_string())).unwrap();
        }
        doc.record(t, Op::Close("]".into())).unwrap();
    }

    #[test]
    fn a_group_that_fits_stays_on_one_line() {
        let doc = Document::new();
        list(&doc, Target::Main, &["1", "2", "3"]);
        assert_eq!(doc.value().unwrap(), "[1, 2, 3]");
    }

    #[test]
    fn a_group_that_does_not_fit_breaks_at_every_point() {
        let doc = Document::new();
        doc.set_width(10);
        list(&doc, Target::Main, &["1111", "2222", "3333"]);
        assert_eq!(doc.value().unwrap(), "[1111,\n 2222,\n 3333]");
    }

    #[test]
    fn holes_are_laid_out_as_if_inline() {
        let doc = Document::new();
        doc.set_width(10);
        doc.record(Target::Main, Op::Text("x = ".into())).unwrap();
        let hole = doc.deferred(Target::Main).unwrap();
        doc.record(Target::Main, Op::Text(";".into())).unwrap();
        list(&doc, hole, &["1111", "2222"]);
        assert_eq!(doc.value().unwrap_err(), PrinterError::Unresolved);
        doc.resolve().unwrap();
        // Indentation is relative to the line, not to the open column.
        assert_eq!(doc.value().unwrap(), "x = [1111,\n 2222];");
        assert_eq!(
            doc.record(hole, Op::Text("late".into())),
            Err(PrinterError::Dead)
        );
    }

    #[test]
    fn aborted_drafts_vanish_and_held_notes_survive() {
        let doc = Document::new();
        doc.begin_speculative(Target::Main).unwrap();
        doc.record(Target::Main, Op::Text("let x = ".into()))
            .unwrap();
        doc.note(Target::Main, "inside", None).unwrap();
        doc.abort_speculative(Target::Main).unwrap();
        doc.begin_speculative(Target::Main).unwrap();
        doc.record(Target::Main, Op::Text("let y = 1;".into()))
            .unwrap();
        doc.record(Target::Main, Op::Newline).unwrap();
        doc.commit_speculative(Target::Main).unwrap();
        assert_eq!(doc.value().unwrap(), "inside\nlet y = 1;\n");
    }

    #[test]
    fn comments_end_their_line_and_break_their_groups() {
        let doc = Document::new();
        doc.record(
            Target::Main,
            Op::Open {
                indent: 4,
                text: "[".into(),
            },
        )
        .unwrap();
        doc.record(Target::Main, Op::Break("".into())).unwrap();
        doc.record(Target::Main, Op::Text("1".into())).unwrap();
        doc.record(Target::Main, Op::Comment("  // one".into()))
            .unwrap();
        doc.record(Target::Main, Op::Close("]".into())).unwrap();
        assert_eq!(doc.value().unwrap(), "[\n    1  // one\n]");
    }

    #[test]
    fn blocks_indent_their_lines_and_prefixes_lead_them() {
        let doc = Document::new();
        doc.note(Target::Main, "Step 1: {", None).unwrap();
        let block = doc.block(Target::Main, 4).unwrap();
        doc.note(Target::Main, "}", None).unwrap();
        doc.note(block, "a\nb", Some("[w] ")).unwrap();
        doc.resolve().unwrap();
        assert_eq!(doc.value().unwrap(), "Step 1: {\n[w]     a\n[w]     b\n}\n");
    }

    /// A document built by `build`, its blocks made when asked for (as if
    /// eagerly: a read after each) or when next needed.
    fn blocks_made(
        eagerly: bool,
        build: impl Fn(&dyn Fn(Target, usize) -> Target, &Document),
    ) -> String {
        let doc = Document::new();
        let block = |target: Target, indent: usize| {
            let block = doc.block(target, indent).unwrap_or(Target::Dead);
            if eagerly {
                doc.is_live(Target::Main);
            }
            block
        };
        build(&block, &doc);
        doc.resolve().ok();
        doc.value().unwrap_or_else(|e| e.to_string())
    }

    #[test]
    fn a_block_comes_out_the_same_whenever_it_is_made() {
        let build = |block: &dyn Fn(Target, usize) -> Target, doc: &Document| {
            doc.note(Target::Main, "Step 1: {", None).unwrap();
            let outer = block(Target::Main, 4);
            // Blocks of pending blocks, and blocks nobody writes to.
            let inner = block(outer, 2);
            block(inner, 2);
            let unused = block(Target::Main, 4);
            doc.note(Target::Main, "}", None).unwrap();
            doc.note(inner, "x = 1", None).unwrap();
            doc.record(outer, Op::Text("y".into())).unwrap();
            let late = block(outer, 8);
            doc.note(late, "late", Some("[w] ")).unwrap();
            doc.note(unused, "", None).unwrap();
            let speculative = {
                doc.begin_speculative(Target::Main).unwrap();
                let b = block(Target::Main, 2);
                doc.abort_speculative(Target::Main).unwrap();
                b
            };
            assert_eq!(doc.note(speculative, "gone", None), Err(PrinterError::Dead));
        };
        let eager = blocks_made(true, build);
        assert_eq!(blocks_made(false, build), eager);
        assert!(eager.contains("x = 1") && eager.contains("late"), "{eager}");
        // Nothing written: no blocks in the output either way.
        let quiet = |block: &dyn Fn(Target, usize) -> Target, _: &Document| {
            for _ in 0..40 {
                block(block(Target::Main, 2), 2);
            }
        };
        assert_eq!(blocks_made(false, quiet), blocks_made(true, quiet));
        // Runs of blocks alike (kept as one pending run), broken by others.
        let runs = |block: &dyn Fn(Target, usize) -> Target, doc: &Document| {
            let first: Vec<Target> = (0..3).map(|_| block(Target::Main, 2)).collect();
            let other = block(Target::Main, 6);
            let nested: Vec<Target> = (0..2).map(|_| block(first[1], 2)).collect();
            let last = block(Target::Main, 2);
            for (i, b) in first
                .iter()
                .chain(&nested)
                .chain([&other, &last])
                .enumerate()
            {
                doc.note(*b, &format!("line {i}"), None).unwrap();
            }
        };
        let eager = blocks_made(true, runs);
        assert_eq!(blocks_made(false, runs), eager);
        assert!(eager.contains("line 6"), "{eager}");
        // A sealed document or a dead target gives a dead block.
        let doc = Document::new();
        let block = doc.block(Target::Main, 2).unwrap();
        assert_eq!(doc.value(), Err(PrinterError::Unresolved));
        doc.resolve().unwrap();
        assert_eq!(doc.block(Target::Main, 2), Err(PrinterError::Dead));
        assert_eq!(doc.block(block, 2), Err(PrinterError::Dead));
        assert_eq!(
            Document::new().block(Target::Region(1), 2),
            Err(PrinterError::Dead)
        );
        assert_eq!(
            Document::new().block(Target::Dead, 2),
            Err(PrinterError::Dead)
        );
    }

    #[test]
    fn closing_an_unopened_group_is_refused() {
        let doc = Document::new();
        assert_eq!(
            doc.record(Target::Main, Op::Close(")".into())),
            Err(PrinterError::Unbalanced)
        );
    }
}
