//! `hegel_set_unicode_version`: a text generator's categories follow the
//! version a frontend names (its own tables), read when the generator is
//! built. A file of its own: the version is process-wide.

mod driver;

use driver::*;
use hegel_c::abi::*;
use hegel_c::context::hegel_context_last_error;
use hegel_c::settings::hegel_set_unicode_version;
use hegel_c::strings::*;
use std::ptr;

/// Builds a generator of one letter from `min..=max`: whether there is one.
fn letters_in(min: u32, max: u32) -> Result<(), String> {
    let ctx = context();
    let categories = [view("L")];
    let mut generator = ptr::null_mut();
    let rc = hegel_string_generator_text(
        ctx,
        1,
        1,
        ptr::null(),
        min,
        max,
        categories.as_ptr(),
        1,
        ptr::null(),
        0,
        view(""),
        view(""),
        &mut generator,
    );
    if rc != hegel_result_t::HEGEL_OK {
        return Err(text(hegel_context_last_error(ctx)));
    }
    ok(hegel_string_generator_free(ctx, generator));
    Ok(())
}

#[test]
fn categories_follow_the_version_a_frontend_names() {
    let ctx = context();
    // Sidetic letters (U+10940..U+10959) are new in Unicode 17.0, the
    // version Rust's standard library follows since 1.95.
    let sidetic = || letters_in(0x10940, 0x10959);
    ok(hegel_set_unicode_version(ctx, view("16.0.0")));
    let err = sidetic().expect_err("no Sidetic letters in 16.0");
    assert!(err.contains("No valid characters"), "{err}");
    ok(hegel_set_unicode_version(ctx, view("17.0.0")));
    sidetic().expect("Sidetic letters in 17.0");
    if char::UNICODE_VERSION == (17, 0, 0) {
        assert!('\u{10940}'.is_alphabetic());
    }
    // U+0558 is new in 18.0: a letter to the newest tables only.
    let armenian = || letters_in(0x558, 0x558);
    armenian().expect_err("U+0558 is unassigned in 17.0");
    ok(hegel_set_unicode_version(ctx, view("")));
    armenian().expect("U+0558 in the newest tables");
    // Versions from 14.0 on; a newer one than the engine knows gets its newest.
    ok(hegel_set_unicode_version(ctx, view("99.0")));
    armenian().expect("the newest tables");
    for refused in ["13.0.0", "seventeen", "17..0"] {
        assert_eq!(
            hegel_set_unicode_version(ctx, view(refused)),
            hegel_result_t::HEGEL_E_INVALID_ARG,
            "{refused}"
        );
    }
    ok(hegel_set_unicode_version(ctx, view("")));
}
