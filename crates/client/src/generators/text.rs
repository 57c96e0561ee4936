//! Strings, characters, byte strings and regex-matched strings.
//!
//! A string is one string choice over an alphabet (shrinking toward shorter
//! strings of `0`, `A`, ...). The alphabet comes from Hypothesis' character
//! options, built once per generator; surrogates are always left out, since a
//! Rust `String` cannot hold them.

use super::Generator;
use crate::test_case::{TestCase, usage_error};
use geist_engine::Value;
use geist_engine::charset::{CharSet, CharSetSpec};
use geist_engine::choice::SizeConstraints;
use geist_engine::generate::Schema;
use geist_engine::generate::regex::RegexSchema;
use std::sync::{Arc, OnceLock};

const SURROGATES: (u32, u32) = (0xD800, 0xDFFF);

/// The character options shared by [`text`], [`characters`] and [`from_regex`]'s alphabet.
#[derive(Clone, Debug, Default)]
pub(crate) struct CharacterOptions {
    spec: CharSetSpec,
    alphabet: OnceLock<Result<Arc<CharSet>, String>>,
}

impl CharacterOptions {
    fn edit(&mut self, f: impl FnOnce(&mut CharSetSpec)) {
        f(&mut self.spec);
        self.alphabet = OnceLock::new();
    }

    /// The options as given (what a server is sent).
    pub(crate) fn spec(&self) -> &CharSetSpec {
        &self.spec
    }

    /// The characters the options allow, surrogates excluded, built once
    /// (an invalid option is a usage error naming `what`).
    pub(crate) fn alphabet(&self, what: &str) -> Arc<CharSet> {
        let built = self.alphabet.get_or_init(|| {
            let set = CharSet::from_spec(&self.spec).map_err(|e| format!("{what}: {e}"))?;
            Ok(Arc::new(without_surrogates(set)))
        });
        match built {
            Ok(set) => set.clone(),
            Err(message) => usage_error(message.clone()),
        }
    }
}

fn without_surrogates(set: CharSet) -> CharSet {
    let overlaps = set
        .intervals()
        .iter()
        .any(|&(a, b)| a <= SURROGATES.1 && b >= SURROGATES.0);
    if !overlaps {
        return set;
    }
    let mut intervals = Vec::with_capacity(set.intervals().len() + 1);
    for &(a, b) in set.intervals() {
        if b < SURROGATES.0 || a > SURROGATES.1 {
            intervals.push((a, b));
            continue;
        }
        if a < SURROGATES.0 {
            intervals.push((a, SURROGATES.0 - 1));
        }
        if b > SURROGATES.1 {
            intervals.push((SURROGATES.1 + 1, b));
        }
    }
    CharSet::from_intervals(intervals)
}

macro_rules! character_option_methods {
    () => {
        /// Only characters encodable in `codec`: `"ascii"`, `"latin-1"` or `"utf-8"`.
        pub fn codec(mut self, codec: &str) -> Self {
            let codec = codec.to_string();
            self.options.edit(|s| s.codec = Some(codec));
            self
        }

        /// Lowest code point.
        pub fn min_codepoint(mut self, c: u32) -> Self {
            self.options.edit(|s| s.min_codepoint = Some(c));
            self
        }

        /// Highest code point.
        pub fn max_codepoint(mut self, c: u32) -> Self {
            self.options.edit(|s| s.max_codepoint = Some(c));
            self
        }

        /// Only these Unicode general categories (`"L"`, `"Nd"`, ...).
        pub fn categories(mut self, categories: &[&str]) -> Self {
            let list = categories.iter().map(|c| c.to_string()).collect();
            self.options.edit(|s| s.categories = Some(list));
            self
        }

        /// All but these Unicode general categories.
        pub fn exclude_categories(mut self, categories: &[&str]) -> Self {
            let list = categories.iter().map(|c| c.to_string()).collect();
            self.options.edit(|s| s.exclude_categories = Some(list));
            self
        }

        /// Characters always included.
        pub fn include_characters(mut self, chars: &str) -> Self {
            let chars = chars.to_string();
            self.options.edit(|s| s.include_characters = Some(chars));
            self
        }

        /// Characters never generated.
        pub fn exclude_characters(mut self, chars: &str) -> Self {
            let chars = chars.to_string();
            self.options.edit(|s| s.exclude_characters = Some(chars));
            self
        }
    };
}

