//! Character classes of Python patterns as code point sets.
//!
//! The parser turns every single-character construct (`.`, `[...]`, `\d`,
//! a literal under IGNORECASE ...) into a [`CharSet`] with Python's meaning:
//! Unicode `\w` is `str.isalnum()` plus `_`, `\s` is `str.isspace()`, `\d` is
//! category `Nd`, and the `a` flag narrows them to ASCII. Unicode property
//! tables and simple case folding come from `regex-syntax`, so they may be
//! newer than a peer Python's.

use crate::charset::{CharSet, MAX_CODEPOINT};
use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, HirKind};
use std::sync::OnceLock;

/// The newline, which `.` excludes and `$` and `^` look for.
pub(super) const NEWLINE: u32 = '\n' as u32;

/// The three escape classes, `\d`, `\w` and `\s`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Category {
    /// `\d`: decimal digits.
    Digit,
    /// `\w`: word characters.
    Word,
    /// `\s`: white space.
    Space,
}

/// Python's Unicode `\s`: `str.isspace()`, which unlike Unicode White_Space
/// includes the separators U+001C..U+001F.
const PYTHON_SPACE: &[(u32, u32)] = &[
    (0x09, 0x0D),
    (0x1C, 0x20),
    (0x85, 0x85),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
];

impl Category {
    /// The characters of this class (`ascii`: under the `a` flag).
    pub(super) fn set(self, ascii: bool) -> CharSet {
        static DIGIT: OnceLock<CharSet> = OnceLock::new();
        let digits = (u32::from(b'0'), u32::from(b'9'));
        match (self, ascii) {
            (Category::Digit, true) => CharSet::from_intervals(vec![digits]),
            (Category::Word, true) => CharSet::from_intervals(vec![
                digits,
                (u32::from(b'A'), u32::from(b'Z')),
                (u32::from(b'_'), u32::from(b'_')),
                (u32::from(b'a'), u32::from(b'z')),
            ]),
            (Category::Space, true) => CharSet::from_intervals(vec![(0x09, 0x0D), (0x20, 0x20)]),
            (Category::Digit, false) => DIGIT
                .get_or_init(|| {
                    unicode_property(r"\p{Nd}")
                        .unwrap_or_else(|| CharSet::from_intervals(vec![digits]))
                })
                .clone(),
            (Category::Word, false) => unicode_words().clone(),
            (Category::Space, false) => CharSet::from_intervals(PYTHON_SPACE.to_vec()),
        }
    }
}

/// Python's Unicode word characters: `str.isalnum()` (letters and numbers)
/// or `_` (regex-syntax's `\w` also has marks and connector punctuation but
/// not `No`).
fn unicode_words() -> &'static CharSet {
    static WORD: OnceLock<CharSet> = OnceLock::new();
    WORD.get_or_init(|| {
        unicode_property(r"[\p{L}\p{N}_]").unwrap_or_else(|| Category::Word.set(true))
    })
}

/// The characters of a class written in regex-syntax's dialect (used for
/// `\p{...}`, which Python lacks), or `None` if regex-syntax refuses it.
pub(super) fn unicode_property(class: &str) -> Option<CharSet> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(class)
        .ok()?;
    match hir.kind() {
        HirKind::Class(Class::Unicode(c)) => Some(CharSet::from_intervals(
            c.iter()
                .map(|r| (u32::from(r.start()), u32::from(r.end())))
                .collect(),
        )),
        HirKind::Literal(literal) => std::str::from_utf8(&literal.0).ok().map(|text| {
            CharSet::from_intervals(text.chars().map(|c| (u32::from(c), u32::from(c))).collect())
        }),
        _ => None,
    }
}

/// Every code point, surrogates included (what `(?s).` matches).
pub(super) fn everything() -> CharSet {
    CharSet::from_intervals(vec![(0, MAX_CODEPOINT)])
}

/// The code points `set` lacks.
pub(super) fn complement(set: &CharSet) -> CharSet {
    let mut out = Vec::new();
    let mut next = 0u32;
    for &(a, b) in set.intervals() {
        if a > next {
            out.push((next, a - 1));
        }
        next = b.saturating_add(1);
    }
    if next <= MAX_CODEPOINT && set.intervals().last().is_none_or(|l| l.1 < MAX_CODEPOINT) {
        out.push((next, MAX_CODEPOINT));
    }
    CharSet::from_intervals(out)
}

