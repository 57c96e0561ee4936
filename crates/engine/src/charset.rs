//! Character sets for string choices: sorted code point intervals with a
//! shrink order.
//!
//! Strings shrink toward `"0"`: the digits and upper-case letters come first
//! (`0`..`Z`), then the characters below `0` in descending order, then the
//! rest in code point order. That makes minimal examples readable ("0", "A",
//! "/") rather than control characters.
//!
//! General categories come from [`crate::unicode`]: the newest Unicode
//! tables, or an older version's when a spec names one.

use crate::unicode::{UnicodeVersion, category_runs};

/// A set of code points, stored as sorted, disjoint, inclusive intervals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CharSet {
    intervals: Vec<(u32, u32)>,
    /// Cumulative count of code points before each interval.
    offsets: Vec<u64>,
    len: u64,
    /// Natural index of the first character >= '0'.
    zero_index: u64,
    /// Natural index of the first character >= 'Z' (capped at len - 1).
    upper_z_index: u64,
}

pub use crate::unicode::MAX_CODEPOINT;
const SURROGATES: (u32, u32) = (0xD800, 0xDFFF);

/// Why a character set specification is unusable.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CharSetError {
    /// An unknown general category name.
    #[error("{0:?} is not a valid Unicode general category")]
    UnknownCategory(String),
    /// An unknown codec name.
    #[error("unsupported codec {0:?}: expected \"ascii\", \"latin-1\" or \"utf-8\"")]
    UnknownCodec(String),
    /// Both `categories` and `exclude_categories` were given.
    #[error("cannot give both categories and exclude_categories")]
    BothCategoryLists,
    /// min_codepoint > max_codepoint.
    #[error("max_codepoint={max} < min_codepoint={min}")]
    CodepointRange {
        /// The lower bound given.
        min: u32,
        /// The upper bound given.
        max: u32,
    },
}

/// The options of a Hegel `string` schema (Hypothesis' `characters()` options).
#[derive(Clone, Debug, Default)]
pub struct CharSetSpec {
    /// `"ascii"`, `"latin-1"`, `"utf-8"` (or `None`).
    pub codec: Option<String>,
    /// Lowest permitted code point.
    pub min_codepoint: Option<u32>,
    /// Highest permitted code point.
    pub max_codepoint: Option<u32>,
    /// Only these general categories (major "L" or minor "Lu").
    pub categories: Option<Vec<String>>,
    /// All but these general categories.
    pub exclude_categories: Option<Vec<String>>,
    /// Characters always included.
    pub include_characters: Option<String>,
    /// Characters always excluded.
    pub exclude_characters: Option<String>,
    /// The Unicode version whose categories to follow (`None`:
    /// [`UnicodeVersion::DEFAULT`]).
    pub unicode_version: Option<UnicodeVersion>,
}

const ALL_CATEGORIES: [&str; 30] = [
    "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi",
    "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn",
];

/// The code points of the given two-letter categories within `min..=max`,
/// as sorted, disjoint intervals: the table's runs of one category, clipped.
fn category_intervals(
    codes: &[&str],
    min: u32,
    max: u32,
    version: UnicodeVersion,
) -> Vec<(u32, u32)> {
    let mut member = [false; CATEGORY_SLOTS];
    for code in codes {
        member[category_slot(code)] = true;
    }
    let mut intervals: Vec<(u32, u32)> = Vec::new();
    for &(first, last, code) in category_runs(version) {
        if !member[category_slot(code)] {
            continue;
        }
        let (a, b) = (first.max(min), last.min(max));
        if a > b {
            continue;
        }
        match intervals.last_mut() {
            Some(last) if last.1 + 1 == a => last.1 = b,
            _ => intervals.push((a, b)),
        }
    }
    intervals
}

/// Slots of [`category_slot`]: one per pair of letters.
const CATEGORY_SLOTS: usize = 26 * 26;

/// A two-letter category code's slot in a table of [`CATEGORY_SLOTS`]
/// (every code is an upper-case letter then a lower-case one).
fn category_slot(code: &str) -> usize {
    let letter = |b: Option<&u8>, base: u8| usize::from(b.map_or(0, |b| b.wrapping_sub(base)) % 26);
    let bytes = code.as_bytes();
    letter(bytes.first(), b'A') * 26 + letter(bytes.get(1), b'a')
}

