//! How the generator constructors and draws read their arguments, as
//! hegel.h documents them: text alphabets (categories with surrogates always
//! removed, code point ranges intersected with the codec, empty alphabets
//! refused as usage errors), regex construction and padding, float bounds
//! made exclusive, and the diagnostics of domains and grammars.

mod driver;

use driver::*;
use hegel_c::abi::*;
use hegel_c::context::{hegel_context_last_error, hegel_context_t};
use hegel_c::generate::{hegel_generate_float, hegel_owned_string_free};
use hegel_c::grammar::*;
use hegel_c::strings::*;
use hegel_c::test_case::hegel_test_case_t;
use std::ptr;

use hegel_result_t::*;

/// The arguments of `hegel_string_generator_text` a test varies.
#[derive(Default)]
struct Text<'a> {
    codec: Option<&'a str>,
    min_codepoint: u32,
    max_codepoint: Option<u32>,
    categories: Option<&'a [&'a str]>,
    exclude_categories: &'a [&'a str],
    include: &'a str,
    exclude: &'a str,
}

/// Builds a text generator of strings of 1 to `max_size` characters: the
/// generator, or the code and message it was refused with.
fn text_generator(
    ctx: *mut hegel_context_t,
    args: &Text<'_>,
    max_size: u64,
) -> Result<*mut hegel_string_generator_t, (hegel_result_t, String)> {
    let codec = args.codec.map(view);
    let categories: Option<Vec<hegel_string_t>> =
        args.categories.map(|c| c.iter().map(|s| view(s)).collect());
    let excluded: Vec<hegel_string_t> = args.exclude_categories.iter().map(|s| view(s)).collect();
    let mut generator = ptr::null_mut();
    let rc = hegel_string_generator_text(
        ctx,
        max_size.min(1),
        max_size,
        codec.as_ref().map_or(ptr::null(), |c| c as *const _),
        args.min_codepoint,
        args.max_codepoint.unwrap_or(u32::MAX),
        categories.as_ref().map_or(ptr::null(), |c| c.as_ptr()),
        categories.as_ref().map_or(0, Vec::len),
        excluded.as_ptr(),
        excluded.len(),
        view(args.include),
        view(args.exclude),
        &mut generator,
    );
    match rc {
        HEGEL_OK => Ok(generator),
        rc => Err((rc, text(hegel_context_last_error(ctx)))),
    }
}

/// Draws `n` test cases' strings from `generator`.
fn draws(
    ctx: *mut hegel_context_t,
    generator: *const hegel_string_generator_t,
    n: u64,
) -> Vec<String> {
    let mut drawn = Vec::new();
    let s = settings(ctx, n, 5);
    run(ctx, s, |tc| match draw(ctx, tc, generator) {
        Ok(value) => {
            drawn.push(value);
            (Outcome::Valid, String::new())
        }
        Err(outcome) => (outcome, String::new()),
    });
    drawn
}

fn draw(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    generator: *const hegel_string_generator_t,
) -> Result<String, Outcome> {
    let mut out = view("");
    if let Some(outcome) = stopped(hegel_generate_string(ctx, tc, generator, &mut out)) {
        return Err(outcome);
    }
    let value = text(out);
    ok(hegel_owned_string_free(ctx, &mut out));
    Ok(value)
}

/// The characters of every string `args` draws (strings of up to 5).
fn drawn_characters(args: &Text<'_>) -> Vec<char> {
    let ctx = context();
    let generator = text_generator(ctx, args, 5).expect("a valid alphabet");
    let chars = draws(ctx, generator, 100)
        .iter()
        .flat_map(|s| s.chars().collect::<Vec<_>>())
        .collect();
    ok(hegel_string_generator_free(ctx, generator));
    chars
}

