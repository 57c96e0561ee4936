//! Line breaking: lays a recorded document out within a width.
//!
//! The algorithm is the one Hypothesis' `vendor/pretty` (after IPython's
//! `lib.pretty`, after Ruby's `prettyprint`, after Oppen) uses, with the
//! adjustments libhegel documents: output is text, break points and groups;
//! pending output is held in a buffer until it is known whether the groups
//! it belongs to fit; the moment the line would overflow, the outermost
//! group with a pending break point is broken (all of its break points
//! become newlines) and the buffer is flushed up to its last break point.
//! Groups at one depth are considered oldest first. On top of that: text
//! that only a broken group shows (`if_break`), comments that end their line
//! and force every group open around them to break, block indentation that
//! pads a line when its first content arrives, and line prefixes written
//! ahead of a line's padding.

use super::{Op, PrinterError, Region};
use std::collections::VecDeque;

/// An item waiting in the buffer for its groups' break decisions.
enum Pending {
    Text {
        text: String,
        width: usize,
    },
    Break {
        separator: String,
        width: usize,
        indent: isize,
        group: usize,
    },
    IfBroken {
        text: String,
        group: usize,
    },
    Comment(String),
}

impl Pending {
    fn width(&self) -> usize {
        match self {
            Pending::Text { width, .. } | Pending::Break { width, .. } => *width,
            Pending::IfBroken { .. } | Pending::Comment(_) => 0,
        }
    }
}

struct GroupState {
    depth: usize,
    indent: usize,
    /// Break points of the group still in the buffer.
    pending_breaks: usize,
    broken: bool,
    /// Broken because a comment sits inside it.
    commented: bool,
}

/// Renders the document rooted at `main` (with `regions` spliced in).
pub fn render(main: &[Op], regions: &[Region], width: usize) -> Result<String, PrinterError> {
    let mut commented = vec![false];
    let mut open = Vec::new();
    mark_commented_groups(main, regions, &mut commented, &mut open);
    let mut layout = Layout {
        width,
        regions,
        commented,
        out: String::new(),
        column: 0,
        line_is_empty: true,
        held_padding: Some(0),
        block_indent: 0,
        buffer: VecDeque::new(),
        buffer_width: 0,
        comments: String::new(),
        indentation: 0,
        groups: vec![GroupState {
            depth: 0,
            indent: 0,
            pending_breaks: 0,
            broken: false,
            commented: false,
        }],
        open_groups: vec![0],
        by_depth: vec![vec![0]],
    };
    layout.ops(main)?;
    layout.flush();
    layout.write_padding();
    let comments = std::mem::take(&mut layout.comments);
    layout.out.push_str(&comments);
    Ok(layout.out)
}

/// Marks (in opening order) the groups a comment sits inside.
fn mark_commented_groups(
    ops: &[Op],
    regions: &[Region],
    marks: &mut Vec<bool>,
    open: &mut Vec<usize>,
) {
    for op in ops {
        match op {
            Op::Open { .. } => {
                marks.push(false);
                open.push(marks.len() - 1);
            }
            Op::Close(_) => {
                open.pop();
            }
            Op::Comment(_) => {
                for &group in open.iter() {
                    marks[group] = true;
                }
            }
            Op::Splice(region) => {
                mark_commented_groups(&regions[*region].ops, regions, marks, open)
            }
            _ => {}
        }
    }
}

struct Layout<'a> {
    width: usize,
    regions: &'a [Region],
    commented: Vec<bool>,
    out: String,
    column: usize,
    /// Whether the current line has no content yet.
    line_is_empty: bool,
    /// The break-point indentation of a line not padded yet: written (plus
    /// the block indentation in force then) when its first content arrives.
    held_padding: Option<isize>,
    block_indent: usize,
    buffer: VecDeque<Pending>,
    buffer_width: usize,
    /// Comments waiting for the end of their line.
    comments: String,
    indentation: isize,
    groups: Vec<GroupState>,
    open_groups: Vec<usize>,
    /// Groups with undecided break points, by depth, oldest first.
    by_depth: Vec<Vec<usize>>,
}

