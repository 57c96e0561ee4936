//! The run loop end to end: a property is generated, fails, shrinks and is
//! reported; passing properties run their budget; exhausted spaces end
//! early; health checks fail the run unless suppressed.

use geist_engine::choice::ChoiceValue;
use geist_engine::{HealthCheck, RunSettings, Status, TestData, run};

mod basics {
    use super::*;
    use geist_engine::choice::IntegerConstraints;
    use geist_engine::data::Collection;

    fn fail(data: &mut TestData) {
        data.conclude(Status::Interesting, Some("assertion".into()));
    }

    #[test]
    fn finds_and_shrinks_an_integer_threshold() {
        let settings = RunSettings {
            seed: 3,
            ..RunSettings::default()
        };
        let result = run(&settings, &[], &mut |data| {
            let Ok(v) = data.draw_integer(IntegerConstraints::UNBOUNDED) else {
                return true;
            };
            if v > 1000 {
                fail(data);
            }
            true
        });
        assert_eq!(result.failures.len(), 1);
        assert_eq!(result.failures[0].choices, vec![ChoiceValue::Integer(1001)]);
    }

    #[test]
    fn shrinks_a_list_to_its_minimal_failing_form() {
        let settings = RunSettings {
            seed: 5,
            test_cases: 1000,
            ..RunSettings::default()
        };
        let draw_list = |data: &mut TestData| -> Option<Vec<i128>> {
            let mut c = Collection::new(0, None);
            let mut out = vec![];
            while c.more(data).ok()? {
                out.push(data.draw_integer(IntegerConstraints::UNBOUNDED).ok()?);
            }
            Some(out)
        };
        let result = run(&settings, &[], &mut |data| {
            let Some(xs) = draw_list(data) else {
                return true;
            };
            if xs.iter().sum::<i128>() > 100 {
                fail(data);
            }
            true
        });
        assert_eq!(result.failures.len(), 1);
        let mut replay = TestData::replaying(result.failures[0].choices.clone(), 1000);
        let xs = draw_list(&mut replay).unwrap();
        assert_eq!(xs, vec![101]);
    }

    #[test]
    fn passing_property_runs_the_requested_number_of_cases() {
        let settings = RunSettings {
            test_cases: 200,
            ..RunSettings::default()
        };
        let result = run(&settings, &[], &mut |data| {
            let _ = data.draw_integer(IntegerConstraints::UNBOUNDED);
            true
        });
        assert!(result.passed());
        assert_eq!(result.valid_test_cases, 200);
    }

    #[test]
    fn exhausted_space_ends_early() {
        let result = run(&RunSettings::default(), &[], &mut |data| {
            let _ = data.draw_boolean(0.5);
            true
        });
        assert!(result.passed());
        assert!(result.test_cases < 100);
    }
}

mod health_checks {
    use super::*;
    use geist_engine::choice::IntegerConstraints;
    use geist_engine::data::Collection;

    fn huge(data: &mut TestData) -> bool {
        let mut c = Collection::new(10_000, None);
        while let Ok(true) = c.more(data) {}
        true
    }

    #[test]
    fn a_huge_simplest_test_case_fails_unless_suppressed() {
        let result = run(&RunSettings::default(), &[], &mut huge);
        let message = result
            .health_check_failure()
            .expect("health check")
            .to_string();
        assert!(message.contains("large_initial_test_case"), "{message}");
        let settings = RunSettings {
            suppress_health_checks: vec![
                HealthCheck::LargeInitialTestCase,
                HealthCheck::TestCasesTooLarge,
                HealthCheck::FilterTooMuch,
            ],
            test_cases: 5,
            ..RunSettings::default()
        };
        let result = run(&settings, &[], &mut huge);
        assert!(result.health_check_failure().is_none());
    }

    /// A test whose data takes `seconds` to generate per test case (as the
    /// caller reports it: the engine keeps no clock).
    fn slow_draws(seconds: f64) -> impl FnMut(&mut TestData) -> bool {
        move |data: &mut TestData| {
            let _ = data.draw_integer(IntegerConstraints::bounded(0, 1000));
            data.draw_seconds = seconds;
            true
        }
    }

    /// hegel-go's TestHealthCheckFailureFilterTooMuch: `assume(n == 0)` over
    /// `0..=1000`, 200 test cases, must fail filter_too_much. geist used to
    /// draw 0 so often that it passed.
    #[test]
    fn a_filter_passing_one_value_in_a_thousand_fails_filter_too_much() {
        for seed in 0..20 {
            let settings = RunSettings {
                seed,
                test_cases: 200,
                ..RunSettings::default()
            };
            let result = run(&settings, &[], &mut |data| {
                if let Ok(n) = data.draw_integer(IntegerConstraints::bounded(0, 1000))
                    && n != 0
                {
                    data.conclude(Status::Invalid, None);
                }
                true
            });
            let failure = result.health_check_failure().expect("a health check");
            assert!(failure.to_string().contains("filter_too_much"), "{failure}");
        }
    }

