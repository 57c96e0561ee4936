//! String generators: text over an alphabet, regular expressions, emails,
//! URLs and domains — each the engine's schema of that kind, built and
//! checked once when the generator is made, drawn with
//! `hegel_generate_string`.

use crate::abi::*;
use crate::context::{guard, hegel_context_t, require, write};
use crate::error::{AbiError, AbiResult};
use crate::generate::default_max_size;
use crate::handles::{Pinned, Recent, Slots};
use crate::test_case::{hegel_test_case_t, with_handle};
use crate::text;
use geist_engine::choice::SizeConstraints;
use geist_engine::generate::{Schema, generate};
use geist_engine::unicode::UnicodeVersion;
use geist_engine::value::{Value, encode_utf8_with_room, encode_wtf8_with_room};
use std::sync::{Arc, LazyLock, Mutex};

/// Opaque to C: `hegel_string_generator_t`.
pub enum hegel_string_generator_t {}

/// A string generator.
pub struct StringGenerator {
    schema: Schema,
    /// For text generators: the character options, usable as an alphabet.
    alphabet: Option<Value>,
}

/// The kind tag of string generator handles.
const STRING_GENERATOR_KIND: u8 = 12;
const STRING_GENERATOR_NAME: &str = "string generator";

/// Every string generator handle, in place ([`Pinned`]): hegeltest's
/// `text()` makes its generator anew for every draw (the same one, shared:
/// see [`TEXT_GENERATORS`]), draws once and frees it, so a handle is made,
/// looked up and freed in every test case.
static STRING_GENERATORS: Slots<Pinned<StringGenerator>> = Slots::new();

std::thread_local! {
    /// The string generator handles this thread used last: a handle made
    /// on this thread is found again with loads only.
    static RECENT: std::cell::RefCell<Recent<StringGenerator>> = const { Recent::new() };
}

fn key(name: &str) -> Value {
    Value::text(name)
}

fn build(map: Vec<(Value, Value)>, alphabet: Option<Value>) -> AbiResult<StringGenerator> {
    let schema = Schema::parse(&Value::Map(map)).map_err(|e| AbiError::arg(e.to_string()))?;
    Ok(StringGenerator { schema, alphabet })
}

fn hand_out(generator: StringGenerator, out: *mut *mut hegel_string_generator_t) -> AbiResult {
    hand_out_shared(Arc::new(generator), out)
}

fn hand_out_shared(
    generator: Arc<StringGenerator>,
    out: *mut *mut hegel_string_generator_t,
) -> AbiResult {
    let raw = STRING_GENERATORS
        .insert_shared(&RECENT, STRING_GENERATOR_KIND, generator)
        .ok_or_else(|| AbiError::too_many_handles("string generator"))?;
    write(out, raw as *mut hegel_string_generator_t, "out_generator")
}

/// Text generators already built, by their schema. Building one builds its
/// alphabet, which walks the Unicode tables (milliseconds); a frontend makes
/// the same generator again for every draw (hegeltest's `text()`), so each
/// distinct one is built once and shared: a generator is immutable, each
/// handle to it is its own. Cleared when it holds too many. Looked up by
/// comparing the schema's parts (a handful of small values), newest first.
type TextGenerators = Vec<((u64, Option<u64>, Value), Arc<StringGenerator>)>;
static TEXT_GENERATORS: LazyLock<Mutex<TextGenerators>> = LazyLock::new(Mutex::default);
const TEXT_GENERATORS_KEPT: usize = 256;

/// The arguments of a `hegel_string_generator_text` call, as views.
struct TextArgs<'a> {
    min_size: u64,
    max_size: u64,
    codec: Option<&'a str>,
    min_codepoint: u32,
    max_codepoint: u32,
    categories: Option<&'a [&'a str]>,
    excluded: &'a [&'a str],
    include: &'a str,
    exclude: &'a str,
    /// The Unicode version categories follow (`None`: the newest).
    unicode_version: Option<UnicodeVersion>,
}

