//! Bad calls (issue 15, item 3): NULL, freed and foreign handles, a handle
//! used after its test case or run ended, invalid
//! UTF-8, out-of-range settings. Each returns the ABI's error code and leaves
//! a message in the context; none is undefined behaviour or an abort.

mod driver;

use driver::*;
use hegel_c::abi::*;
use hegel_c::context::{hegel_context_free, hegel_context_last_error, hegel_context_t};
use hegel_c::generate::hegel_generate_integer;
use hegel_c::run::*;
use hegel_c::settings::*;
use hegel_c::test_case::*;
use std::ptr;

use hegel_result_t::*;

/// Asserts `rc` is `expected` and the context holds a message about it.
fn refused(ctx: *mut hegel_context_t, rc: hegel_result_t, expected: hegel_result_t) -> String {
    assert_eq!(rc, expected);
    let message = text(hegel_context_last_error(ctx));
    assert!(!message.is_empty(), "{expected:?} without a message");
    message
}

fn bytes(raw: &[u8]) -> hegel_string_t {
    hegel_string_t {
        data: raw.as_ptr().cast(),
        len: raw.len(),
    }
}

/// A run of `n` test cases with the next test case pulled.
fn started(
    ctx: *mut hegel_context_t,
    n: u64,
) -> (
    *mut hegel_settings_t,
    *mut hegel_run_t,
    *mut hegel_test_case_t,
) {
    let s = settings(ctx, n, 3);
    let mut run = ptr::null_mut();
    ok(hegel_run_start(ctx, s, None, ptr::null_mut(), &mut run));
    let mut tc = ptr::null_mut();
    ok(hegel_next_test_case(ctx, run, &mut tc));
    assert!(!tc.is_null());
    (s, run, tc)
}

#[test]
fn null_freed_and_foreign_handles() {
    let ctx = context();
    let mut x = 0i64;
    let m = refused(
        ctx,
        hegel_generate_integer(ctx, ptr::null_mut(), 0, 10, &mut x),
        HEGEL_E_INVALID_HANDLE,
    );
    assert!(m.contains("NULL"), "{m}");

    let s = settings(ctx, 10, 1);
    ok(hegel_settings_free(ctx, s));
    refused(
        ctx,
        hegel_settings_set_test_cases(ctx, s, 5),
        HEGEL_E_INVALID_HANDLE,
    );
    refused(ctx, hegel_settings_free(ctx, s), HEGEL_E_INVALID_HANDLE);

    // A settings handle where a test case belongs, and a made-up address.
    let other = settings(ctx, 10, 1);
    refused(
        ctx,
        hegel_generate_integer(ctx, other.cast(), 0, 10, &mut x),
        HEGEL_E_INVALID_HANDLE,
    );
    refused(
        ctx,
        hegel_generate_integer(ctx, 0x7000_dead_beef_usize as *mut _, 0, 10, &mut x),
        HEGEL_E_INVALID_HANDLE,
    );
    // A NULL out-parameter.
    let mut unused = ptr::null_mut();
    let (_, run, tc) = started(ctx, 5);
    refused(
        ctx,
        hegel_generate_integer(ctx, tc, 0, 10, ptr::null_mut()),
        HEGEL_E_INVALID_ARG,
    );
    ok(hegel_test_case_free(ctx, tc));
    refused(ctx, hegel_test_case_free(ctx, tc), HEGEL_E_INVALID_HANDLE);
    refused(
        ctx,
        hegel_next_test_case(ctx, s.cast(), &mut unused),
        HEGEL_E_INVALID_HANDLE,
    );
    ok(hegel_run_free(ctx, run));
    ok(hegel_settings_free(ctx, other));
    ok(hegel_context_free(ctx));
}

#[test]
fn a_null_or_freed_context() {
    // NULL is "no context": calls still answer with their code, there is just
    // nowhere to put the message. A freed one is a bad handle like any other.
    let mut s = ptr::null_mut();
    ok(hegel_settings_new(ptr::null_mut(), &mut s));
    assert_eq!(
        hegel_settings_set_test_cases(ptr::null_mut(), s, 0),
        HEGEL_E_INVALID_ARG
    );
    let ctx = context();
    ok(hegel_context_free(ctx));
    assert_eq!(
        hegel_settings_set_test_cases(ctx, s, 5),
        HEGEL_E_INVALID_HANDLE
    );
    assert_eq!(text(hegel_context_last_error(ctx)), "");
    assert_eq!(hegel_context_free(ctx), HEGEL_E_INVALID_HANDLE);
    ok(hegel_settings_free(ptr::null_mut(), s));
}

