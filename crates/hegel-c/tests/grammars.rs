//! Lark grammars through the ABI: strings of the grammar, shrinking, and
//! explicit terminals whose values the caller draws.

mod driver;

use driver::*;
use hegel_c::abi::*;
use hegel_c::generate::hegel_generate_integer;
use hegel_c::grammar::*;
use std::ptr;

fn compile(
    ctx: *mut hegel_c::context::hegel_context_t,
    text: &str,
    explicit: &[&str],
) -> *mut hegel_grammar_t {
    let mut builder = ptr::null_mut();
    ok(hegel_grammar_builder_new(ctx, view(text), &mut builder));
    let mut index = 0;
    loop {
        let mut path = view("");
        if hegel_grammar_builder_file(ctx, builder, index, &mut path)
            == hegel_result_t::HEGEL_E_NOT_FOUND
        {
            break;
        }
        ok(hegel_grammar_builder_provide(
            ctx,
            builder,
            index,
            ptr::null(),
        ));
        index += 1;
    }
    let names: Vec<hegel_string_t> = explicit.iter().map(|n| view(n)).collect();
    let mut grammar = ptr::null_mut();
    ok(hegel_grammar_new(
        ctx,
        builder,
        ptr::null(),
        0,
        0,
        ptr::null(),
        names.as_ptr(),
        names.len(),
        &mut grammar,
    ));
    ok(hegel_grammar_builder_free(ctx, builder));
    grammar
}

#[test]
fn explicit_values_shrink_with_the_grammar() {
    let ctx = context();
    let grammar = compile(ctx, "start: NUM (\",\" NUM)*\n%declare NUM\n", &["NUM"]);
    let s = settings(ctx, 100, 11);
    let report = run(ctx, s, |tc| {
        let mut draw = ptr::null_mut();
        ok(hegel_grammar_draw_new(ctx, grammar, 0, &mut draw));
        let mut terminal = 0;
        let outcome = loop {
            match hegel_grammar_draw_next(ctx, tc, draw, &mut terminal) {
                hegel_result_t::HEGEL_OK => {
                    let mut v = 0;
                    if let Some(o) =
                        stopped(hegel_generate_integer(ctx, tc, 0, u32::MAX as i64, &mut v))
                    {
                        break Err(o);
                    }
                    let value = v.to_string();
                    ok(hegel_grammar_draw_provide(ctx, draw, view(&value)));
                }
                hegel_result_t::HEGEL_E_NOT_FOUND => break Ok(()),
                rc => break Err(stopped(rc).expect("a stop")),
            }
        };
        let result = match outcome {
            Err(o) => (o, String::new()),
            Ok(()) => {
                let mut out = view("");
                ok(hegel_grammar_draw_result(ctx, draw, &mut out));
                let s = text(out);
                ok(hegel_c::generate::hegel_owned_string_free(ctx, &mut out));
                if s.contains(',') {
                    (Outcome::Failed("comma".into()), s)
                } else {
                    (Outcome::Valid, s)
                }
            }
        };
        ok(hegel_grammar_draw_free(ctx, draw));
        result
    });
    assert_eq!(report.failures, vec!["comma".to_string()]);
    assert_eq!(report.captured.as_deref(), Some("0,0"));
}

/// A draw belongs to the test case (and stream) it was first advanced in:
/// a later test case refuses it, also one handed out after the first was
/// freed, whose family may be the first's renewed in place (at the same
/// address).
#[test]
fn a_draw_is_refused_by_a_later_test_case() {
    let ctx = context();
    let grammar = compile(ctx, "start: NUM (\",\" NUM)*\n%declare NUM\n", &["NUM"]);
    let s = settings(ctx, 5, 3);
    let mut draw = ptr::null_mut();
    ok(hegel_grammar_draw_new(ctx, grammar, 0, &mut draw));
    let mut seen = 0;
    let report = run(ctx, s, |tc| {
        let mut terminal = 0;
        let rc = hegel_grammar_draw_next(ctx, tc, draw, &mut terminal);
        if seen == 0 {
            assert_eq!(rc, hegel_result_t::HEGEL_OK);
            ok(hegel_grammar_draw_provide(ctx, draw, view("1")));
        } else {
            assert_eq!(rc, hegel_result_t::HEGEL_E_INVALID_ARG, "test case {seen}");
        }
        seen += 1;
        (Outcome::Valid, String::new())
    });
    assert!(report.failures.is_empty());
    assert!(seen >= 2, "{seen} test cases");
    ok(hegel_grammar_draw_free(ctx, draw));
}