/// The same arguments, owned.
#[derive(Debug, PartialEq)]
struct OwnedTextArgs {
    min_size: u64,
    max_size: u64,
    codec: Option<String>,
    min_codepoint: u32,
    max_codepoint: u32,
    categories: Option<Vec<String>>,
    excluded: Vec<String>,
    include: String,
    exclude: String,
    unicode_version: Option<UnicodeVersion>,
}

/// The arguments of a `hegel_string_generator_text` call as the caller
/// passed them, not yet read.
struct RawTextArgs {
    min_size: u64,
    max_size: u64,
    codec: *const hegel_string_t,
    min_codepoint: u32,
    max_codepoint: u32,
    categories: *const hegel_string_t,
    categories_len: usize,
    excluded: *const hegel_string_t,
    excluded_len: usize,
    include: hegel_string_t,
    exclude: hegel_string_t,
}

impl RawTextArgs {
    /// Whether these are, byte for byte, the arguments `owned` holds under
    /// `unicode_version` (they are then as valid as those were): compared
    /// without reading them into strings, which costs allocations and UTF-8
    /// checks in every test case.
    ///
    /// # Safety
    /// The views and arrays satisfy `hegel_string_generator_text`'s contract.
    unsafe fn are(&self, owned: &OwnedTextArgs, unicode_version: Option<UnicodeVersion>) -> bool {
        // SAFETY: the caller's views, as the contract says.
        unsafe {
            self.min_size == owned.min_size
                && self.max_size == owned.max_size
                && self.min_codepoint == owned.min_codepoint
                && self.max_codepoint == owned.max_codepoint
                && unicode_version == owned.unicode_version
                && match (self.codec.is_null(), &owned.codec) {
                    (true, None) => true,
                    (false, Some(codec)) => text::view_is(*self.codec, codec),
                    _ => false,
                }
                && match (self.categories.is_null(), &owned.categories) {
                    (true, None) => true,
                    (false, Some(categories)) => {
                        text::views_are(self.categories, self.categories_len, categories)
                    }
                    _ => false,
                }
                && text::views_are(self.excluded, self.excluded_len, &owned.excluded)
                && text::view_is(self.include, &owned.include)
                && text::view_is(self.exclude, &owned.exclude)
        }
    }
}

impl TextArgs<'_> {
    fn to_owned(&self) -> OwnedTextArgs {
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        OwnedTextArgs {
            min_size: self.min_size,
            max_size: self.max_size,
            codec: self.codec.map(str::to_string),
            min_codepoint: self.min_codepoint,
            max_codepoint: self.max_codepoint,
            categories: self.categories.map(strings),
            excluded: strings(self.excluded),
            include: self.include.to_string(),
            exclude: self.exclude.to_string(),
            unicode_version: self.unicode_version,
        }
    }
}

thread_local! {
    /// This thread's last text generator and the arguments it was made from.
    static LAST_TEXT: std::cell::RefCell<Option<(OwnedTextArgs, Arc<StringGenerator>)>> =
        const { std::cell::RefCell::new(None) };
}

fn remember_text(args: OwnedTextArgs, generator: &Arc<StringGenerator>) {
    let previous = LAST_TEXT.with(|last| last.replace(Some((args, Arc::clone(generator)))));
    drop(previous);
}

/// The alphabet of an optional text generator.
pub fn alphabet_of(alphabet: *const hegel_string_generator_t) -> AbiResult<Option<Value>> {
    if alphabet.is_null() {
        return Ok(None);
    }
    STRING_GENERATORS
        .with_shared(
            &RECENT,
            alphabet,
            STRING_GENERATOR_KIND,
            STRING_GENERATOR_NAME,
            |generator| generator.alphabet.clone(),
        )?
        .map(Some)
        .ok_or_else(|| AbiError::arg("the alphabet must be a text generator"))
}