#[test]
fn out_of_range_settings_and_invalid_text() {
    let ctx = context();
    let s = settings(ctx, 10, 1);
    refused(
        ctx,
        hegel_settings_set_test_cases(ctx, s, 0),
        HEGEL_E_INVALID_ARG,
    );
    refused(
        ctx,
        hegel_settings_set_verbosity(ctx, s, 99),
        HEGEL_E_INVALID_ARG,
    );
    let m = refused(
        ctx,
        hegel_settings_set_database(ctx, s, &bytes(b"dir\xff\xfe")),
        HEGEL_E_INVALID_ARG,
    );
    assert!(m.contains("UTF-8"), "{m}");
    // A view whose data is NULL but whose length is not.
    let dangling = hegel_string_t {
        data: ptr::null(),
        len: 4,
    };
    refused(
        ctx,
        hegel_settings_set_database_key(ctx, s, &dangling),
        HEGEL_E_INVALID_ARG,
    );
    let mut unknown = ptr::null_mut();
    refused(
        ctx,
        hegel_settings_new_for_profile(ctx, bytes(b"\xc3\x28"), &mut unknown),
        HEGEL_E_INVALID_ARG,
    );
    // The refused calls changed nothing.
    let mut n = 0;
    ok(hegel_settings_get_test_cases(ctx, s, &mut n));
    assert_eq!(n, 10);
    ok(hegel_settings_free(ctx, s));
    ok(hegel_context_free(ctx));
}

#[test]
fn bad_draw_arguments_and_statuses() {
    let ctx = context();
    let (s, run, tc) = started(ctx, 5);
    let mut x = 0i64;
    refused(
        ctx,
        hegel_generate_integer(ctx, tc, 10, 0, &mut x),
        HEGEL_E_INVALID_ARG,
    );
    refused(
        ctx,
        hegel_mark_complete(ctx, tc, 99, ptr::null()),
        HEGEL_E_INVALID_ARG,
    );
    let origin = bytes(b"\xff");
    refused(
        ctx,
        hegel_mark_complete(
            ctx,
            tc,
            hegel_status_t::HEGEL_STATUS_INTERESTING as u32,
            &origin,
        ),
        HEGEL_E_INVALID_ARG,
    );
    // None of those completed the test case.
    ok(hegel_generate_integer(ctx, tc, 0, 10, &mut x));
    ok(hegel_mark_complete(
        ctx,
        tc,
        hegel_status_t::HEGEL_STATUS_VALID as u32,
        ptr::null(),
    ));
    ok(hegel_test_case_free(ctx, tc));
    ok(hegel_run_free(ctx, run));
    ok(hegel_settings_free(ctx, s));
    ok(hegel_context_free(ctx));
}

