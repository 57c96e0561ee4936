//! `geist db` end to end: list, export, import and merge between directories
//! and, with a real redis-server (`scripts/stages/redis.sh`), Redis.

use geist_database::local_server::LocalRedis;
use geist_database::{DirectoryDatabase, ExampleDatabase};
use geist_engine::choice::ChoiceValue;
use geist_engine::database::encode_choices;
use std::path::Path;
use std::process::{Command, Output};

fn geist(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_geist"))
        .args(args)
        .output()
        .expect("runs geist")
}

fn succeeded(output: Output) -> (String, String) {
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    );
    assert!(
        output.status.success(),
        "{}\n{stdout}\n{stderr}",
        output.status
    );
    (stdout, stderr)
}

fn entry(n: i128) -> Vec<u8> {
    encode_choices(&[ChoiceValue::Integer(n), ChoiceValue::Boolean(true)])
}

fn text(path: &Path) -> &str {
    path.to_str().expect("UTF-8 temporary path")
}

/// Saves three failures under two keys.
fn seed(database: &dyn ExampleDatabase) {
    database.save(b"tests/a.rs:1", &entry(1000)).unwrap();
    database.save(b"tests/a.rs:1", &entry(7)).unwrap();
    database.save(b"tests/b.rs:2", &entry(-1)).unwrap();
}

/// Lists `source`, exports it into a file, imports that into a fresh
/// directory, adds a failure there and merges it all into `other`.
fn round_trip(source: &str, other: &str) {
    let (listing, _) = succeeded(geist(&["db", "list", source, "--entries"]));
    assert!(listing.contains("\"tests/a.rs:1\"  2 entries"), "{listing}");
    assert!(listing.contains("    [1000, true]"), "{listing}");
    assert!(listing.contains("\"tests/b.rs:2\"  1 entry"), "{listing}");
    assert!(listing.contains("2 keys, 3 entries in "), "{listing}");

    let work = tempfile::tempdir().unwrap();
    let artifact = work.path().join("failures.json");
    let (_, said) = succeeded(geist(&["db", "export", source, "-o", text(&artifact)]));
    assert!(
        said.starts_with("exported 3 entries under 2 keys"),
        "{said}"
    );

    let developer = work.path().join("developer");
    let (_, said) = succeeded(geist(&["db", "import", text(&artifact), text(&developer)]));
    assert!(
        said.starts_with("imported 3 entries under 2 keys"),
        "{said}"
    );
    let (listing, _) = succeeded(geist(&["db", "list", text(&developer)]));
    assert!(
        listing.ends_with(&format!("2 keys, 3 entries in {}\n", developer.display())),
        "{listing}"
    );

    DirectoryDatabase::new(&developer)
        .save(b"tests/c.rs:3", &entry(3))
        .unwrap();
    let (_, said) = succeeded(geist(&["db", "merge", text(&developer), other]));
    assert!(said.starts_with("merged 4 entries under 3 keys"), "{said}");
    let (listing, _) = succeeded(geist(&["db", "list", other]));
    assert!(listing.contains("3 keys, 4 entries"), "{listing}");
}

#[test]
fn directories_list_export_import_and_merge() {
    let (source, other) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    seed(&DirectoryDatabase::new(source.path()));
    round_trip(text(source.path()), text(other.path()));
}

#[test]
fn bad_archives_and_settings_are_named() {
    let work = tempfile::tempdir().unwrap();
    let junk = work.path().join("junk.json");
    std::fs::write(&junk, b"{\"format\": \"something else\", \"version\": 1}").unwrap();
    for (args, expected) in [
        (
            vec!["db", "import", text(&junk), text(work.path())],
            "archive format \"something else\"",
        ),
        (
            vec!["db", "list", "redis://h/0?colour=blue"],
            "unknown option \"colour\"",
        ),
        (vec!["db", "list", ""], "the database setting is empty"),
        (
            vec!["db", "import", "/nonexistent/file.json", "db"],
            "cannot open /nonexistent/file.json",
        ),
    ] {
        let output = geist(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

#[test]
#[ignore = "needs redis-server: scripts/stages/redis.sh runs it"]
fn redis_lists_exports_imports_and_merges() {
    let redis = LocalRedis::start().expect("redis-server (scripts/stages/redis.sh)");
    seed(geist_database::open(&redis.url(0)).unwrap().as_ref());
    round_trip(&redis.url(0), &redis.url(1));
    // An unreachable server is an error here, not a silently empty database.
    let down = LocalRedis::start().unwrap();
    let url = down.url(0);
    drop(down);
    let output = geist(&["db", "list", &url]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is unavailable"), "{stderr}");
}