/// Why a text generator over an empty alphabet is refused (unless it may
/// only draw the empty string). "InvalidArgument" is the name frontends
/// give a usage error, as Hypothesis does.
const NO_CHARACTERS: &str = "InvalidArgument: No valid characters: the codec, code point range, \
     categories and include/exclude characters leave none, so only the empty string could be drawn";

/// The categories every character but the surrogates falls in: what `C`
/// (the other categories) means in a string, which cannot hold a surrogate.
const OTHER_CATEGORIES_BUT_SURROGATES: [&str; 4] = ["Cc", "Cf", "Co", "Cn"];

/// The engine's character options (a string schema's, usable as an
/// alphabet) for the arguments of `hegel_string_generator_text`, as its
/// documentation reads them: the code point range is intersected with the
/// codec's, an empty intersection (or bounds given the wrong way round)
/// leaving only `include_characters`; surrogates are always removed,
/// whatever the categories say.
fn character_options(args: &TextArgs<'_>) -> AbiResult<Vec<(Value, Value)>> {
    let mut options = Vec::new();
    let codec_max = match args.codec {
        None | Some("utf-8") => geist_engine::charset::MAX_CODEPOINT,
        Some("ascii") => 0x7f,
        Some("latin-1" | "iso-8859-1") => 0xff,
        Some(other) => {
            return Err(AbiError::arg(format!(
                "invalid codec: {other:?} (expected ascii, latin-1, iso-8859-1 or utf-8)"
            )));
        }
    };
    let max_codepoint = args.max_codepoint.min(codec_max);
    if args.min_codepoint > max_codepoint {
        // No code point is in range: the alphabet is the included
        // characters, less the excluded ones.
        options.push((key("categories"), Value::Array(Vec::new())));
    } else {
        options.push((
            key("min_codepoint"),
            Value::Integer(i128::from(args.min_codepoint)),
        ));
        options.push((
            key("max_codepoint"),
            Value::Integer(i128::from(max_codepoint)),
        ));
        match args.categories {
            Some(categories) => {
                let mut kept = Vec::new();
                for category in categories {
                    match *category {
                        "Cs" => {}
                        "C" => kept.extend(OTHER_CATEGORIES_BUT_SURROGATES.map(Value::text)),
                        other => kept.push(Value::text(other)),
                    }
                }
                options.push((key("categories"), Value::Array(kept)));
            }
            None => {
                let mut excluded: Vec<Value> =
                    args.excluded.iter().map(|c| Value::text(c)).collect();
                if !args.excluded.contains(&"Cs") {
                    excluded.push(Value::text("Cs"));
                }
                options.push((key("exclude_categories"), Value::Array(excluded)));
            }
        }
    }
    if !args.include.is_empty() {
        options.push((key("include_characters"), Value::text(args.include)));
    }
    if !args.exclude.is_empty() {
        options.push((key("exclude_characters"), Value::text(args.exclude)));
    }
    if let Some(version) = args.unicode_version {
        options.push((key("unicode_version"), Value::text(&version.to_string())));
    }
    Ok(options)
}