/// Strings of Unicode scalar values.
#[derive(Clone, Debug)]
pub struct TextGenerator {
    min_size: usize,
    max_size: Option<usize>,
    options: CharacterOptions,
}

/// Strings (any characters but surrogates, by default of any length).
pub fn text() -> TextGenerator {
    TextGenerator {
        min_size: 0,
        max_size: None,
        options: CharacterOptions::default(),
    }
}

impl TextGenerator {
    /// Fewest characters (code points).
    pub fn min_size(mut self, n: usize) -> Self {
        self.min_size = n;
        self
    }

    /// Most characters (code points).
    pub fn max_size(mut self, n: usize) -> Self {
        self.max_size = Some(n);
        self
    }

    character_option_methods!();
}

impl Generator for TextGenerator {
    type Output = String;

    fn generate(&self, tc: &mut TestCase) -> String {
        let max_size = self.max_size.unwrap_or(usize::MAX);
        if max_size < self.min_size {
            usage_error(format!(
                "text: max_size={max_size} < min_size={}",
                self.min_size
            ));
        }
        let size = SizeConstraints {
            min_size: self.min_size,
            max_size,
        };
        tc.choose_text(&self.options, size, "text")
    }
}

/// Single characters.
#[derive(Clone, Debug)]
pub struct CharacterGenerator {
    options: CharacterOptions,
}

/// Characters (any but surrogates by default; shrinking toward `'0'`).
pub fn characters() -> CharacterGenerator {
    CharacterGenerator {
        options: CharacterOptions::default(),
    }
}

impl CharacterGenerator {
    character_option_methods!();
}

impl Generator for CharacterGenerator {
    type Output = char;

    fn generate(&self, tc: &mut TestCase) -> char {
        let one = SizeConstraints {
            min_size: 1,
            max_size: 1,
        };
        let text = tc.choose_text(&self.options, one, "characters");
        match text.chars().next() {
            Some(c) => c,
            None => usage_error("characters: an empty string was drawn for a character".into()),
        }
    }
}

/// Byte strings.
#[derive(Clone, Copy, Debug)]
pub struct BinaryGenerator {
    min_size: usize,
    max_size: Option<usize>,
}

/// Byte strings (`Vec<u8>`), shrinking toward shorter strings of zero bytes.
pub fn binary() -> BinaryGenerator {
    BinaryGenerator {
        min_size: 0,
        max_size: None,
    }
}

impl BinaryGenerator {
    /// Fewest bytes.
    pub fn min_size(mut self, n: usize) -> Self {
        self.min_size = n;
        self
    }

    /// Most bytes.
    pub fn max_size(mut self, n: usize) -> Self {
        self.max_size = Some(n);
        self
    }
}

impl Generator for BinaryGenerator {
    type Output = Vec<u8>;

    fn generate(&self, tc: &mut TestCase) -> Vec<u8> {
        let max_size = self.max_size.unwrap_or(usize::MAX);
        if max_size < self.min_size {
            usage_error(format!(
                "binary: max_size={max_size} < min_size={}",
                self.min_size
            ));
        }
        tc.choose_bytes(SizeConstraints {
            min_size: self.min_size,
            max_size,
        })
    }
}

/// Strings matching a regular expression.
#[derive(Clone, Debug)]
pub struct RegexGenerator {
    pattern: String,
    fullmatch: bool,
    alphabet: Option<CharacterOptions>,
    schema: OnceLock<Result<Schema, String>>,
}

/// Strings matching `pattern` (Python `re` syntax). By default the string
/// only contains a match (like `re.search`); `.fullmatch(true)` makes the
/// whole string match.
pub fn from_regex(pattern: &str) -> RegexGenerator {
    RegexGenerator {
        pattern: pattern.to_string(),
        fullmatch: false,
        alphabet: None,
        schema: OnceLock::new(),
    }
}

impl RegexGenerator {
    /// Whether the whole string must match.
    pub fn fullmatch(mut self, fullmatch: bool) -> Self {
        self.fullmatch = fullmatch;
        self.schema = OnceLock::new();
        self
    }

    /// Restricts every character (padding included) to the alphabet of `characters`.
    pub fn alphabet(mut self, characters: CharacterGenerator) -> Self {
        self.alphabet = Some(characters.options);
        self.schema = OnceLock::new();
        self
    }