    #[test]
    fn slow_generation_fails_too_slow_unless_suppressed() {
        let settings = RunSettings {
            test_cases: 100,
            ..RunSettings::default()
        };
        let result = run(&settings, &[], &mut slow_draws(0.3));
        let message = result.health_check_failure().expect("too_slow").to_string();
        assert!(message.contains("too_slow"), "{message}");
        assert!(
            result.test_cases <= 5,
            "stopped early: {}",
            result.test_cases
        );
        // Fast enough: 10 valid test cases in well under a second.
        let result = run(&settings, &[], &mut slow_draws(0.05));
        assert!(result.health_check_failure().is_none());
        let settings = RunSettings {
            suppress_health_checks: vec![HealthCheck::TooSlow],
            ..settings
        };
        let result = run(&settings, &[], &mut slow_draws(0.3));
        assert!(result.health_check_failure().is_none());
        assert_eq!(result.valid_test_cases, 100);
    }
}

/// Saved failures: one shrunk to its end is reported as it is (Hypothesis's
/// `reused_previously_shrunk_test_case`); one saved mid-shrink is shrunk.
mod reuse {
    use super::*;
    use geist_engine::DatabaseHandle;
    use geist_engine::choice::IntegerConstraints;
    use geist_engine::database::{DirectoryDatabase, ExampleDatabase, encode_choices};
    use geist_engine::run_with_database;

    fn over_1000(data: &mut TestData) -> bool {
        let Ok(v) = data.draw_integer(IntegerConstraints::UNBOUNDED) else {
            return true;
        };
        if v > 1000 {
            data.conclude(Status::Interesting, Some("over 1000".into()));
        }
        true
    }

    fn run_on(database: &DirectoryDatabase, seed: u128) -> geist_engine::RunResult {
        let settings = RunSettings {
            seed,
            ..RunSettings::default()
        };
        let handle = DatabaseHandle {
            database,
            key: b"over_1000".to_vec(),
        };
        run_with_database(&settings, Some(handle), &mut over_1000)
    }