#[test]
fn categories_restrict_the_alphabet_and_never_give_surrogates() {
    // (Below U+2000, where Unicode 18.0 added no capital letter that Rust's
    // standard library, on 17.0, does not know.)
    let upper = drawn_characters(&Text {
        categories: Some(&["Lu"]),
        max_codepoint: Some(0x1fff),
        ..Text::default()
    });
    assert!(!upper.is_empty());
    assert!(upper.iter().all(|c| c.is_uppercase()), "{upper:?}");
    // "C" and "Cs" name the surrogates, which a string cannot hold: they are
    // left out, not refused, and the rest of "C" stays.
    let other = drawn_characters(&Text {
        categories: Some(&["C", "Cs"]),
        max_codepoint: Some(0x7f),
        ..Text::default()
    });
    assert!(!other.is_empty());
    assert!(other.iter().all(|c| c.is_control()), "{other:?}");
    let digits = drawn_characters(&Text {
        codec: Some("ascii"),
        exclude_categories: &["L", "P", "S", "Z", "C"],
        ..Text::default()
    });
    assert!(digits.iter().all(char::is_ascii_digit), "{digits:?}");
}

#[test]
fn an_empty_category_list_leaves_the_included_characters() {
    let chars = drawn_characters(&Text {
        categories: Some(&[]),
        include: "xyz",
        ..Text::default()
    });
    assert!(!chars.is_empty());
    assert!(chars.iter().all(|c| "xyz".contains(*c)), "{chars:?}");
}

#[test]
fn a_code_point_range_outside_the_codec_leaves_only_included_characters() {
    // Bounds the wrong way round, or above the codec's range, are an empty
    // range: what include_characters adds is all there is.
    for args in [
        Text {
            min_codepoint: 200,
            max_codepoint: Some(100),
            include: "q",
            ..Text::default()
        },
        Text {
            codec: Some("ascii"),
            min_codepoint: 200,
            include: "q",
            ..Text::default()
        },
    ] {
        let chars = drawn_characters(&args);
        assert!(!chars.is_empty() && chars.iter().all(|c| *c == 'q'));
    }
}

#[test]
fn an_empty_alphabet_is_a_usage_error_unless_only_empty_strings_are_drawn() {
    let ctx = context();
    for args in [
        Text {
            min_codepoint: 200,
            max_codepoint: Some(100),
            ..Text::default()
        },
        Text {
            min_codepoint: 0xD800,
            max_codepoint: Some(0xDFFF),
            ..Text::default()
        },
        Text {
            categories: Some(&[]),
            ..Text::default()
        },
        Text {
            categories: Some(&["Cs"]),
            ..Text::default()
        },
    ] {
        let (rc, message) = text_generator(ctx, &args, 3).expect_err("an empty alphabet");
        assert_eq!(rc, HEGEL_E_INVALID_ARG);
        assert!(message.contains("InvalidArgument"), "{message}");
        assert!(message.contains("No valid characters"), "{message}");
        let generator = text_generator(ctx, &args, 0).expect("only the empty string");
        assert!(draws(ctx, generator, 5).iter().all(String::is_empty));
        ok(hegel_string_generator_free(ctx, generator));
    }
    let (rc, message) = text_generator(
        ctx,
        &Text {
            codec: Some("ebcdic"),
            ..Text::default()
        },
        3,
    )
    .expect_err("an unknown codec");
    assert_eq!(rc, HEGEL_E_INVALID_ARG);
    assert!(message.contains("invalid codec"), "{message}");
}

fn regex(
    ctx: *mut hegel_context_t,
    pattern: &str,
    fullmatch: bool,
    alphabet: *const hegel_string_generator_t,
) -> Result<*mut hegel_string_generator_t, String> {
    let mut generator = ptr::null_mut();
    match hegel_string_generator_regex(ctx, view(pattern), fullmatch, alphabet, &mut generator) {
        HEGEL_OK => Ok(generator),
        _ => Err(text(hegel_context_last_error(ctx))),
    }
}

#[test]
fn patterns_that_match_nothing_are_refused_when_built() {
    let ctx = context();
    let high = text_generator(
        ctx,
        &Text {
            min_codepoint: 128,
            ..Text::default()
        },
        0,
    )
    .expect("an alphabet");
    let err = regex(ctx, "abc", false, high).expect_err("abc is not above 127");
    assert!(err.contains("matches no string over the alphabet"), "{err}");
    for pattern in ["(?!)", "x(?!y?)", "(?<!)a"] {
        let err = regex(ctx, pattern, false, ptr::null()).expect_err(pattern);
        assert!(
            err.contains("matches no string the generator can produce"),
            "{err}"
        );
    }
    ok(hegel_string_generator_free(ctx, high));
}

