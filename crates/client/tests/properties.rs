//! One property suite for every transport: it runs in-process under
//! `cargo test`, and over the wire when `GEIST_SERVER_COMMAND` names a Hegel
//! server (the client-conformance stage runs it against geist-server and
//! against hegel-core). Passing properties check that every generator keeps
//! its bounds whoever generates; failing ones check that the bug is found and
//! shrunk to the same minimal example, reported the same way.

use geist::generators::{self as gs, Generator};
use geist::stateful::StateMachine;
use geist::{Settings, TestCase, Transport, run_property};
use std::collections::{BTreeMap, HashMap, HashSet};

fn settings(test_cases: u64) -> Settings {
    Settings::new().test_cases(test_cases).seed(Some(11))
}

/// Runs a property that must pass.
fn passes(test_cases: u64, mut property: impl FnMut(&mut TestCase)) {
    if let Err(report) = run_property(&settings(test_cases), &mut property) {
        panic!("the property should pass:\n{report}");
    }
}

/// Runs a property that must fail and returns its report.
fn fails(test_cases: u64, mut property: impl FnMut(&mut TestCase)) -> String {
    match run_property(&settings(test_cases), &mut property) {
        Ok(summary) => panic!("the property should fail; it passed: {summary}"),
        Err(report) => report,
    }
}

#[test]
fn the_transport_is_the_one_the_environment_names() {
    let set = |name| std::env::var(name).is_ok_and(|c: String| !c.trim().is_empty());
    let wire = set("GEIST_SERVER_COMMAND") || set("GEIST_SERVER_ADDRESS");
    assert_eq!(
        matches!(
            Settings::new().get_transport(),
            Transport::Server(_) | Transport::Connect(_)
        ),
        wire
    );
}

#[test]
fn numbers_keep_their_bounds() {
    passes(300, |tc| {
        let a = tc.draw(gs::integers::<i32>().min_value(-5).max_value(5));
        let b = tc.draw(gs::integers::<u128>().min_value(u128::MAX - 3));
        let c = tc.draw(gs::integers::<i128>());
        let f = tc.draw(
            gs::floats::<f64>()
                .min_value(0.0)
                .max_value(1.0)
                .exclude_max(true),
        );
        let g = tc.draw(gs::floats::<f32>().allow_nan(false));
        let finite_or_nan = tc.draw(gs::floats::<f64>().allow_infinity(false));
        assert!((-5..=5).contains(&a));
        assert!(b >= u128::MAX - 3);
        let _ = c;
        assert!((0.0..1.0).contains(&f));
        assert!(!g.is_nan());
        assert!(!finite_or_nan.is_infinite());
    });
}

#[test]
fn strings_and_bytes_keep_their_options() {
    passes(300, |tc| {
        let s = tc.draw(gs::text().min_size(1).max_size(8));
        let ascii = tc.draw(gs::text().codec("ascii").max_size(20));
        let digits = tc.draw(gs::text().categories(&["Nd"]).max_size(5));
        let c = tc.draw(gs::characters().min_codepoint(0x41).max_codepoint(0x5A));
        let b = tc.draw(gs::binary().min_size(2).max_size(4));
        let word = tc.draw(gs::from_regex("[a-c]{2,4}").fullmatch(true));
        assert!((1..=8).contains(&s.chars().count()));
        assert!(ascii.is_ascii());
        assert!(digits.chars().all(char::is_numeric));
        assert!(c.is_ascii_uppercase());
        assert!((2..=4).contains(&b.len()));
        assert!((2..=4).contains(&word.len()) && word.chars().all(|c| "abc".contains(c)));
    });
}

#[test]
fn collections_keep_their_sizes_and_uniqueness() {
    passes(200, |tc| {
        let v = tc.draw(gs::vecs(gs::integers::<u8>()).min_size(1).max_size(6));
        let u = tc.draw(
            gs::vecs(gs::integers::<u8>().max_value(20))
                .max_size(10)
                .unique(true),
        );
        let set: HashSet<i16> = tc.draw(gs::hashsets(gs::integers::<i16>()).max_size(5));
        let map: HashMap<u8, bool> =
            tc.draw(gs::hashmaps(gs::integers::<u8>(), gs::booleans()).max_size(4));
        let tree: BTreeMap<String, u8> = tc.draw(
            gs::btreemaps(gs::text().max_size(3), gs::integers::<u8>())
                .min_size(1)
                .max_size(3),
        );
        let array: [bool; 3] = tc.draw(gs::arrays::<_, 3>(gs::booleans()));
        assert!((1..=6).contains(&v.len()));
        assert_eq!(u.iter().collect::<HashSet<_>>().len(), u.len());
        assert!(u.len() <= 10 && set.len() <= 5 && map.len() <= 4);
        assert!((1..=3).contains(&tree.len()));
        let _ = array;
    });
}