/// Expands category names (major letters or two-letter codes) to two-letter codes.
pub fn expand_categories(names: &[String]) -> Result<Vec<&'static str>, CharSetError> {
    let mut out = Vec::new();
    for name in names {
        let matched: Vec<&'static str> = ALL_CATEGORIES
            .iter()
            .copied()
            .filter(|c| {
                if name.len() == 1 {
                    c.starts_with(name.as_str())
                } else {
                    *c == name.as_str()
                }
            })
            .collect();
        if matched.is_empty() {
            return Err(CharSetError::UnknownCategory(name.clone()));
        }
        for m in matched {
            if !out.contains(&m) {
                out.push(m);
            }
        }
    }
    Ok(out)
}

impl CharSet {
    /// A set from possibly overlapping, unsorted inclusive intervals.
    pub fn from_intervals(mut intervals: Vec<(u32, u32)>) -> CharSet {
        intervals.retain(|(a, b)| a <= b);
        intervals.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(intervals.len());
        for (a, b) in intervals {
            match merged.last_mut() {
                Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        let mut offsets = Vec::with_capacity(merged.len());
        let mut len = 0u64;
        for (a, b) in &merged {
            offsets.push(len);
            len += u64::from(b - a) + 1;
        }
        let mut set = CharSet {
            intervals: merged,
            offsets,
            len,
            zero_index: 0,
            upper_z_index: 0,
        };
        set.zero_index = set.index_above(u32::from(b'0'));
        set.upper_z_index = set.index_above(u32::from(b'Z')).min(len.saturating_sub(1));
        set
    }

    /// Builds the set a Hegel `string` schema describes. Surrogates are excluded
    /// unless asked for by category `Cs`, or by explicit code point bounds
    /// entirely inside the surrogate range.
    pub fn from_spec(spec: &CharSetSpec) -> Result<CharSet, CharSetError> {
        if spec.categories.is_some() && spec.exclude_categories.is_some() {
            return Err(CharSetError::BothCategoryLists);
        }
        let codec_max = match spec.codec.as_deref() {
            None | Some("utf-8") | Some("utf8") | Some("UTF-8") => MAX_CODEPOINT,
            Some("ascii") | Some("ASCII") => 0x7F,
            Some("latin-1") | Some("latin1") | Some("iso-8859-1") => 0xFF,
            Some(other) => return Err(CharSetError::UnknownCodec(other.to_string())),
        };
        let min = spec.min_codepoint.unwrap_or(0);
        let max = spec.max_codepoint.unwrap_or(MAX_CODEPOINT).min(codec_max);
        if spec.min_codepoint.is_some() && spec.max_codepoint.is_some() && min > max {
            return Err(CharSetError::CodepointRange { min, max });
        }
        let utf8_codec = matches!(spec.codec.as_deref(), Some("utf-8" | "utf8" | "UTF-8"));
        let included: Option<Vec<&'static str>> = match (&spec.categories, &spec.exclude_categories)
        {
            (Some(cats), _) => Some(expand_categories(cats)?),
            (None, Some(excluded)) => {
                let mut excluded = expand_categories(excluded)?;
                excluded.push("Cs");
                Some(
                    ALL_CATEGORIES
                        .iter()
                        .copied()
                        .filter(|c| !excluded.contains(c))
                        .collect(),
                )
            }
            (None, None) => None,
        };
        let mut intervals = Vec::new();
        match &included {
            None => {
                // Everything in range except surrogates (unless utf-8 would reject them anyway).
                let _ = utf8_codec;
                push_without_surrogates(&mut intervals, min, max);
            }
            Some(cats) if cats.len() == ALL_CATEGORIES.len() => {
                if min <= max {
                    intervals.push((min, max));
                }
            }
            // Every category but Cs (hegel-go sends `exclude_categories:
            // ["Cs"]` with every text schema): Cs is exactly the surrogates,
            // so this is the default set, without walking the category runs.
            Some(cats) if cats.len() == ALL_CATEGORIES.len() - 1 && !cats.contains(&"Cs") => {
                push_without_surrogates(&mut intervals, min, max);
            }
            Some(cats) => {
                let version = spec.unicode_version.unwrap_or(UnicodeVersion::DEFAULT);
                intervals = category_intervals(cats, min, max, version);
            }
        }
        // A range wholly inside the surrogates asks for surrogates explicitly;
        // Hypothesis rejects that, and so do we (the set is empty).
        let mut set = CharSet::from_intervals(intervals);
        if let Some(include) = &spec.include_characters {
            let extra: Vec<(u32, u32)> = include.chars().map(|c| (c as u32, c as u32)).collect();
            let mut all = set.intervals.clone();
            all.extend(extra);
            set = CharSet::from_intervals(all);
        }
        if let Some(exclude) = &spec.exclude_characters {
            let excluded: Vec<u32> = exclude.chars().map(|c| c as u32).collect();
            set = set.without(&excluded);
        }
        Ok(set)
    }

    fn without(&self, excluded: &[u32]) -> CharSet {
        let mut intervals = Vec::new();
        for &(a, b) in &self.intervals {
            let mut start = a;
            let mut cuts: Vec<u32> = excluded
                .iter()
                .copied()
                .filter(|c| *c >= a && *c <= b)
                .collect();
            cuts.sort_unstable();
            cuts.dedup();
            for cut in cuts {
                if cut > start {
                    intervals.push((start, cut - 1));
                }
                start = cut + 1;
            }
            if start <= b && start >= a {
                intervals.push((start, b));
            }
        }
        CharSet::from_intervals(intervals)
    }

    /// Number of code points in the set.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The intervals, sorted and disjoint.
    pub fn intervals(&self) -> &[(u32, u32)] {
        &self.intervals
    }

    /// Whether `c` is in the set.
    pub fn contains(&self, c: u32) -> bool {
        // Most code points drawn fall in the first interval: no search.
        if let Some(&(a, b)) = self.intervals.first()
            && a <= c
            && c <= b
        {
            return true;
        }
        self.locate(c).is_some()
    }

    fn locate(&self, c: u32) -> Option<usize> {
        let i = self.intervals.partition_point(|(_, b)| *b < c);
        (i < self.intervals.len() && self.intervals[i].0 <= c).then_some(i)
    }

    /// The code point at natural (sorted) position `i`.
    #[inline]
    pub fn char_at(&self, i: u64) -> Option<u32> {
        if i >= self.len {
            return None;
        }
        // Most draws land in the first interval (ASCII and far beyond it in
        // the usual alphabets): no search.
        if let Some(&(a, b)) = self.intervals.first()
            && i <= u64::from(b - a)
        {
            return Some(a + i as u32);
        }
        let k = self.offsets.partition_point(|o| *o <= i) - 1;
        Some(self.intervals[k].0 + (i - self.offsets[k]) as u32)
    }

    /// The natural position of `c`, if present.
    pub fn index_of(&self, c: u32) -> Option<u64> {
        self.locate(c)
            .map(|k| self.offsets[k] + u64::from(c - self.intervals[k].0))
    }

    /// How many members are below `c`: the natural index of the first
    /// member at or above it (`len` if none is).
    pub fn members_below(&self, c: u32) -> u64 {
        self.index_above(c)
    }

    /// Natural index of the first member >= c (len if none).
    fn index_above(&self, c: u32) -> u64 {
        let k = self.intervals.partition_point(|(_, b)| *b < c);
        if k == self.intervals.len() {
            return self.len;
        }
        let (a, _) = self.intervals[k];
        self.offsets[k] + u64::from(c.saturating_sub(a))
    }

    /// Position of `c` in shrink order (0 = simplest); members only.
    pub fn shrink_index(&self, c: u32) -> u64 {
        let Some(i) = self.index_of(c) else {
            return u64::MAX;
        };
        let zero = self.zero_index;
        let z = self.upper_z_index;
        if zero >= self.len {
            // Nothing at or above '0': descending from the top.
            return self.len - 1 - i;
        }
        if i >= zero && i <= z {
            i - zero
        } else if i < zero {
            (z - zero) + (zero - i)
        } else {
            i
        }
    }

    /// The runs of shrink order that follow code point order (up or down),
    /// in shrink order: `0`..`Z` upwards, the characters below `0`
    /// downwards, the rest upwards (one run, downwards, when nothing is at
    /// or above `0`). A property that compares code points changes at most
    /// once along each run, but may change more often along the whole
    /// order: `c > '0'` holds for `1`..`Z`, fails for `/` down to `\0`, and
    /// holds again from `[` on.
    pub fn shrink_runs(&self) -> Vec<std::ops::Range<u64>> {
        let (zero, z) = (self.zero_index, self.upper_z_index);
        let runs = if zero >= self.len {
            [0..self.len, 0..0, 0..0]
        } else {
            [0..z - zero + 1, z - zero + 1..z + 1, z + 1..self.len]
        };
        runs.into_iter().filter(|run| !run.is_empty()).collect()
    }

    /// The member at position `s` of shrink order.
    #[inline]
    pub fn char_at_shrink_index(&self, s: u64) -> Option<u32> {
        if s >= self.len {
            return None;
        }
        let zero = self.zero_index;
        let z = self.upper_z_index;
        if zero >= self.len {
            return self.char_at(self.len - 1 - s);
        }
        let span = z - zero;
        let i = if s <= span {
            zero + s
        } else if s <= span + zero {
            zero - (s - span)
        } else {
            s
        };
        self.char_at(i)
    }
}

fn push_without_surrogates(out: &mut Vec<(u32, u32)>, min: u32, max: u32) {
    if min > max {
        return;
    }
    let (sa, sb) = SURROGATES;
    if max < sa || min > sb {
        out.push((min, max));
        return;
    }
    if min < sa {
        out.push((min, sa - 1));
    }
    if max > sb {
        out.push((sb + 1, max));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_category_has_its_own_slot() {
        let slots: std::collections::HashSet<usize> =
            ALL_CATEGORIES.iter().map(|c| category_slot(c)).collect();
        assert_eq!(slots.len(), ALL_CATEGORIES.len());
    }

    fn spec() -> CharSetSpec {
        CharSetSpec::default()
    }

    #[test]
    fn default_set_excludes_surrogates_and_shrinks_to_zero() {
        let set = CharSet::from_spec(&spec()).unwrap();
        assert!(!set.contains(0xD800));
        assert!(set.contains(0x10FFFF));
        assert_eq!(set.char_at_shrink_index(0), Some('0' as u32));
        assert_eq!(set.char_at_shrink_index(1), Some('1' as u32));
        // After '0'..'Z' come the characters below '0', descending.
        let span = u64::from(b'Z' - b'0');
        assert_eq!(set.char_at_shrink_index(span + 1), Some('/' as u32));
        for c in [0u32, 47, 48, 90, 91, 200, 0x10FFFF] {
            assert_eq!(
                set.char_at_shrink_index(set.shrink_index(c)),
                Some(c),
                "{c}"
            );
        }
    }

    /// A request that names no Unicode version gets the default's
    /// categories, not the newest tables': U+1DF40 is an uppercase letter
    /// from 18.0 only, so a client on 17.0 would see it as unassigned.
    #[test]
    fn categories_without_a_version_follow_the_default() {
        let upper = |version| {
            CharSet::from_spec(&CharSetSpec {
                categories: Some(vec!["Lu".into()]),
                unicode_version: version,
                ..spec()
            })
            .unwrap()
        };
        assert!(upper(Some(UnicodeVersion::NEWEST)).contains(0x1DF40));
        assert!(!upper(None).contains(0x1DF40));
        assert!(!upper(Some(UnicodeVersion::DEFAULT)).contains(0x1DF40));
        assert!(upper(None).contains(u32::from('A')));
    }

    /// Each run of shrink order moves one way through the code points, and
    /// together they cover it.
    #[test]
    fn shrink_runs_follow_code_point_order() {
        let sets = [
            spec(),
            CharSetSpec {
                codec: Some("ascii".into()),
                ..spec()
            },
            CharSetSpec {
                min_codepoint: Some(u32::from(b'a')),
                max_codepoint: Some(u32::from(b'z')),
                ..spec()
            },
            CharSetSpec {
                max_codepoint: Some(u32::from(b'/')),
                ..spec()
            },
            CharSetSpec {
                include_characters: Some("FEDCBA".into()),
                categories: Some(vec![]),
                ..spec()
            },
        ];
        for spec in sets {
            let set = CharSet::from_spec(&spec).unwrap();
            let runs = set.shrink_runs();
            let mut next = 0;
            for run in &runs {
                assert_eq!(run.start, next, "{spec:?}");
                next = run.end;
                let points: Vec<u32> = run
                    .clone()
                    .take(500)
                    .map(|s| set.char_at_shrink_index(s).unwrap())
                    .collect();
                let up = points.windows(2).all(|w| w[0] < w[1]);
                let down = points.windows(2).all(|w| w[0] > w[1]);
                assert!(up || down, "{spec:?}: {run:?}");
            }
            assert_eq!(next, set.len(), "{spec:?}");
        }
        let runs = CharSet::from_spec(&spec()).unwrap().shrink_runs();
        let span = u64::from(b'Z' - b'0');
        assert_eq!(runs[..2], [0..span + 1, span + 1..span + 49]);
    }

    /// The shortcut for "every category but Cs" builds the set that walking
    /// the code points by category builds.
    #[test]
    fn every_category_but_cs_is_the_set_without_surrogates() {
        let walked = |min: u32, max: u32| {
            let mut intervals = Vec::new();
            for c in min..=max {
                if crate::unicode::general_category(c) != "Cs" {
                    intervals.push((c, c));
                }
            }
            CharSet::from_intervals(intervals)
        };
        for (min, max) in [
            (0, MAX_CODEPOINT),
            (0xD000, 0xE100),
            (0xD900, 0xDA00),
            (0x41, 0x5A),
        ] {
            let bounds = || CharSetSpec {
                min_codepoint: Some(min),
                max_codepoint: Some(max),
                ..spec()
            };
            let excluded = CharSet::from_spec(&CharSetSpec {
                exclude_categories: Some(vec!["Cs".into()]),
                ..bounds()
            })
            .unwrap();
            let listed = CharSet::from_spec(&CharSetSpec {
                categories: Some(
                    ALL_CATEGORIES
                        .iter()
                        .filter(|c| **c != "Cs")
                        .map(|c| c.to_string())
                        .collect(),
                ),
                ..bounds()
            })
            .unwrap();
            let expected = walked(min, max);
            assert_eq!(excluded, expected, "{min:#x}..={max:#x}");
            assert_eq!(listed, expected, "{min:#x}..={max:#x}");
        }
    }

    #[test]
    fn alphabet_order() {
        let set = CharSet::from_spec(&CharSetSpec {
            categories: Some(vec![]),
            include_characters: Some("FEDCBA".into()),
            ..spec()
        })
        .unwrap();
        assert_eq!(set.len(), 6);
        assert_eq!(set.char_at_shrink_index(0), Some('A' as u32));
        let lower = CharSet::from_spec(&CharSetSpec {
            min_codepoint: Some('a' as u32),
            max_codepoint: Some('z' as u32),
            ..spec()
        })
        .unwrap();
        assert_eq!(lower.char_at_shrink_index(0), Some('a' as u32));
        assert_eq!(lower.char_at_shrink_index(25), Some('z' as u32));
    }

    #[test]
    fn categories_and_exclusions() {
        let digits = CharSet::from_spec(&CharSetSpec {
            categories: Some(vec!["Nd".into()]),
            codec: Some("ascii".into()),
            ..spec()
        })
        .unwrap();
        assert_eq!(digits.len(), 10);
        let no_letters = CharSet::from_spec(&CharSetSpec {
            exclude_categories: Some(vec!["L".into()]),
            max_codepoint: Some(0x7F),
            exclude_characters: Some("0".into()),
            ..spec()
        })
        .unwrap();
        assert!(!no_letters.contains('a' as u32));
        assert!(!no_letters.contains('0' as u32));
        assert!(no_letters.contains('1' as u32));
        assert!(matches!(
            CharSet::from_spec(&CharSetSpec {
                categories: Some(vec!["Xx".into()]),
                ..spec()
            }),
            Err(CharSetError::UnknownCategory(_))
        ));
    }
}
