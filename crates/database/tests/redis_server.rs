//! The Redis backend against a real `redis-server` (Debian's package), one
//! started per test on a free loopback port and stopped at its end.
//! `scripts/stages/redis.sh` installs the server and runs these.

use geist_database::archive::{self, Archive};
use geist_database::local_server::LocalRedis;
use geist_database::{DatabaseError, DirectoryDatabase, ExampleDatabase};
use std::time::{Duration, Instant};

fn server() -> LocalRedis {
    LocalRedis::start().expect("these tests need redis-server (scripts/stages/redis.sh)")
}

fn raw_connection(server: &LocalRedis) -> redis::Connection {
    redis::Client::open(server.url(0))
        .unwrap()
        .get_connection()
        .unwrap()
}

fn sorted(mut values: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    values.sort();
    values
}

#[test]
#[ignore = "needs redis-server: scripts/stages/redis.sh runs it"]
fn entries_are_sets_that_expire_and_keys_are_listed() {
    let server = server();
    let db = geist_database::open(&format!("{}?expire=3600", server.url(0))).unwrap();
    let binary_key: &[u8] = &[0xff, b'*', 0];
    db.save(b"tests/a.rs:1", b"one").unwrap();
    db.save(b"tests/a.rs:1", b"one").unwrap();
    db.save(b"tests/a.rs:1", b"two").unwrap();
    db.save(binary_key, b"\x00\xff").unwrap();
    assert_eq!(
        sorted(db.fetch(b"tests/a.rs:1").unwrap()),
        vec![b"one".to_vec(), b"two".to_vec()]
    );
    assert_eq!(db.fetch(binary_key).unwrap(), vec![b"\x00\xff".to_vec()]);
    assert_eq!(
        db.keys().unwrap(),
        vec![b"tests/a.rs:1".to_vec(), binary_key.to_vec()]
    );

    db.move_value(b"tests/a.rs:1", b"tests/a.rs:1.secondary", b"two")
        .unwrap();
    assert_eq!(db.fetch(b"tests/a.rs:1").unwrap(), vec![b"one".to_vec()]);
    assert_eq!(
        db.fetch(b"tests/a.rs:1.secondary").unwrap(),
        vec![b"two".to_vec()]
    );
    db.delete(b"tests/a.rs:1", b"one").unwrap();
    db.delete(b"tests/a.rs:1", b"never saved").unwrap();
    assert!(db.fetch(b"tests/a.rs:1").unwrap().is_empty());

    let mut raw = raw_connection(&server);
    let ttl: i64 = redis::cmd("PTTL")
        .arg(b"geist-example:tests/a.rs:1.secondary")
        .query(&mut raw)
        .unwrap();
    assert!((3_590_000..=3_600_000).contains(&ttl), "PTTL {ttl}");
    let members: Vec<Vec<u8>> = redis::cmd("SMEMBERS")
        .arg(b"geist-example:tests/a.rs:1.secondary")
        .query(&mut raw)
        .unwrap();
    assert_eq!(members, vec![b"two".to_vec()]);
}

#[test]
#[ignore = "needs redis-server: scripts/stages/redis.sh runs it"]
fn prefixes_keep_suites_apart_and_expire_zero_keeps_keys() {
    let server = server();
    let a = geist_database::open(&format!("{}?prefix=suite-a:&expire=0", server.url(0))).unwrap();
    let b = geist_database::open(&format!("{}?prefix=suite-b:", server.url(0))).unwrap();
    a.save(b"k", b"from a").unwrap();
    b.save(b"k", b"from b").unwrap();
    assert_eq!(a.fetch(b"k").unwrap(), vec![b"from a".to_vec()]);
    assert_eq!(b.keys().unwrap(), vec![b"k".to_vec()]);
    let ttl: i64 = redis::cmd("PTTL")
        .arg("suite-a:k")
        .query(&mut raw_connection(&server))
        .unwrap();
    assert_eq!(ttl, -1, "expire=0 keeps the key for ever");
}

