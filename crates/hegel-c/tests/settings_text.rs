//! Settings given as text, and the messages refusing a bad one: under the
//! setting's key for `hegel_settings_set_from_string` (which a frontend's
//! command line passes each flag through, stripping the key to name the flag
//! instead), under the variable's name for the `HEGEL_*` environment
//! variables; and the base settings' defaults, and profile registration.

mod driver;

use driver::*;
use hegel_c::abi::*;
use hegel_c::context::{hegel_context_last_error, hegel_context_t};
use hegel_c::settings::*;
use std::ptr;

/// The message `hegel_settings_set_from_string` refuses `value` for `key` with.
fn refused(ctx: *mut hegel_context_t, key: &str, value: &str) -> String {
    let s = settings(ctx, 10, 1);
    let rc = hegel_settings_set_from_string(ctx, s, view(key), view(value));
    assert_eq!(rc, hegel_result_t::HEGEL_E_INVALID_ARG, "{key} = {value:?}");
    let message = text(hegel_context_last_error(ctx));
    ok(hegel_settings_free(ctx, s));
    message
}

#[test]
fn a_text_value_is_refused_under_its_key_with_what_the_key_takes() {
    let ctx = context();
    assert_eq!(
        refused(ctx, "seed", "abc"),
        "`seed` expects an integer or \"none\", got \"abc\""
    );
    assert_eq!(
        refused(ctx, "nondeterminism_strictness", "x"),
        "`nondeterminism_strictness` expects one of quiet|warn|error, got \"x\""
    );
    assert_eq!(
        refused(ctx, "verbosity", "loud"),
        "`verbosity` expects one of quiet|normal|verbose|debug, got \"loud\""
    );
    assert_eq!(
        refused(ctx, "backend", "wat"),
        "`backend` expects one of default|urandom, got \"wat\""
    );
    assert!(refused(ctx, "derandomize", "maybe").contains("true|false"));
    assert_eq!(
        refused(ctx, "suppress_health_check", "nope"),
        "`suppress_health_check` does not recognise \"nope\". Known names: all, \
         filter_too_much, too_slow, test_cases_too_large, large_initial_test_case"
    );
    assert_eq!(
        refused(ctx, "suppress_health_check", "all,too_slow"),
        "\"all\" must be the only element of `suppress_health_check`"
    );
    assert!(refused(ctx, "nope", "1").starts_with("unknown setting"));
    // An empty value for a known key is a refused value, not an unknown key.
    assert!(refused(ctx, "seed", "").starts_with("`seed` expects"));
}

/// The message the environment variable `variable` set to `value` is refused with.
fn refused_by_environment(variable: &str, value: &str) -> String {
    Settings::base()
        .apply_environment(|name| (name == variable).then(|| value.to_string()))
        .unwrap_err()
}

#[test]
fn an_environment_variable_is_refused_under_its_own_name() {
    assert_eq!(
        refused_by_environment("HEGEL_TEST_CASES", "lots"),
        "HEGEL_TEST_CASES must be a positive integer, got \"lots\""
    );
    assert!(
        refused_by_environment("HEGEL_PHASES", "generate,explain")
            .starts_with("HEGEL_PHASES does not recognise \"explain\"")
    );
    assert_eq!(
        refused_by_environment("HEGEL_SUPPRESS_HEALTH_CHECK", "all,too_slow"),
        "\"all\" must be the only element of HEGEL_SUPPRESS_HEALTH_CHECK"
    );
    assert_eq!(
        refused_by_environment("HEGEL_VERBOSITY", "loud"),
        "HEGEL_VERBOSITY must be quiet, normal, verbose or debug, got \"loud\""
    );
    assert_eq!(
        refused_by_environment("HEGEL_DERANDOMIZE", "maybe"),
        "HEGEL_DERANDOMIZE must be true, 1, yes, false, 0 or no, got \"maybe\""
    );
}

#[test]
fn the_base_settings_report_one_failure_and_stop_at_the_first() {
    let ctx = context();
    let mut s = ptr::null_mut();
    ok(hegel_settings_new_for_profile(ctx, view("base"), &mut s));
    let mut multiple = true;
    ok(hegel_settings_get_report_multiple_failures(
        ctx,
        s,
        &mut multiple,
    ));
    assert!(!multiple);
    let mut stop = false;
    ok(hegel_settings_get_stop_on_first_failure(ctx, s, &mut stop));
    assert!(stop);
    ok(hegel_settings_free(ctx, s));
}

#[test]
fn registering_a_reserved_profile_name_is_refused() {
    let ctx = context();
    let s = settings(ctx, 10, 1);
    for name in ["base", "default"] {
        let rc = hegel_settings_register_profile(ctx, view(name), s);
        assert_eq!(rc, hegel_result_t::HEGEL_E_INVALID_ARG);
        let message = text(hegel_context_last_error(ctx));
        assert!(
            message.contains(&format!("reserved profile name {name:?}")),
            "{message}"
        );
    }
    ok(hegel_settings_free(ctx, s));
}
