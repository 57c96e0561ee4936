//! The C ABI's database takes geist's one database setting, as the Rust
//! client, `GEIST_DATABASE` and geist-server's `database` field do.

mod driver;

use driver::*;
use geist_engine::database::{DirectoryDatabase, ExampleDatabase};
use hegel_c::abi::*;
use hegel_c::generate::hegel_generate_integer;
use hegel_c::settings::*;

fn over_ten(
    tc: *mut hegel_c::test_case::hegel_test_case_t,
    ctx: *mut hegel_c::context::hegel_context_t,
) -> (Outcome, String) {
    let mut x = 0i64;
    if let Some(outcome) = stopped(hegel_generate_integer(ctx, tc, 0, 1000, &mut x)) {
        return (outcome, String::new());
    }
    if x > 10 {
        (Outcome::Failed("over ten".into()), x.to_string())
    } else {
        (Outcome::Valid, x.to_string())
    }
}

#[test]
fn a_multiplexed_setting_saves_the_failure_in_every_part() {
    let root = std::env::temp_dir().join(format!("geist-hegel-c-db-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let (a, b) = (root.join("a"), root.join("b"));
    let setting = format!("{},{}", a.display(), b.display());
    let ctx = context();
    let s = settings(ctx, 100, 7);
    ok(hegel_settings_set_database(ctx, s, &view(&setting)));
    ok(hegel_settings_set_database_key(ctx, s, &view("over_ten")));
    let report = run(ctx, s, |tc| over_ten(tc, ctx));
    assert_eq!(report.failures, vec!["over ten".to_string()]);
    for part in [&a, &b] {
        let db = DirectoryDatabase::new(part);
        assert_eq!(
            db.fetch(b"over_ten").unwrap().len(),
            1,
            "{} holds the failure",
            part.display()
        );
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_malformed_setting_is_an_invalid_argument() {
    let ctx = context();
    let s = settings(ctx, 10, 1);
    let rc = hegel_settings_set_database(ctx, s, &view("redis://h/0?colour=blue"));
    assert_eq!(rc, hegel_result_t::HEGEL_E_INVALID_ARG);
}
