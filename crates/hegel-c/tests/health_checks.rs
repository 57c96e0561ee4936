//! Health checks through the C ABI behave as libhegel's do where a frontend
//! can tell: the `too_slow` budget is libhegel's, so a test whose first test
//! cases do real work is not failed by a loaded machine.

mod driver;

use driver::*;
use hegel_c::abi::*;
use hegel_c::generate::hegel_generate_integer;
use std::time::{Duration, Instant};

#[test]
fn test_cases_that_take_seconds_of_work_pass_the_too_slow_check() {
    let ctx = context();
    let settings = settings(ctx, 10, 7);
    let started = Instant::now();
    // Ten test cases of 150 ms each: past the engine's default budget of
    // one second, far inside libhegel's thirty.
    let report = run(ctx, settings, |tc| {
        let mut x = 0i64;
        if let Some(outcome) = stopped(hegel_generate_integer(ctx, tc, 0, 100, &mut x)) {
            return (outcome, String::new());
        }
        std::thread::sleep(Duration::from_millis(150));
        (Outcome::Valid, String::new())
    });
    assert!(started.elapsed() > Duration::from_secs(1));
    assert_eq!(
        report.status,
        hegel_run_status_t::HEGEL_RUN_STATUS_PASSED,
        "{:?}",
        report.error
    );
    assert!(report.test_cases >= 10);
}
