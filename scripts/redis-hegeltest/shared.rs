//! Properties for scripts/stages/redis.sh: hegeltest 0.16 against
//! geist-server, whose example database the `database` setting points at
//! (SCENARIO_DATABASE: a directory, a redis:// URL, or several). Every drawn
//! value is appended to VALUES_DIR/<property>, so the script can tell which
//! test case ran first.

use hegel::generators as gs;
use std::io::Write;

fn database() -> Option<String> {
    Some(std::env::var("SCENARIO_DATABASE").expect("SCENARIO_DATABASE is not set"))
}

fn record(property: &str, n: i64) {
    let dir = std::env::var("VALUES_DIR").expect("VALUES_DIR is not set");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(format!("{dir}/{property}"))
        .expect("values file");
    writeln!(file, "{n}").expect("values file");
}

#[hegel::test(database = database())]
fn property_a(tc: hegel::TestCase) {
    let n: i64 = tc.draw(gs::integers::<i64>().min_value(0).max_value(1_000_000));
    record("property_a", n);
    assert!(n < 1000);
}

#[hegel::test(database = database())]
fn property_b(tc: hegel::TestCase) {
    let n: i64 = tc.draw(gs::integers::<i64>().min_value(0).max_value(1_000_000));
    record("property_b", n);
    assert!(n < 2000);
}

/// RUNS failing properties one after another (keys `WORKER-many-0`,
/// `WORKER-many-1`, ...; failing from 100 + i on), a line `DONE i
/// failed=true` after each.
#[test]
fn many_failures() {
    let runs: i64 = std::env::var("RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(100);
    let worker = std::env::var("WORKER").unwrap_or_default();
    for i in 0..runs {
        let threshold = 100 + i;
        let outcome = std::panic::catch_unwind(|| {
            hegel::Hegel::new(move |tc: hegel::TestCase| {
                let n: i64 = tc.draw(gs::integers::<i64>().min_value(0).max_value(1_000_000));
                assert!(n < threshold);
            })
            .settings(hegel::Settings::new().database(database()))
            .__database_key(format!("{worker}-many-{i}"))
            .run();
        });
        println!("DONE {i} failed={}", outcome.is_err());
        std::io::stdout().flush().expect("stdout");
    }
}