#[test]
fn a_completed_test_case_and_an_ended_run() {
    let ctx = context();
    let (s, run, tc) = started(ctx, 3);
    let valid = hegel_status_t::HEGEL_STATUS_VALID as u32;
    ok(hegel_mark_complete(ctx, tc, valid, ptr::null()));
    refused(
        ctx,
        hegel_mark_complete(ctx, tc, valid, ptr::null()),
        HEGEL_E_ALREADY_COMPLETE,
    );
    let mut x = 0i64;
    let rc = hegel_generate_integer(ctx, tc, 0, 10, &mut x);
    assert_ne!(rc, HEGEL_OK, "a draw on a completed test case");
    assert!(!text(hegel_context_last_error(ctx)).is_empty());
    ok(hegel_test_case_free(ctx, tc));

    // Drain the run, keeping the last test case's handle.
    let mut kept: *mut hegel_test_case_t = ptr::null_mut();
    loop {
        let mut next = ptr::null_mut();
        ok(hegel_next_test_case(ctx, run, &mut next));
        if next.is_null() {
            break;
        }
        ok(hegel_mark_complete(ctx, next, valid, ptr::null()));
        if !kept.is_null() {
            ok(hegel_test_case_free(ctx, kept));
        }
        kept = next;
    }
    // Asking again after the end: still the end.
    let mut again: *mut hegel_test_case_t = std::ptr::NonNull::dangling().as_ptr();
    ok(hegel_next_test_case(ctx, run, &mut again));
    assert!(again.is_null());

    // The run is freed: its test case's handle is still checked, never
    // dangling.
    ok(hegel_run_free(ctx, run));
    let rc = hegel_generate_integer(ctx, kept, 0, 10, &mut x);
    assert_ne!(rc, HEGEL_OK);
    assert!(!text(hegel_context_last_error(ctx)).is_empty());
    ok(hegel_test_case_free(ctx, kept));
    let mut result = ptr::null_mut();
    refused(
        ctx,
        hegel_run_result(ctx, run, &mut result),
        HEGEL_E_INVALID_HANDLE,
    );
    refused(
        ctx,
        hegel_next_test_case(ctx, run, &mut again),
        HEGEL_E_INVALID_HANDLE,
    );
    ok(hegel_settings_free(ctx, s));
    ok(hegel_context_free(ctx));
}

#[test]
fn a_result_is_not_ready_before_the_run_ends() {
    let ctx = context();
    let (s, run, tc) = started(ctx, 3);
    let mut result = ptr::null_mut();
    refused(
        ctx,
        hegel_run_result(ctx, run, &mut result),
        HEGEL_E_NOT_COMPLETE,
    );
    ok(hegel_test_case_free(ctx, tc));
    ok(hegel_run_free(ctx, run));
    ok(hegel_settings_free(ctx, s));
    ok(hegel_context_free(ctx));
}

/// Where hegel.h words what a call refuses, the message uses its words: a
/// blob that "could not be decoded", a UUID version that is not a hex
/// nibble, a target label recorded "at most once per test case", printer
/// text that "must not contain newlines".
#[test]
fn refusals_use_the_documented_words() {
    let ctx = context();
    let (s, run, tc) = started(ctx, 5);
    let mut blob_run = ptr::null_mut();
    let m = refused(
        ctx,
        hegel_run_start_blob(
            ctx,
            s,
            view("!!! not a blob !!!"),
            None,
            ptr::null_mut(),
            &mut blob_run,
        ),
        HEGEL_E_INVALID_ARG,
    );
    assert!(m.contains("could not be decoded"), "{m}");
    let mut from_blob = ptr::null_mut();
    let m = refused(
        ctx,
        hegel_test_case_from_blob(
            ctx,
            s,
            // libhegel's nondeterministic replay state (prefix 2): geist
            // decodes libhegel's choice blobs, not this.
            view("Av////8="),
            None,
            ptr::null_mut(),
            &mut from_blob,
        ),
        HEGEL_E_INVALID_ARG,
    );
    assert!(m.contains("could not be decoded"), "{m}");

    let mut uuid = [0u8; 16];
    let m = refused(
        ctx,
        hegel_c::generate::hegel_generate_uuid(ctx, tc, 16, true, uuid.as_mut_ptr()),
        HEGEL_E_INVALID_ARG,
    );
    assert!(m.contains("hex nibble"), "{m}");

    ok(hegel_c::test_case::hegel_target(ctx, tc, 1.0, view("dup")));
    let m = refused(
        ctx,
        hegel_c::test_case::hegel_target(ctx, tc, 2.0, view("dup")),
        HEGEL_E_INVALID_ARG,
    );
    assert!(m.contains("at most once"), "{m}");

    let mut printer = ptr::null_mut();
    ok(hegel_c::printer::hegel_printer_new(
        ctx,
        ptr::null(),
        &mut printer,
    ));
    let m = refused(
        ctx,
        hegel_c::printer::hegel_printer_comment(ctx, printer, view("a\nb")),
        HEGEL_E_INVALID_ARG,
    );
    assert!(m.contains("must not contain newlines"), "{m}");
    ok(hegel_c::printer::hegel_printer_free(ctx, printer));

    ok(hegel_mark_complete(
        ctx,
        tc,
        hegel_status_t::HEGEL_STATUS_VALID as u32,
        ptr::null(),
    ));
    ok(hegel_test_case_free(ctx, tc));
    ok(hegel_run_free(ctx, run));
    ok(hegel_settings_free(ctx, s));
    ok(hegel_context_free(ctx));
}