/// A text generator.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_string_generator_text(
    ctx: *mut hegel_context_t,
    min_size: u64,
    max_size: u64,
    codec: *const hegel_string_t,
    min_codepoint: u32,
    max_codepoint: u32,
    categories: *const hegel_string_t,
    categories_len: usize,
    exclude_categories: *const hegel_string_t,
    exclude_categories_len: usize,
    include_characters: hegel_string_t,
    exclude_characters: hegel_string_t,
    out_generator: *mut *mut hegel_string_generator_t,
) -> hegel_result_t {
    guard(ctx, || {
        require(out_generator, "out_generator")?;
        let unicode_version = crate::profiles::unicode_version();
        // The same arguments as this thread's last call (hegeltest's text()
        // makes its generator anew in every test case): the same generator,
        // without reading the arguments or building its schema again.
        let raw = RawTextArgs {
            min_size,
            max_size,
            codec,
            min_codepoint,
            max_codepoint,
            categories,
            categories_len,
            excluded: exclude_categories,
            excluded_len: exclude_categories_len,
            include: include_characters,
            exclude: exclude_characters,
        };
        let last = LAST_TEXT.with(|last| {
            last.borrow()
                .as_ref()
                // SAFETY: the caller's views.
                .filter(|(owned, _)| unsafe { raw.are(owned, unicode_version) })
                .map(|(_, generator)| Arc::clone(generator))
        });
        if let Some(generator) = last {
            return hand_out_shared(generator, out_generator);
        }
        // SAFETY: the caller's views.
        let (codec, categories, excluded, include, exclude) = unsafe {
            (
                text::optional_text(codec, "codec")?,
                if categories.is_null() {
                    None
                } else {
                    Some(text::text_array(categories, categories_len, "categories")?)
                },
                text::text_array(
                    exclude_categories,
                    exclude_categories_len,
                    "exclude_categories",
                )?,
                text::text(include_characters, "include_characters")?,
                text::text(exclude_characters, "exclude_characters")?,
            )
        };
        let args = TextArgs {
            min_size,
            max_size,
            codec,
            min_codepoint,
            max_codepoint,
            categories: categories.as_deref(),
            excluded: &excluded,
            include,
            exclude,
            unicode_version,
        };
        let owned_args = args.to_owned();
        let max = match max_size {
            u64::MAX => None,
            HEGEL_MAX_SIZE_DEFAULT => Some(default_max_size(min_size)),
            m => Some(m),
        };
        if let Some(max) = max
            && max < min_size
        {
            return Err(AbiError::arg(format!(
                "max_size {max} is below min_size {min_size}"
            )));
        }
        let options = character_options(&args)?;
        let alphabet = Value::Map(options.clone());
        let cache_key = (min_size, max, alphabet.clone());
        let cached = TEXT_GENERATORS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .rev()
            .find(|(key, _)| *key == cache_key)
            .map(|(_, generator)| Arc::clone(generator));
        if let Some(generator) = cached {
            remember_text(owned_args, &generator);
            return hand_out_shared(generator, out_generator);
        }
        let charset = geist_engine::generate::schema::parse_charset(&alphabet)
            .map_err(|e| AbiError::arg(e.to_string()))?;
        if charset.is_empty() && max != Some(0) {
            return Err(AbiError::arg(NO_CHARACTERS));
        }
        let mut map = vec![
            (key("type"), Value::text("string")),
            (key("min_size"), Value::Integer(i128::from(min_size))),
        ];
        if let Some(max) = max {
            map.push((key("max_size"), Value::Integer(i128::from(max))));
        }
        map.extend(options);
        let generator = Arc::new(build(map, Some(alphabet))?);
        let mut cache = TEXT_GENERATORS.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= TEXT_GENERATORS_KEPT {
            cache.clear();
        }
        cache.push((cache_key, Arc::clone(&generator)));
        drop(cache);
        remember_text(owned_args, &generator);
        hand_out_shared(generator, out_generator)
    })
}

/// A generator of strings matching a regular expression.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_string_generator_regex(
    ctx: *mut hegel_context_t,
    pattern: hegel_string_t,
    fullmatch: bool,
    alphabet: *const hegel_string_generator_t,
    out_generator: *mut *mut hegel_string_generator_t,
) -> hegel_result_t {
    guard(ctx, || {
        require(out_generator, "out_generator")?;
        // SAFETY: the caller's view.
        let pattern = unsafe { text::text(pattern, "pattern")? };
        let mut map = vec![
            (key("type"), Value::text("regex")),
            (key("pattern"), Value::text(pattern)),
            (key("fullmatch"), Value::Bool(fullmatch)),
        ];
        match alphabet_of(alphabet)? {
            Some(alphabet) => map.push((key("alphabet"), alphabet)),
            // Without an alphabet, the text around a match is printable
            // ASCII: outside ASCII, the frontend's own regex dialect may
            // disagree with Python's on what a word character is (Rust's
            // `\w` has the combining marks Python's lacks), so a `\b` the
            // pattern asks for would not hold in the frontend's eyes.
            None => map.push((
                key("padding_alphabet"),
                Value::Map(vec![
                    (key("min_codepoint"), Value::Integer(0x20)),
                    (key("max_codepoint"), Value::Integer(0x7e)),
                ]),
            )),
        }
        hand_out(build(map, None)?, out_generator)
    })
}