/// The code points both sets contain.
pub(super) fn intersect(a: &CharSet, b: &CharSet) -> CharSet {
    let (xs, ys) = (a.intervals(), b.intervals());
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < xs.len() && j < ys.len() {
        let lo = xs[i].0.max(ys[j].0);
        let hi = xs[i].1.min(ys[j].1);
        if lo <= hi {
            out.push((lo, hi));
        }
        if xs[i].1 < ys[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    CharSet::from_intervals(out)
}

/// The code points either set contains.
pub(super) fn union(a: &CharSet, b: &CharSet) -> CharSet {
    let mut all = a.intervals().to_vec();
    all.extend_from_slice(b.intervals());
    CharSet::from_intervals(all)
}

/// `set` closed under case folding, as IGNORECASE matches it: with `ascii`
/// only ASCII letters fold (Python's `(?ai)`), otherwise Unicode simple case
/// folding (so `k` also matches KELVIN SIGN, as in Python).
pub(super) fn case_fold(set: &CharSet, ascii: bool) -> CharSet {
    if ascii {
        let mut extra = Vec::new();
        for (lower, upper) in [(b'a', b'z'), (b'A', b'Z')] {
            let (lower, upper) = (u32::from(lower), u32::from(upper));
            for &(a, b) in set.intervals() {
                let lo = a.max(lower);
                let hi = b.min(upper);
                if lo <= hi {
                    extra.push((lo ^ 0x20, hi ^ 0x20));
                }
            }
        }
        let mut all = set.intervals().to_vec();
        all.extend(extra);
        return CharSet::from_intervals(all);
    }
    // regex-syntax ranges are of `char`s: surrogates (which have no case) are kept aside.
    let mut ranges = Vec::new();
    let mut surrogates = Vec::new();
    for &(a, b) in set.intervals() {
        for (lo, hi) in [(a, b.min(0xD7FF)), (a.max(0xE000), b)] {
            if let (true, Some(lo), Some(hi)) = (lo <= hi, char::from_u32(lo), char::from_u32(hi)) {
                ranges.push(ClassUnicodeRange::new(lo, hi));
            }
        }
        let (lo, hi) = (a.max(0xD800), b.min(0xDFFF));
        if lo <= hi {
            surrogates.push((lo, hi));
        }
    }
    let mut class = ClassUnicode::new(ranges);
    if class.try_case_fold_simple().is_err() {
        return set.clone();
    }
    let mut all: Vec<(u32, u32)> = class
        .iter()
        .map(|r| (u32::from(r.start()), u32::from(r.end())))
        .collect();
    all.extend(surrogates);
    CharSet::from_intervals(all)
}

/// Whether two code points are equal ignoring case (backreferences under IGNORECASE).
pub(super) fn equal_ignoring_case(a: u32, b: u32, ascii: bool) -> bool {
    if a == b {
        return true;
    }
    if ascii {
        let fold = |c: u32| match c {
            0x41..=0x5A => c + 0x20,
            _ => c,
        };
        return fold(a) == fold(b);
    }
    let single = CharSet::from_intervals(vec![(a, a)]);
    case_fold(&single, false).contains(b)
}

/// ASCII word characters, for `\b` under the `a` flag.
pub(super) fn ascii_word(c: Option<u32>) -> bool {
    c.and_then(char::from_u32)
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Python's word characters for `\b`: the same set as its `\w`.
pub(super) fn unicode_word(c: Option<u32>) -> bool {
    c.is_some_and(|c| unicode_words().contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations() {
        let a = CharSet::from_intervals(vec![(10, 20), (30, 40)]);
        let b = CharSet::from_intervals(vec![(15, 35)]);
        assert_eq!(intersect(&a, &b).intervals(), &[(15, 20), (30, 35)]);
        assert_eq!(union(&a, &b).intervals(), &[(10, 40)]);
        let not_a = complement(&a);
        assert_eq!(not_a.intervals()[0], (0, 9));
        assert!(not_a.contains(MAX_CODEPOINT) && !not_a.contains(15));
        assert!(complement(&everything()).is_empty());
    }

    #[test]
    fn case_folding() {
        let k = CharSet::from_intervals(vec![('k' as u32, 'k' as u32)]);
        let folded = case_fold(&k, false);
        assert!(folded.contains('K' as u32) && folded.contains(0x212A));
        let ascii = case_fold(&k, true);
        assert_eq!(ascii.len(), 2);
        assert!(equal_ignoring_case('a' as u32, 'A' as u32, false));
        assert!(!equal_ignoring_case('a' as u32, 'b' as u32, true));
    }

    #[test]
    fn python_categories() {
        let word = Category::Word.set(false);
        assert!(word.contains(0xB2) && word.contains('_' as u32) && !word.contains(0x301));
        assert!(Category::Space.set(false).contains(0x1C));
        assert!(Category::Digit.set(false).contains(0x0660));
        assert_eq!(Category::Digit.set(true).len(), 10);
        // Python's \b uses the same word characters.
        assert!(unicode_word(Some(0xB2)) && !unicode_word(Some(0x301)));
    }
}
