//! `#[geist::test]` and `#[derive(Generate)]`.

use geist::generators::{self as gs, Generator};
use geist::{Generate, Settings, TestCase, run_property};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Generate)]
struct Point {
    x: i32,
    #[geist(with = gs::integers::<i32>().min_value(0).max_value(10))]
    y: i32,
}

#[derive(Debug, Clone, PartialEq, Generate)]
struct Wrapper<T>(T, bool);

#[derive(Debug, Clone, PartialEq, Generate)]
enum Shape {
    Empty,
    Dot(Point),
    Polygon { points: Vec<Point>, closed: bool },
}

#[derive(Debug, Generate)]
struct Unit;

#[geist::test]
fn point_y_is_within_its_generator(tc: &mut TestCase) {
    let p: Point = tc.draw(gs::any::<Point>());
    assert!((0..=10).contains(&p.y));
}

#[geist::test(test_cases = 50, seed = 3)]
fn generic_wrappers_and_collections(tc: &mut TestCase) {
    let w: Wrapper<u8> = tc.draw(gs::any::<Wrapper<u8>>());
    let m: BTreeMap<u8, Option<String>> = tc.draw(gs::any::<BTreeMap<u8, Option<String>>>());
    let _: Unit = tc.draw_silent(gs::any::<Unit>());
    let _ = (w, m);
}

#[geist::test(settings = Settings::new().test_cases(20), derandomize = true)]
fn settings_argument_is_used(tc: &mut TestCase) {
    let arr: [u8; 3] = tc.draw(gs::any::<[u8; 3]>());
    assert_eq!(arr.len(), 3);
}

#[test]
fn every_variant_is_generated_and_enums_shrink_to_the_first_failing_variant() {
    let mut seen = [false; 3];
    let settings = Settings::new()
        .test_cases(300)
        .seed(Some(5))
        .database(None::<&str>);
    run_property(&settings, &mut |tc: &mut TestCase| {
        let shape: Shape = tc.draw(gs::any::<Shape>());
        let index = match shape {
            Shape::Empty => 0,
            Shape::Dot(_) => 1,
            Shape::Polygon { .. } => 2,
        };
        seen[index] = true;
    })
    .expect("passes");
    assert_eq!(seen, [true; 3]);

    let mut minimal = None;
    let report = run_property(&settings, &mut |tc: &mut TestCase| {
        let shape: Shape = tc.draw(gs::any::<Shape>());
        if tc.is_final() {
            minimal = Some(shape.clone());
        }
        assert!(!matches!(shape, Shape::Polygon { ref points, .. } if !points.is_empty()));
    });
    assert!(report.is_err());
    assert_eq!(
        minimal,
        Some(Shape::Polygon {
            points: vec![Point { x: 0, y: 0 }],
            closed: false
        })
    );
}

/// The attribute names draws after their variables; run as a child process
/// because the test it defines fails on purpose.
mod named {
    use geist::TestCase;
    use geist::generators as gs;

    #[geist::test(seed = 9)]
    #[ignore = "fails on purpose; run by draws_are_named_after_their_variables"]
    fn failing_named_property(tc: &mut TestCase) {
        let count: u32 = tc.draw(gs::integers::<u32>());
        let flag = tc.draw(gs::booleans());
        assert!(count < 10 || flag, "too many");
    }
}

#[test]
fn draws_are_named_after_their_variables() {
    let exe = std::env::current_exe().expect("test binary path");
    let output = std::process::Command::new(exe)
        .args([
            "named::failing_named_property",
            "--exact",
            "--ignored",
            "--test-threads=1",
        ])
        .env("RUST_BACKTRACE", "0")
        .env("GEIST_DATABASE", "none")
        .output()
        .expect("run the child test");
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!output.status.success(), "{all}");
    assert!(all.contains("count = 10"), "{all}");
    assert!(all.contains("flag = false"), "{all}");
    assert!(
        all.contains("property macros::named::failing_named_property failed"),
        "{all}"
    );
    assert!(
        all.contains("GEIST_SEED=9 cargo test -- named::failing_named_property --exact"),
        "{all}"
    );
}

#[test]
fn any_is_a_generator() {
    fn takes<G: Generator<Output = Point>>(_: G) {}
    takes(gs::any::<Point>());
}