#[test]
fn combinators_compose() {
    passes(200, |tc| {
        let even = tc.draw(gs::integers::<u32>().map(|x| x.wrapping_mul(2)));
        let odd = tc.draw(gs::integers::<u8>().filter(|x| x % 2 == 1));
        let (n, xs) = tc.draw(gs::integers::<usize>().max_value(4).flat_map(|n| {
            gs::vecs(gs::just(n))
                .min_size(n)
                .max_size(n)
                .map(move |v| (n, v))
        }));
        let pick = tc.draw(gs::sampled_from(vec!["x", "y", "z"]));
        let either = tc.draw(gs::one_of(vec![
            gs::just(-1i64).boxed(),
            gs::integers::<i64>().min_value(10).max_value(20).boxed(),
        ]));
        let maybe = tc.draw(gs::optional(gs::booleans()));
        let pair = tc.draw((gs::integers::<u8>(), gs::booleans()));
        assert_eq!(even % 2, 0);
        assert_eq!(odd % 2, 1);
        assert_eq!(xs.len(), n);
        assert!(["x", "y", "z"].contains(&pick));
        assert!(either == -1 || (10..=20).contains(&either));
        let _ = (maybe, pair);
    });
}

#[test]
fn formats_are_well_formed() {
    passes(100, |tc| {
        let email = tc.draw(gs::emails());
        let date = tc.draw(gs::dates());
        let ip = tc.draw(gs::ip_addresses().version(4));
        let any_ip = tc.draw(gs::ip_addresses());
        let uuid = tc.draw(gs::uuids());
        assert!(email.contains('@'));
        assert_eq!(date.len(), 10);
        assert_eq!(ip.split('.').count(), 4);
        assert!(any_ip.parse::<std::net::IpAddr>().is_ok(), "{any_ip}");
        assert_eq!(uuid.len(), 36);
    });
}

#[test]
fn a_threshold_shrinks_to_its_boundary() {
    let report = fails(1000, |tc| {
        let x = tc.draw(gs::integers::<u64>());
        assert!(x < 1000, "x = {x}");
    });
    assert!(report.contains("draw 1 = 1000\n"), "{report}");
    assert!(report.contains("x = 1000\n"), "{report}");
}

#[test]
fn a_long_list_shrinks_to_the_shortest_simplest() {
    let report = fails(1000, |tc| {
        let xs = tc.draw(gs::vecs(gs::integers::<u8>()));
        assert!(xs.len() < 3);
    });
    assert!(report.contains("draw 1 = [0, 0, 0]\n"), "{report}");
}

#[test]
fn a_string_shrinks_to_zeros() {
    let report = fails(1000, |tc| {
        let s = tc.draw(gs::text());
        assert!(s.chars().count() < 2);
    });
    assert!(report.contains("draw 1 = \"00\"\n"), "{report}");
}

#[test]
fn notes_and_names_appear_only_in_the_report() {
    let report = fails(1000, |tc| {
        let n = tc.draw_named("n", gs::integers::<i16>());
        tc.note(format!("half = {}", n / 2));
        assert!(n > -50);
    });
    assert!(report.contains("  n = -50\n  half = -25\n"), "{report}");
}

#[test]
fn a_stateful_bug_shrinks_to_the_shortest_program() {
    // A bounded queue of capacity 2 that accepts a third push.
    let machine = StateMachine::new()
        .rule("push", |q: &mut Vec<u8>, tc: &mut TestCase| {
            let x = tc.draw(gs::integers::<u8>());
            let accepted = q.len() < 3;
            if accepted {
                q.push(x);
            }
            assert!(q.len() <= 2, "the queue holds {} items", q.len());
        })
        .rule_when(
            "pop",
            |q| !q.is_empty(),
            |q, _tc| {
                q.remove(0);
            },
        );
    let report = fails(1000, |tc| machine.run(tc, Vec::new()));
    assert!(report.contains("step 3: push(0)"), "{report}");
    assert!(!report.contains("step 4"), "{report}");
    assert!(report.contains("the queue holds 3 items"), "{report}");
}