#[test]
#[ignore = "needs redis-server: scripts/stages/redis.sh runs it"]
fn threads_writing_at_once_lose_nothing() {
    let server = server();
    let db = geist_database::open(&server.url(0)).unwrap();
    std::thread::scope(|scope| {
        for worker in 0..8u32 {
            let db = &db;
            scope.spawn(move || {
                for run in 0..200u32 {
                    db.save(b"shared", &run.to_le_bytes()).unwrap();
                    db.save(format!("w{worker}").as_bytes(), &run.to_le_bytes())
                        .unwrap();
                    if run % 2 == 1 {
                        db.move_value(
                            format!("w{worker}").as_bytes(),
                            format!("w{worker}.moved").as_bytes(),
                            &run.to_le_bytes(),
                        )
                        .unwrap();
                    }
                }
            });
        }
    });
    assert_eq!(db.fetch(b"shared").unwrap().len(), 200);
    for worker in 0..8 {
        assert_eq!(
            db.fetch(format!("w{worker}").as_bytes()).unwrap().len(),
            100
        );
        assert_eq!(
            db.fetch(format!("w{worker}.moved").as_bytes())
                .unwrap()
                .len(),
            100
        );
    }
}

#[test]
#[ignore = "needs redis-server: scripts/stages/redis.sh runs it"]
fn a_killed_server_is_reported_once_and_used_again_when_back() {
    let mut server = server();
    let db = geist_database::open(&format!("{}?timeout=1&retry=0.3", server.url(0))).unwrap();
    db.save(b"k", b"before").unwrap();
    server.kill().unwrap();

    let started = Instant::now();
    let first = db.save(b"k", b"during");
    assert!(
        matches!(&first, Err(DatabaseError::Unavailable { .. })),
        "{first:?}"
    );
    let message = first.unwrap_err().to_string();
    assert!(message.contains(&server.url(0)), "{message}");
    assert!(message.contains("is unavailable ("), "{message}");
    // While it is down nothing waits and nothing is reported again, also
    // after the retry interval (the same outage).
    for _ in 0..100 {
        assert!(db.fetch(b"k").unwrap().is_empty());
        db.save(b"k", b"during").unwrap();
    }
    std::thread::sleep(Duration::from_millis(400));
    assert!(db.fetch(b"k").unwrap().is_empty());
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );

    // Back (empty: no persistence): used again after the retry interval.
    server.restart().unwrap();
    std::thread::sleep(Duration::from_millis(400));
    db.save(b"k", b"after").unwrap();
    assert_eq!(db.fetch(b"k").unwrap(), vec![b"after".to_vec()]);

    // A second outage is a new one: reported again.
    server.kill().unwrap();
    assert!(matches!(
        db.fetch(b"k"),
        Err(DatabaseError::Unavailable { .. })
    ));
}

#[test]
#[ignore = "needs redis-server: scripts/stages/redis.sh runs it"]
fn a_server_that_stops_answering_costs_one_timeout() {
    let server = server();
    let db = geist_database::open(&format!("{}?timeout=0.5&retry=60", server.url(0))).unwrap();
    db.save(b"k", b"v").unwrap();
    server.pause(true).unwrap();
    let started = Instant::now();
    let first = db.fetch(b"k");
    let waited = started.elapsed();
    assert!(
        matches!(&first, Err(DatabaseError::Unavailable { .. })),
        "{first:?}"
    );
    // One timeout (0.5 s), not one per operation.
    eprintln!("the first operation on a paused server took {waited:?}");
    assert!(waited < Duration::from_millis(900), "{waited:?}");
    let started = Instant::now();
    for _ in 0..100 {
        db.save(b"k", b"w").unwrap();
    }
    assert!(started.elapsed() < Duration::from_millis(100));
    server.pause(false).unwrap();
}

#[test]
#[ignore = "needs redis-server: scripts/stages/redis.sh runs it"]
fn archives_move_failures_between_redis_and_directories() {
    let server = server();
    let redis = geist_database::open(&server.url(0)).unwrap();
    let entry = |n: i128| {
        geist_engine::database::encode_choices(&[geist_engine::choice::ChoiceValue::Integer(n)])
    };
    redis.save(b"tests/a.rs:1", &entry(1)).unwrap();
    redis.save(b"tests/b.rs:2", &entry(2)).unwrap();

    let text = archive::export(redis.as_ref()).unwrap().to_json();
    let local = tempfile::tempdir().unwrap();
    let directory = DirectoryDatabase::new(local.path());
    let read = Archive::read(text.as_bytes(), archive::DEFAULT_MAX_SIZE).unwrap();
    assert_eq!(archive::import(&read, &directory).unwrap().entries, 2);
    assert_eq!(
        directory.keys().unwrap(),
        vec![b"tests/a.rs:1".to_vec(), b"tests/b.rs:2".to_vec()]
    );

    directory.save(b"tests/c.rs:3", &entry(3)).unwrap();
    let copied = archive::merge(&directory, redis.as_ref()).unwrap();
    assert_eq!((copied.keys, copied.entries), (3, 3));
    assert_eq!(redis.keys().unwrap().len(), 3);
}
