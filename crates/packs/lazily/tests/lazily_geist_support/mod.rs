//! `Choices` for geist's `TestCase`: the pack's generators drawn by geist, so failures shrink.

use geist::TestCase;
use geist::generators as gs;
use geist_lazily::generate::Choices;

/// A test case seen as a source of choices.
pub struct GeistChoices<'a>(pub &'a mut TestCase);

impl Choices for GeistChoices<'_> {
    fn integer(&mut self, min: u64, max: u64) -> u64 {
        self.0
            .draw(&gs::integers::<u64>().min_value(min).max_value(max))
    }

    fn bytes(&mut self, max_len: usize) -> Vec<u8> {
        self.0.draw(&gs::binary().min_size(0).max_size(max_len))
    }

    fn text(&mut self, max_len: usize) -> String {
        self.0.draw(&gs::text().max_size(max_len))
    }

    fn boolean(&mut self) -> bool {
        self.0.draw(&gs::booleans())
    }
}