/// An email address generator.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_string_generator_email(
    ctx: *mut hegel_context_t,
    out_generator: *mut *mut hegel_string_generator_t,
) -> hegel_result_t {
    guard(ctx, || {
        require(out_generator, "out_generator")?;
        hand_out(
            build(vec![(key("type"), Value::text("email"))], None)?,
            out_generator,
        )
    })
}

/// A URL generator.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_string_generator_url(
    ctx: *mut hegel_context_t,
    out_generator: *mut *mut hegel_string_generator_t,
) -> hegel_result_t {
    guard(ctx, || {
        require(out_generator, "out_generator")?;
        hand_out(
            build(vec![(key("type"), Value::text("url"))], None)?,
            out_generator,
        )
    })
}

/// A domain name generator.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_string_generator_domain(
    ctx: *mut hegel_context_t,
    max_length: u64,
    out_generator: *mut *mut hegel_string_generator_t,
) -> hegel_result_t {
    guard(ctx, || {
        require(out_generator, "out_generator")?;
        if max_length < 4 {
            return Err(AbiError::arg(format!(
                "max_length {max_length} leaves no eligible TLDs: the shortest domain \
                 (a one-character label, a dot and a two-letter TLD) has 4 characters"
            )));
        }
        if max_length > 255 {
            return Err(AbiError::arg(format!(
                "max_length {max_length} is above the RFC 1035 limit of 255"
            )));
        }
        let map = vec![
            (key("type"), Value::text("domain")),
            (key("max_length"), Value::Integer(i128::from(max_length))),
        ];
        hand_out(build(map, None)?, out_generator)
    })
}

/// Frees a string generator; NULL is a no-op.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_string_generator_free(
    ctx: *mut hegel_context_t,
    generator: *mut hegel_string_generator_t,
) -> hegel_result_t {
    guard(ctx, || {
        STRING_GENERATORS.release_shared(
            &RECENT,
            generator,
            STRING_GENERATOR_KIND,
            STRING_GENERATOR_NAME,
        )
    })
}

/// `bytes` as text, each ill-formed sequence (a lone surrogate's WTF-8)
/// replaced by U+FFFD.
fn lossy(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// Draws a string.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_generate_string(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    generator: *const hegel_string_generator_t,
    out_result: *mut hegel_owned_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        with_handle(tc, |tc| {
            STRING_GENERATORS.with_shared(
                &RECENT,
                generator,
                STRING_GENERATOR_KIND,
                STRING_GENERATOR_NAME,
                |generator| {
                    require(out_result, "out_result")?;
                    let drawn = tc.draw(|data| match &generator.schema {
                        // A plain string (what text() makes): encoded straight from
                        // the recorded choice, with room for the NUL the caller
                        // gets, so the buffer is handed out without regrowing and
                        // without a second, validating pass.
                        Schema::String {
                            alphabet,
                            min_size,
                            max_size,
                        } => Ok(data.draw_string_with(
                            Arc::clone(alphabet),
                            SizeConstraints {
                                min_size: *min_size,
                                max_size: max_size.unwrap_or(usize::MAX),
                            },
                            |points| {
                                encode_utf8_with_room(points, 1)
                                    .unwrap_or_else(|| lossy(encode_wtf8_with_room(points, 1)))
                            },
                        )?),
                        schema => match generate(schema, data)? {
                            Value::String(bytes) => Ok(lossy(bytes)),
                            _ => Err(AbiError::Internal(
                                "a string schema drew a non-string".into(),
                            )),
                        },
                    })?;
                    write(out_result, text::owned_string(drawn), "out_result")
                },
            )?
        })
    })
}
