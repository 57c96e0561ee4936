//! Character passes: moves inside a string that the per-choice string
//! shrinker cannot make. That shrinker lowers one character at a time along
//! the alphabet's shrink order, which stalls where a property ties
//! characters together (two equal characters must stay equal, and differ
//! from a third) or picks out a letter whatever its case (`t` sits far past
//! `T` in shrink order, and every character between them fails).

use crate::charset::CharSet;
use crate::choice::{ChoiceValue, Constraints};
use crate::shrink::Shrinker;
use crate::shrink::search::bisect;

/// Lowers every copy of a character that occurs more than once in a string
/// together, to the simplest character that works (a binary search over the
/// shrink order below it, the simplest first). A character it lands on that
/// the string already holds takes the lowered one's place (the two are
/// swapped): a property of which characters are equal (`"ÕÕ0"`, a run of
/// two before a different one) keeps holding, and the copies get to the
/// front of the order (`"00Õ"`, then `"001"`).
pub(in crate::shrink) fn lower_duplicated_characters(s: &mut Shrinker) {
    let mut i = 0;
    while i < s.best.nodes.len() && !s.exhausted() {
        let Some((points, alphabet)) = free_string(s, i) else {
            i += 1;
            continue;
        };
        for c in duplicated(&points) {
            if s.exhausted() {
                return;
            }
            // Each character from the string as it is now (an earlier
            // character's success may have swapped this one away).
            let Some((now, _)) = free_string(s, i) else {
                break;
            };
            if now.iter().filter(|&&x| x == c).count() < 2 {
                continue;
            }
            let rank = alphabet.shrink_index(c);
            if rank == 0 || rank == u64::MAX {
                continue;
            }
            let mut attempt = |r: u128| -> bool {
                let Some(d) = alphabet.char_at_shrink_index(r as u64) else {
                    return false;
                };
                let swapped: Vec<u32> = now
                    .iter()
                    .map(|&x| match x {
                        x if x == c => d,
                        x if x == d => c,
                        x => x,
                    })
                    .collect();
                let mut candidate = s.best.choices();
                candidate[i] = ChoiceValue::String(swapped);
                s.consider(candidate)
            };
            if !attempt(0) {
                bisect(0, u128::from(rank), |r| !attempt(r));
            }
        }
        i += 1;
    }
}

/// In the polish round, replaces each character of a string by its other
/// case when that is simpler in the alphabet's shrink order (`t` by `T`):
/// the shrink order puts `0`..`Z` first, so a property of a letter whatever
/// its case stalls the string shrinker at the lower-case one, with every
/// character between the two failing. One test case per such character.
pub(in crate::shrink) fn simplify_letter_case(s: &mut Shrinker) {
    if !s.polish {
        return;
    }
    let mut i = 0;
    while i < s.best.nodes.len() && !s.exhausted() {
        let Some((points, alphabet)) = free_string(s, i) else {
            i += 1;
            continue;
        };
        for (k, &c) in points.iter().enumerate() {
            if s.exhausted() {
                return;
            }
            let Some(other) = simpler_case(c, &alphabet) else {
                continue;
            };
            let Some((mut now, _)) = free_string(s, i) else {
                break;
            };
            if now.get(k) != Some(&c) {
                continue;
            }
            now[k] = other;
            let mut candidate = s.best.choices();
            candidate[i] = ChoiceValue::String(now);
            s.consider(candidate);
        }
        i += 1;
    }
}

/// Choice `i` of the best example, if it is a free string: its code points
/// and alphabet.
fn free_string(s: &Shrinker, i: usize) -> Option<(Vec<u32>, std::sync::Arc<CharSet>)> {
    let node = s.best.nodes.get(i)?;
    match (&node.value, &node.constraints) {
        (ChoiceValue::String(points), Constraints::String { alphabet, .. }) if !node.forced => {
            Some((points.clone(), alphabet.clone()))
        }
        _ => None,
    }
}

/// The characters that occur more than once in `points`, in the order of
/// their first occurrence.
fn duplicated(points: &[u32]) -> Vec<u32> {
    let mut seen = std::collections::HashSet::new();
    let mut twice = Vec::new();
    for &c in points {
        if !seen.insert(c) && !twice.contains(&c) {
            twice.push(c);
        }
    }
    twice
}

/// `c`'s upper- or lower-case form, when it is a single character of
/// `alphabet` that comes before `c` in its shrink order.
fn simpler_case(c: u32, alphabet: &CharSet) -> Option<u32> {
    let ch = char::from_u32(c)?;
    let rank = alphabet.shrink_index(c);
    [one(ch.to_uppercase()), one(ch.to_lowercase())]
        .into_iter()
        .flatten()
        .filter(|&d| d != c && alphabet.contains(d))
        .min_by_key(|&d| alphabet.shrink_index(d))
        .filter(|&d| alphabet.shrink_index(d) < rank)
}

/// The one character an iterator of case forms yields, if it yields exactly one.
fn one(mut forms: impl Iterator<Item = char>) -> Option<u32> {
    let first = forms.next()?;
    forms.next().is_none().then_some(first as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charset::CharSetSpec;

    #[test]
    fn duplicated_characters_in_first_occurrence_order() {
        assert_eq!(duplicated(&[5, 3, 5, 3, 3, 7]), vec![5, 3]);
        assert!(duplicated(&[1, 2, 3]).is_empty());
    }

    #[test]
    fn a_lower_case_letter_has_a_simpler_upper_case_form() {
        let alphabet = CharSet::from_spec(&CharSetSpec::default()).unwrap();
        assert_eq!(simpler_case('t' as u32, &alphabet), Some('T' as u32));
        assert_eq!(simpler_case('T' as u32, &alphabet), None);
        assert_eq!(simpler_case('0' as u32, &alphabet), None);
        // Past `Z` the shrink order follows code points.
        assert_eq!(simpler_case(0xe9, &alphabet), Some(0xc9));
        assert_eq!(simpler_case(0xc9, &alphabet), None);
        // One form of several characters is no replacement.
        assert_eq!(simpler_case(0xdf, &alphabet), None);
    }
}