#[test]
fn search_padding_without_an_alphabet_is_printable_ascii() {
    let ctx = context();
    let generator = regex(ctx, r"\bfoo\b", false, ptr::null()).expect("a pattern");
    let strings = draws(ctx, generator, 200);
    assert!(strings.iter().any(|s| s.len() > 3), "never padded");
    for s in &strings {
        let at = s.find("foo").expect("the match");
        let padding = s[..at].chars().chain(s[at + 3..].chars());
        for c in padding {
            assert!((' '..='~').contains(&c), "{s:?}");
        }
    }
    // With an alphabet, padding is any of its characters.
    let greek = text_generator(
        ctx,
        &Text {
            min_codepoint: 0x3b1,
            max_codepoint: Some(0x3c9),
            include: "foo",
            ..Text::default()
        },
        0,
    )
    .expect("an alphabet");
    let padded = regex(ctx, "foo", false, greek).expect("a pattern");
    let strings = draws(ctx, padded, 200);
    assert!(strings.iter().any(|s| s.chars().any(|c| c > '~')));
    for generator in [generator, padded, greek] {
        ok(hegel_string_generator_free(ctx, generator));
    }
}

#[test]
fn domains_say_why_a_length_is_refused() {
    let ctx = context();
    let mut generator = ptr::null_mut();
    assert_eq!(
        hegel_string_generator_domain(ctx, 3, &mut generator),
        HEGEL_E_INVALID_ARG
    );
    let message = text(hegel_context_last_error(ctx));
    assert!(message.contains("no eligible TLDs"), "{message}");
    assert_eq!(
        hegel_string_generator_domain(ctx, 256, &mut generator),
        HEGEL_E_INVALID_ARG
    );
}

/// Draws `n` floats with the given bounds (all else permissive).
fn floats(
    min: f64,
    max: f64,
    allow_infinity: bool,
    exclude_min: bool,
    exclude_max: bool,
) -> Result<Vec<f64>, String> {
    let ctx = context();
    let mut drawn = Vec::new();
    let mut refused = None;
    let s = settings(ctx, 100, 9);
    run(ctx, s, |tc| {
        let mut x = 0.0;
        let rc = hegel_generate_float(
            ctx,
            tc,
            64,
            min,
            max,
            false,
            allow_infinity,
            exclude_min,
            exclude_max,
            f64::from_bits(1),
            &mut x,
        );
        match rc {
            HEGEL_OK => drawn.push(x),
            HEGEL_E_INVALID_ARG => refused = Some(text(hegel_context_last_error(ctx))),
            other => return (stopped(other).expect("a stop"), String::new()),
        }
        (Outcome::Valid, String::new())
    });
    refused.map_or(Ok(drawn), Err)
}

#[test]
fn an_excluded_infinite_bound_leaves_the_finite_floats() {
    let inf = f64::INFINITY;
    let below = floats(-inf, inf, true, false, true).expect("floats below +inf");
    assert!(below.iter().all(|x| *x < inf));
    let above = floats(-inf, inf, true, true, false).expect("floats above -inf");
    assert!(above.iter().all(|x| *x > -inf));
    // The other end's infinity is still allowed: above the largest finite
    // float, it is all there is.
    let top = floats(f64::MAX, inf, true, true, false).expect("+inf");
    assert!(!top.is_empty() && top.iter().all(|x| *x == inf), "{top:?}");
    let bottom = floats(-inf, -f64::MAX, true, false, true).expect("-inf");
    assert!(
        !bottom.is_empty() && bottom.iter().all(|x| *x == -inf),
        "{bottom:?}"
    );
    // A range of one infinity gives it; excluding it leaves nothing.
    assert!(
        floats(inf, inf, true, false, false)
            .expect("+inf")
            .iter()
            .all(|x| *x == inf)
    );
    let err = floats(inf, inf, true, true, false).expect_err("nothing above +inf");
    assert!(err.contains("InvalidArgument"), "{err}");
    let err = floats(inf, inf, false, false, false).expect_err("no infinity allowed");
    assert!(err.contains("InvalidArgument"), "{err}");
}

