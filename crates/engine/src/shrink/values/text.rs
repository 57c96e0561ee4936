//! Strings and byte strings, shrunk as collections of ranked elements (see
//! [`super::collection`]): a character's rank is its place in its
//! alphabet's shrink order, searched run by run of that order (see
//! [`CharSet::shrink_runs`]), a byte's its value.

use super::Predicate;
use super::collection::shrink_collection;
use crate::charset::CharSet;

/// Shrinks a string (code points over `alphabet`) of at least `min_size`
/// code points.
pub fn shrink_string(
    points: &[u32],
    alphabet: &CharSet,
    min_size: usize,
    predicate: &mut dyn Predicate<Vec<u32>>,
) {
    let ranks: Vec<u64> = points.iter().map(|c| alphabet.shrink_index(*c)).collect();
    let runs = alphabet.shrink_runs();
    shrink_collection(&ranks, min_size, Some(&runs), &mut |ranks: &[u64]| {
        ranks
            .iter()
            .map(|r| alphabet.char_at_shrink_index(*r))
            .collect::<Option<Vec<u32>>>()
            .is_some_and(|candidate| predicate.holds(&candidate))
    });
}

/// Shrinks a byte string of at least `min_size` bytes.
pub fn shrink_bytes(bytes: &[u8], min_size: usize, predicate: &mut dyn Predicate<Vec<u8>>) {
    let ranks: Vec<u64> = bytes.iter().map(|b| u64::from(*b)).collect();
    shrink_collection(&ranks, min_size, None, &mut |ranks: &[u64]| {
        ranks
            .iter()
            .map(|r| u8::try_from(*r).ok())
            .collect::<Option<Vec<u8>>>()
            .is_some_and(|candidate| predicate.holds(&candidate))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charset::CharSetSpec;
    use crate::shrink::values::testing::Counting;

    fn shrunk_string(s: &str, min_size: usize, mut property: impl FnMut(&str) -> bool) -> String {
        let alphabet = CharSet::from_spec(&CharSetSpec::default()).unwrap();
        let points: Vec<u32> = s.chars().map(|c| c as u32).collect();
        let mut current = s.to_string();
        shrink_string(&points, &alphabet, min_size, &mut |p: &Vec<u32>| {
            let text: String = p.iter().filter_map(|c| char::from_u32(*c)).collect();
            let ok = property(&text);
            if ok {
                current = text;
            }
            ok
        });
        current
    }

    #[test]
    fn strings_shrink_toward_short_simple_text() {
        assert_eq!(shrunk_string("hello world", 0, |t| t.contains('w')), "w");
        assert_eq!(shrunk_string("xyz", 2, |_| true), "00");
        assert_eq!(shrunk_string("zzzz", 0, |t| t.len() >= 3), "000");
    }

    /// Shrink order is `0`..`Z`, then `/` down to `\0`, then `[` upwards:
    /// a property of code points holds on one end of each stretch, not of
    /// the whole order. Each character reaches the simplest one that works.
    #[test]
    fn characters_cross_the_stretch_below_zero() {
        assert_eq!(shrunk_string("[", 0, |t| t > "0"), "1");
        assert_eq!(shrunk_string("\u{e9}", 0, |t| t > "0"), "1");
        assert_eq!(shrunk_string("\u{2603}", 0, |t| t >= "Z"), "Z");
        assert_eq!(shrunk_string("\u{2603}", 0, |t| t > "Z"), "[");
        assert_eq!(
            shrunk_string("\u{7f}", 0, |t| t > "Z" || (!t.is_empty() && t < "+")),
            "*"
        );
        assert_eq!(shrunk_string("\u{1}", 1, |t| t < "0"), "/");
        assert_eq!(
            shrunk_string("\u{2603}", 0, |t| t > "\u{1}" && t < "0"),
            "/"
        );
        assert_eq!(
            shrunk_string("\u{10ffff}", 0, |t| t >= "\u{e000}"),
            "\u{e000}"
        );
        assert_eq!(shrunk_string("z\u{e9}", 2, |t| t > "0~"), "0\u{7f}");
        assert_eq!(shrunk_string("0\u{e9}", 2, |t| t > "0~"), "0\u{7f}");
    }

    /// A character that cannot move costs a handful of test cases.
    #[test]
    fn a_character_that_cannot_move_costs_few_calls() {
        let alphabet = CharSet::from_spec(&CharSetSpec::default()).unwrap();
        let mut counting = Counting::new(|p: &Vec<u32>| p == &[0x2603]);
        shrink_string(&[0x2603], &alphabet, 1, &mut counting);
        assert!(counting.calls <= 22, "{} calls", counting.calls);
    }

    #[test]
    fn bytes_shrink_toward_short_low_values() {
        let mut current = vec![200u8, 17, 99];
        shrink_bytes(&current.clone(), 0, &mut |b: &Vec<u8>| {
            let ok = b.iter().map(|x| u32::from(*x)).sum::<u32>() >= 100;
            if ok {
                current = b.clone();
            }
            ok
        });
        assert_eq!(current, [100]);
    }
}