impl Layout<'_> {
    fn ops(&mut self, ops: &[Op]) -> Result<(), PrinterError> {
        for op in ops {
            match op {
                Op::Text(text) => self.text(text),
                Op::Break(separator) => self.breakable(separator),
                Op::IfBroken(text) => self.if_broken(text),
                Op::Newline => self.newline(),
                Op::Open { indent, text } => self.open(*indent, text),
                Op::Close(text) => self.close(text)?,
                Op::Shift(delta) => self.indentation += delta,
                Op::Comment(text) => {
                    if self.buffer.is_empty() {
                        self.comments.push_str(text);
                    } else {
                        self.buffer.push_back(Pending::Comment(text.clone()));
                    }
                }
                Op::Splice(region) => {
                    let region = &self.regions[*region];
                    self.block_indent += region.indent;
                    self.ops(&region.ops)?;
                    self.block_indent -= region.indent;
                }
                Op::Prefix(text) => self.prefix(text),
            }
        }
        Ok(())
    }

    fn write_padding(&mut self) {
        if let Some(indent) = self.held_padding.take() {
            let pad = self.block_indent + indent.max(0) as usize;
            self.out.extend(std::iter::repeat_n(' ', pad));
            self.column = pad;
        }
    }

    fn write(&mut self, text: &str, width: usize) {
        if width > 0 {
            self.write_padding();
            self.line_is_empty = false;
        }
        self.out.push_str(text);
        self.column += width;
    }

    fn start_line(&mut self, indent: isize) {
        self.write_padding();
        let comments = std::mem::take(&mut self.comments);
        self.out.push_str(&comments);
        self.out.push('\n');
        self.held_padding = Some(indent);
        self.column = self.block_indent + indent.max(0) as usize;
        self.line_is_empty = true;
    }

    fn prefix(&mut self, text: &str) {
        if self.buffer.is_empty() && self.held_padding.is_some() {
            let width = text.chars().count();
            self.out.push_str(text);
            self.write_padding();
            self.column += width;
            if width > 0 {
                self.line_is_empty = false;
            }
        } else {
            self.text(text);
        }
    }

    fn text(&mut self, text: &str) {
        let width = text.chars().count();
        if self.buffer.is_empty() {
            self.write(text, width);
            return;
        }
        if let Some(Pending::Text {
            text: last,
            width: w,
        }) = self.buffer.back_mut()
        {
            last.push_str(text);
            *w += width;
        } else {
            self.buffer.push_back(Pending::Text {
                text: text.to_string(),
                width,
            });
        }
        self.buffer_width += width;
        self.break_outermost();
    }

    fn current_group(&self) -> usize {
        self.open_groups.last().copied().unwrap_or(0)
    }

    fn breakable(&mut self, separator: &str) {
        let group = self.current_group();
        if self.groups[group].broken {
            self.newline();
            return;
        }
        let width = separator.chars().count();
        self.buffer.push_back(Pending::Break {
            separator: separator.to_string(),
            width,
            indent: self.indentation,
            group,
        });
        self.groups[group].pending_breaks += 1;
        self.buffer_width += width;
        self.break_outermost();
    }

    fn if_broken(&mut self, text: &str) {
        let group = self.current_group();
        if self.groups[group].broken {
            self.text(text);
        } else {
            self.buffer.push_back(Pending::IfBroken {
                text: text.to_string(),
                group,
            });
        }
    }

    fn newline(&mut self) {
        self.flush();
        self.start_line(self.indentation);
    }

    fn open(&mut self, indent: usize, text: &str) {
        if !text.is_empty() {
            self.text(text);
        }
        let depth = self.groups[self.current_group()].depth + 1;
        let id = self.groups.len();
        let commented = self.commented.get(id).copied().unwrap_or(false);
        self.groups.push(GroupState {
            depth,
            indent,
            pending_breaks: 0,
            broken: commented,
            commented,
        });
        self.open_groups.push(id);
        if self.by_depth.len() <= depth {
            self.by_depth.resize_with(depth + 1, Vec::new);
        }
        self.by_depth[depth].push(id);
        self.indentation += indent as isize;
    }

    fn close(&mut self, text: &str) -> Result<(), PrinterError> {
        if self.open_groups.len() == 1 {
            return Err(PrinterError::Unbalanced);
        }
        let id = self.open_groups.pop().unwrap_or(0);
        self.indentation -= self.groups[id].indent as isize;
        let text = if self.groups[id].commented {
            // The close of a group a comment broke goes on a line of its own.
            if !(self.buffer.is_empty() && self.line_is_empty) {
                self.newline();
            }
            text.trim_start()
        } else {
            text
        };
        if self.groups[id].pending_breaks == 0 {
            self.forget(id);
        }
        if !text.is_empty() {
            self.text(text);
        }
        Ok(())
    }

    fn forget(&mut self, id: usize) {
        let level = &mut self.by_depth[self.groups[id].depth];
        if let Some(at) = level.iter().position(|g| *g == id) {
            level.remove(at);
        }
    }

    /// The outermost group with pending break points, now broken; groups
    /// passed over on the way (none pending) are broken and forgotten.
    fn outermost_pending(&mut self) -> Option<usize> {
        for depth in 0..self.by_depth.len() {
            let level = std::mem::take(&mut self.by_depth[depth]);
            if let Some(at) = level
                .iter()
                .position(|g| self.groups[*g].pending_breaks > 0)
            {
                let id = level[at];
                let mut rest = level;
                rest.remove(at);
                self.by_depth[depth] = rest;
                self.groups[id].broken = true;
                return Some(id);
            }
            for g in level {
                self.groups[g].broken = true;
            }
        }
        None
    }

    fn break_outermost(&mut self) {
        while self.column + self.buffer_width > self.width {
            let Some(group) = self.outermost_pending() else {
                return;
            };
            while self.groups[group].pending_breaks > 0 {
                match self.buffer.pop_front() {
                    Some(item) => self.emit(item),
                    None => break,
                }
            }
            while matches!(
                self.buffer.front(),
                Some(Pending::Text { .. } | Pending::IfBroken { .. } | Pending::Comment(_))
            ) {
                if let Some(item) = self.buffer.pop_front() {
                    self.emit(item);
                }
            }
        }
    }

    fn emit(&mut self, item: Pending) {
        self.buffer_width -= item.width();
        match item {
            Pending::Text { text, width } => self.write(&text, width),
            Pending::IfBroken { text, group } => {
                if self.groups[group].broken {
                    let width = text.chars().count();
                    self.write(&text, width);
                }
            }
            Pending::Comment(text) => self.comments.push_str(&text),
            Pending::Break {
                separator,
                width,
                indent,
                group,
            } => {
                self.groups[group].pending_breaks -= 1;
                if self.groups[group].broken {
                    self.start_line(indent);
                } else {
                    if self.groups[group].pending_breaks == 0 {
                        self.forget(group);
                    }
                    self.write(&separator, width);
                }
            }
        }
    }

    fn flush(&mut self) {
        while let Some(item) = self.buffer.pop_front() {
            self.emit(item);
        }
        self.buffer_width = 0;
    }
}