    fn build(&self) -> Result<Schema, String> {
        let alphabet = match &self.alphabet {
            None => None,
            Some(options) => {
                let set = CharSet::from_spec(&options.spec)
                    .map_err(|e| format!("from_regex alphabet: {e}"))?;
                Some(Arc::new(without_surrogates(set)))
            }
        };
        let regex = RegexSchema::parse(&self.pattern, self.fullmatch, alphabet)
            .map_err(|e| format!("from_regex({:?}): {e}", self.pattern))?;
        Ok(Schema::Regex(Arc::new(regex)))
    }
}

impl Generator for RegexGenerator {
    type Output = String;

    fn generate(&self, tc: &mut TestCase) -> String {
        let wire = || {
            let mut map = vec![
                (Value::text("type"), Value::text("regex")),
                (Value::text("pattern"), Value::text(&self.pattern)),
                (Value::text("fullmatch"), Value::Bool(self.fullmatch)),
            ];
            if let Some(options) = &self.alphabet {
                map.push((Value::text("alphabet"), spec_schema(&options.spec)));
            }
            Value::Map(map)
        };
        draw_string(
            tc,
            self.schema.get_or_init(|| self.build()),
            &wire,
            "from_regex",
        )
    }
}

/// Draws from a string-valued engine schema built once by its generator: a
/// build error is a usage error, and the value is text (lossily, should the
/// engine ever produce non-UTF-8).
pub(super) fn draw_string(
    tc: &mut TestCase,
    schema: &Result<Schema, String>,
    wire: &dyn Fn() -> Value,
    what: &str,
) -> String {
    let schema = match schema {
        Ok(schema) => schema,
        Err(message) => usage_error(message.clone()),
    };
    match tc.choose_schema(schema, wire) {
        Value::String(bytes) => match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        },
        other => usage_error(format!(
            "{what}: the engine produced a {} instead of a string",
            other.type_name()
        )),
    }
}

/// Character options as the entries of a Hegel `string` schema (or a regex
/// alphabet), with surrogates excluded: a Rust `String` cannot hold them.
pub(crate) fn spec_schema(spec: &CharSetSpec) -> Value {
    let mut map = Vec::new();
    let texts = |list: &[String]| Value::Array(list.iter().map(|c| Value::text(c)).collect());
    if let Some(codec) = &spec.codec {
        map.push((Value::text("codec"), Value::text(codec)));
    }
    if let Some(c) = spec.min_codepoint {
        map.push((Value::text("min_codepoint"), Value::Integer(i128::from(c))));
    }
    if let Some(c) = spec.max_codepoint {
        map.push((Value::text("max_codepoint"), Value::Integer(i128::from(c))));
    }
    match (&spec.categories, &spec.exclude_categories) {
        (Some(categories), _) => {
            // "C" holds the surrogates: name its other minor categories instead.
            let kept: Vec<String> = categories
                .iter()
                .flat_map(|c| match c.as_str() {
                    "C" => vec!["Cc", "Cf", "Co", "Cn"],
                    "Cs" => vec![],
                    other => vec![other],
                })
                .map(str::to_string)
                .collect();
            map.push((Value::text("categories"), texts(&kept)));
            if let Some(excluded) = &spec.exclude_categories {
                map.push((Value::text("exclude_categories"), texts(excluded)));
            }
        }
        (None, excluded) => {
            let mut excluded = excluded.clone().unwrap_or_default();
            if !excluded.iter().any(|c| c == "Cs") {
                excluded.push("Cs".to_string());
            }
            map.push((Value::text("exclude_categories"), texts(&excluded)));
        }
    }
    if let Some(chars) = &spec.include_characters {
        map.push((Value::text("include_characters"), Value::text(chars)));
    }
    if let Some(chars) = &spec.exclude_characters {
        map.push((Value::text("exclude_characters"), Value::text(chars)));
    }
    Value::Map(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn surrogates_are_removed() {
        let set = without_surrogates(CharSet::from_intervals(vec![
            (0xD000, 0xE000),
            (0x41, 0x41),
        ]));
        assert!(set.contains(0x41));
        assert!(set.contains(0xD7FF));
        assert!(!set.contains(0xD800));
        assert!(!set.contains(0xDFFF));
        assert!(set.contains(0xE000));
    }
}