#[test]
fn collections_and_machines_answer_only_while_live_and_to_their_own_test_case() {
    use hegel_c::collection::*;
    use hegel_c::stateful::*;
    let ctx = context();
    let s = settings(ctx, 3, 1);
    let names = [bytes(b"push")];
    let groups = [0i64];
    let mut earlier: Option<(*mut hegel_collection_t, *mut hegel_state_machine_t)> = None;
    let mut checked = 0;
    run(ctx, s, |tc| {
        let mut more = false;
        let mut group = 0i64;
        match earlier {
            None => {
                let mut collection = ptr::null_mut();
                ok(hegel_new_collection(ctx, tc, 0, 5, &mut collection));
                ok(hegel_collection_more(ctx, tc, collection, &mut more));
                let machine = plain_machine(ctx, tc, &names, &groups);
                // A handle of one kind where another belongs.
                let m = refused(
                    ctx,
                    hegel_collection_more(ctx, tc, machine.cast(), &mut more),
                    HEGEL_E_INVALID_HANDLE,
                );
                assert!(m.contains("not a collection handle"), "{m}");
                refused(
                    ctx,
                    hegel_state_machine_next_group(ctx, tc, collection.cast(), &mut group),
                    HEGEL_E_INVALID_HANDLE,
                );
                let m = refused(
                    ctx,
                    hegel_collection_more(ctx, tc, ptr::null_mut(), &mut more),
                    HEGEL_E_INVALID_HANDLE,
                );
                assert!(m.contains("NULL"), "{m}");
                earlier = Some((collection, machine));
            }
            Some((collection, machine)) if checked == 0 => {
                // Live handles of an earlier test case, with this one's.
                let m = refused(
                    ctx,
                    hegel_collection_more(ctx, tc, collection, &mut more),
                    HEGEL_E_INVALID_HANDLE,
                );
                assert!(m.contains("another test case"), "{m}");
                refused(
                    ctx,
                    hegel_collection_reject(ctx, tc, collection, ptr::null()),
                    HEGEL_E_INVALID_HANDLE,
                );
                // Freed: refused, and a second free too.
                ok(hegel_collection_free(ctx, collection));
                ok(hegel_state_machine_free(ctx, machine));
                // A new collection may take the freed one's slot: the old
                // handle stays refused.
                let mut fresh = ptr::null_mut();
                ok(hegel_new_collection(ctx, tc, 0, 5, &mut fresh));
                let m = refused(
                    ctx,
                    hegel_collection_more(ctx, tc, collection, &mut more),
                    HEGEL_E_INVALID_HANDLE,
                );
                assert!(m.contains("freed"), "{m}");
                ok(hegel_collection_more(ctx, tc, fresh, &mut more));
                refused(
                    ctx,
                    hegel_collection_free(ctx, collection),
                    HEGEL_E_INVALID_HANDLE,
                );
                ok(hegel_collection_free(ctx, fresh));
                refused(
                    ctx,
                    hegel_state_machine_next_group(ctx, tc, machine, &mut group),
                    HEGEL_E_INVALID_HANDLE,
                );
                refused(
                    ctx,
                    hegel_state_machine_free(ctx, machine),
                    HEGEL_E_INVALID_HANDLE,
                );
                checked += 1;
            }
            Some(_) => {}
        }
        (driver::Outcome::Valid, String::new())
    });
    assert_eq!(checked, 1);
    ok(hegel_collection_free(ctx, ptr::null_mut()));
    ok(hegel_state_machine_free(ctx, ptr::null_mut()));
    ok(hegel_settings_free(ctx, s));
    ok(hegel_context_free(ctx));
    // A freed context is refused, and so is freeing it again.
    assert_eq!(hegel_context_free(ctx), HEGEL_E_INVALID_HANDLE);
}