    fn fresh(name: &str) -> (std::path::PathBuf, DirectoryDatabase) {
        let root = std::env::temp_dir().join(format!("geist-reuse-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let db = DirectoryDatabase::new(&root);
        (root, db)
    }

    #[test]
    fn a_failure_shrunk_to_its_end_replays_once_without_shrinking() {
        let (root, db) = fresh("shrunk");
        let first = run_on(&db, 1);
        assert_eq!(first.failures[0].choices, vec![ChoiceValue::Integer(1001)]);
        let second = run_on(&db, 2);
        assert_eq!(second.test_cases, 1, "{second:?}");
        assert_eq!(second.failures[0].choices, vec![ChoiceValue::Integer(1001)]);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_failure_saved_mid_shrink_is_shrunk_again() {
        let (root, db) = fresh("mid-shrink");
        // Another worker's example from the middle of its shrinking.
        db.save(b"over_1000", &encode_choices(&[ChoiceValue::Integer(5000)]))
            .unwrap();
        let result = run_on(&db, 3);
        assert!(result.test_cases > 1);
        assert_eq!(result.failures[0].choices, vec![ChoiceValue::Integer(1001)]);
        // Now it is recorded as shrunk: the next run only replays it.
        assert_eq!(run_on(&db, 4).test_cases, 1);
        let _ = std::fs::remove_dir_all(&root);
    }
}

/// Issue 13: an always-invalid run over a space it has exhausted passes after
/// the few test cases there are, as Hypothesis does, instead of failing the
/// filter_too_much health check.
mod exhaustion {
    use super::*;

    #[test]
    fn an_always_invalid_test_without_choices_runs_once() {
        let result = run(&RunSettings::default(), &[], &mut |data| {
            data.conclude(Status::Invalid, None);
            true
        });
        assert!(result.passed(), "{:?}", result.stop);
        assert_eq!(result.test_cases, 1);
    }

    #[test]
    fn an_always_invalid_boolean_runs_both_values_and_stops() {
        let result = run(&RunSettings::default(), &[], &mut |data| {
            let _ = data.draw_boolean(0.5);
            data.conclude(Status::Invalid, None);
            true
        });
        assert!(result.passed(), "{:?}", result.stop);
        assert_eq!(result.test_cases, 2);
    }

    /// A filter that rejects everything, as Hegel clients run one: up to
    /// `attempts` draws, each in a span the client discards, then the test
    /// case is rejected.
    fn always_rejecting_filter(
        min: i128,
        max: i128,
        attempts: usize,
    ) -> impl FnMut(&mut TestData) -> bool {
        move |data: &mut TestData| {
            for _ in 0..attempts {
                data.start_span(0xF1);
                if data
                    .draw_integer(geist_engine::choice::IntegerConstraints::bounded(min, max))
                    .is_err()
                {
                    return true;
                }
                data.stop_span(true);
            }
            data.conclude(Status::Invalid, None);
            true
        }
    }

    /// hegel-typescript's "filter that always fails causes assumption
    /// rejection": `integers(0, 10).filter(() => false)` passes on
    /// Hypothesis after at most 11 test cases; it used to fail
    /// filter_too_much on geist.
    #[test]
    fn an_always_failing_filter_over_a_small_range_exhausts() {
        for seed in 0..20 {
            for attempts in [1, 3] {
                let settings = RunSettings {
                    seed,
                    test_cases: 5,
                    ..RunSettings::default()
                };
                let result = run(
                    &settings,
                    &[],
                    &mut always_rejecting_filter(0, 10, attempts),
                );
                assert!(result.passed(), "seed {seed}: {:?}", result.stop);
                assert!(
                    result.test_cases <= 11,
                    "seed {seed}, {attempts} attempts: {} test cases",
                    result.test_cases
                );
            }
        }
    }

    /// A space too large to exhaust still fails the health check.
    #[test]
    fn an_always_failing_filter_over_a_large_range_fails_filter_too_much() {
        let result = run(
            &RunSettings::default(),
            &[],
            &mut always_rejecting_filter(0, 1_000_000, 3),
        );
        let failure = result.health_check_failure().expect("a health check");
        assert!(failure.to_string().contains("filter_too_much"), "{failure}");
    }
}

/// Issue 13: equal elements, which many bugs need, are found every time
/// (hegeltest's `test_duplicate_tuples_in_list`: geist used to miss it in 7
/// of 40 runs).
mod copies {
    use super::*;
    use geist_engine::choice::IntegerConstraints;
    use geist_engine::data::Collection;

    #[test]
    fn a_list_with_two_equal_pairs_is_found_for_every_seed() {
        for seed in 0..40 {
            let settings = RunSettings {
                seed,
                test_cases: 100,
                ..RunSettings::default()
            };
            let result = run(&settings, &[], &mut |data| {
                let mut pairs = Vec::new();
                let mut list = Collection::new(0, Some(10));
                loop {
                    match list.more(data) {
                        Ok(true) => {}
                        Ok(false) => break,
                        Err(_) => return true,
                    }
                    let range = IntegerConstraints::bounded(0, 184);
                    let (Ok(a), Ok(b)) = (data.draw_integer(range), data.draw_integer(range))
                    else {
                        return true;
                    };
                    pairs.push((a, b));
                }
                let mut sorted = pairs.clone();
                sorted.sort_unstable();
                sorted.dedup();
                if sorted.len() < pairs.len() {
                    data.conclude(Status::Interesting, Some("duplicate pair".into()));
                }
                true
            });
            assert_eq!(result.failures.len(), 1, "seed {seed}: not found");
        }
    }
}

/// Issue 13: hegel-cpp's `FindStrings.LongDuplicatesStrings` (two strings,
/// equal, of five or more code points), which geist used to give up on after
/// 1,000 test cases (hegel-core finds it in about 48): a string choice copied
/// onto another with the same constraints (the label-sharing mutation) finds it.
mod equal_strings {
    use super::*;
    use geist_engine::charset::CharSet;
    use geist_engine::choice::SizeConstraints;
    use std::sync::Arc;

    #[test]
    fn two_equal_long_strings_are_found_for_every_seed() {
        let alphabet = Arc::new(CharSet::from_intervals(vec![
            (0, 0xD7FF),
            (0xE000, 0x10FFFF),
        ]));
        let size = SizeConstraints {
            min_size: 0,
            max_size: 100,
        };
        let mut calls = Vec::new();
        for seed in 0..30 {
            let settings = RunSettings {
                seed,
                test_cases: 1000,
                ..RunSettings::default()
            };
            let mut first_found = None;
            let mut count = 0u64;
            let result = run(&settings, &[], &mut |data| {
                count += 1;
                let (Ok(a), Ok(b)) = (
                    data.draw_string(alphabet.clone(), size),
                    data.draw_string(alphabet.clone(), size),
                ) else {
                    return true;
                };
                if a.len() >= 5 && a == b {
                    first_found.get_or_insert(count);
                    data.conclude(Status::Interesting, Some("equal".into()));
                }
                true
            });
            assert_eq!(result.failures.len(), 1, "seed {seed}: not found");
            calls.push(first_found.unwrap_or(0));
        }
        calls.sort_unstable();
        println!(
            "test cases to the first failure: median {}, most {}",
            calls[15], calls[29]
        );
    }
}

/// A nondeterministic test under each [`Nondeterminism`]: aborted as flaky,
/// or handled (failures confirmed by replay and reported with their
/// standing). And `stop_on_first_failure`.
mod nondeterminism {
    use super::*;
    use geist_engine::choice::IntegerConstraints;
    use geist_engine::{Flakiness, Nondeterminism, Replays, Standing};

    fn handled(seed: u128) -> RunSettings {
        RunSettings {
            seed,
            nondeterminism: Nondeterminism::Handle,
            discovery_replays: 4,
            ..RunSettings::default()
        }
    }

    #[test]
    fn tries_grow_as_the_observed_failure_rate_falls() {
        let tries = |failed, run| Replays { failed, run }.tries();
        assert_eq!(tries(20, 20), 1);
        assert_eq!(tries(4, 4), 2);
        assert_eq!(tries(4, 8), 4);
        assert_eq!(tries(1, 20), 8);
        assert_eq!(tries(0, 10), 8);
    }

    /// Draws an integer whose lower bound grows with every test case.
    fn drifting(calls: &mut i128, data: &mut TestData) -> bool {
        *calls += 1;
        let _ = data.draw_integer(IntegerConstraints::bounded(*calls, 1 << 40));
        true
    }

    #[test]
    fn drifting_generation_is_flaky_or_handled() {
        let mut calls = 0;
        let aborted = run(&RunSettings::default(), &[], &mut |data| {
            drifting(&mut calls, data)
        });
        assert!(matches!(
            aborted.flakiness(),
            Some(Flakiness::Generation { .. })
        ));
        let mut calls = 0;
        let result = run(&handled(1), &[], &mut |data| drifting(&mut calls, data));
        assert!(result.passed(), "{:?}", result.stop);
        assert!(matches!(
            result.nondeterminism,
            Some(Flakiness::Generation { .. })
        ));
        assert_eq!(result.valid_test_cases, 100);
    }

    #[test]
    fn a_failure_that_fails_every_third_run_is_confirmed_and_shrunk() {
        let mut coin = 0;
        let result = run(&handled(2), &[], &mut |data| {
            let Ok(x) = data.draw_integer(IntegerConstraints::bounded(0, 1000)) else {
                return true;
            };
            if x >= 10 {
                coin += 1;
                if coin % 3 == 1 {
                    data.conclude(Status::Interesting, Some("large".into()));
                }
            }
            true
        });
        assert!(result.nondeterminism.is_some());
        assert_eq!(result.failures.len(), 1);
        assert_eq!(result.failures[0].choices, vec![ChoiceValue::Integer(10)]);
        let Standing::Confirmed(replays) = result.failures[0].standing else {
            panic!("{:?}", result.failures[0].standing);
        };
        assert!(
            replays.failed > 0 && replays.failed < replays.run,
            "{replays:?}"
        );
    }

    #[test]
    fn an_unconfirmed_failure_gives_way_to_a_confirmed_one() {
        let mut calls = 0;
        let result = run(&handled(3), &[], &mut |data| {
            let _ = data.draw_integer(IntegerConstraints::bounded(0, 10));
            calls += 1;
            let origin = if calls == 1 { "once" } else { "always" };
            data.conclude(Status::Interesting, Some(origin.into()));
            true
        });
        assert_eq!(result.failures.len(), 1);
        assert_eq!(result.failures[0].origin, "always");
        assert_eq!(
            result.failures[0].standing,
            Standing::Confirmed(Replays { failed: 4, run: 4 })
        );
    }

    #[test]
    fn without_stop_on_first_failure_the_budget_runs_out() {
        for stop_on_first_failure in [true, false] {
            let settings = RunSettings {
                seed: 4,
                test_cases: 50,
                stop_on_first_failure,
                report_multiple_failures: false,
                ..RunSettings::default()
            };
            let result = run(&settings, &[], &mut |data| {
                let Ok(x) = data.draw_integer(IntegerConstraints::bounded(0, 255)) else {
                    return true;
                };
                if x % 2 == 1 {
                    data.conclude(Status::Interesting, Some("odd".into()));
                }
                true
            });
            assert_eq!(result.failures.len(), 1);
            assert_eq!(result.failures[0].choices, vec![ChoiceValue::Integer(1)]);
            assert_eq!(
                result.valid_test_cases >= 50,
                !stop_on_first_failure,
                "{} valid test cases",
                result.valid_test_cases
            );
        }
    }
}