/// Builds a grammar from `text` (imports unprovided): its error message.
fn grammar_error(text_: &str, max_size: u64, max_depth: u32, explicit: &[&str]) -> String {
    let ctx = context();
    let mut builder = ptr::null_mut();
    if hegel_grammar_builder_new(ctx, view(text_), &mut builder) != HEGEL_OK {
        return text(hegel_context_last_error(ctx));
    }
    let mut path = view("");
    if hegel_grammar_builder_file(ctx, builder, 0, &mut path) == HEGEL_OK
        && hegel_grammar_builder_provide(ctx, builder, 0, ptr::null()) != HEGEL_OK
    {
        return text(hegel_context_last_error(ctx));
    }
    let names: Vec<hegel_string_t> = explicit.iter().map(|n| view(n)).collect();
    let mut grammar = ptr::null_mut();
    let rc = hegel_grammar_new(
        ctx,
        builder,
        ptr::null(),
        max_size,
        max_depth,
        ptr::null(),
        names.as_ptr(),
        names.len(),
        &mut grammar,
    );
    assert_eq!(rc, HEGEL_E_INVALID_ARG, "{text_:?} was accepted");
    text(hegel_context_last_error(ctx))
}

#[test]
fn grammar_diagnostics_name_the_cap_the_terminal_and_the_file() {
    for (grammar, max_size, max_depth, explicit, needle) in [
        ("start: \"ab\"", 1, 0, &[][..], "max_size is 1"),
        ("start: \"a\"*", 2_000_000, 0, &[], "may be at most 1048576"),
        ("start: x\nx: \"a\"", 0, 1, &[], "max_depth is 1"),
        ("start: \"a\"", 0, 501, &[], "may be at most 500"),
        (
            "start: \"a\"",
            0,
            0,
            &["B"],
            "does not use explicit terminal 'B'",
        ),
        ("start: (", 0, 0, &[], "Unclosed parenthesis"),
        ("start: [\"a\"", 0, 0, &[], "Unclosed bracket"),
        ("start: (\"a\" ]", 0, 0, &[], "expected \")\""),
        (
            "%import sub.lib.NUM\nstart: NUM",
            0,
            0,
            &[],
            "Could not find grammar `sub/lib.lark`",
        ),
        (
            "%import .common.WS\nstart: WS",
            0,
            0,
            &[],
            "Could not find grammar `common.lark`",
        ),
    ] {
        let message = grammar_error(grammar, max_size, max_depth, explicit);
        assert!(message.contains(needle), "{grammar:?}: {message}");
    }
}

#[test]
fn a_text_generator_made_again_follows_every_argument() {
    // A frontend makes its text generator anew in every test case; the one
    // made last is reused when the arguments are the same, byte for byte,
    // and only then.
    let ctx = context();
    let only = |include: &str, categories: Option<&'static [&'static str]>| {
        let generator = text_generator(
            ctx,
            &Text {
                categories,
                include,
                ..Text::default()
            },
            5,
        )
        .expect("a valid alphabet");
        let chars: Vec<char> = draws(ctx, generator, 50)
            .iter()
            .flat_map(|s| s.chars().collect::<Vec<_>>())
            .collect();
        ok(hegel_string_generator_free(ctx, generator));
        chars
    };
    let a = only("a", Some(&[]));
    assert!(!a.is_empty() && a.iter().all(|c| *c == 'a'), "{a:?}");
    let a = only("a", Some(&[]));
    assert!(!a.is_empty() && a.iter().all(|c| *c == 'a'), "{a:?}");
    let b = only("b", Some(&[]));
    assert!(!b.is_empty() && b.iter().all(|c| *c == 'b'), "{b:?}");
    // No category list (every category) is not an empty one.
    let any = only("b", None);
    assert!(any.iter().any(|c| *c != 'b'), "{any:?}");
    // The same length as the last include_characters, but not UTF-8.
    only("b", Some(&[]));
    let invalid = [0xffu8];
    let no_categories: [hegel_string_t; 0] = [];
    let mut generator = ptr::null_mut();
    let rc = hegel_string_generator_text(
        ctx,
        1,
        5,
        ptr::null(),
        0,
        u32::MAX,
        no_categories.as_ptr(),
        0,
        ptr::null(),
        0,
        hegel_string_t {
            data: invalid.as_ptr().cast(),
            len: invalid.len(),
        },
        view(""),
        &mut generator,
    );
    assert_eq!(rc, HEGEL_E_INVALID_ARG);
    assert!(text(hegel_context_last_error(ctx)).contains("UTF-8"));
}
