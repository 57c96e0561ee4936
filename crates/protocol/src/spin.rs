//! Whether to poll briefly for the peer's next packet instead of sleeping.
//!
//! A Hegel client answers within microseconds. When the machine has a core
//! to spare, waking a sleeping thread costs more than that, and polling
//! (yielding between looks) before sleeping nearly triples throughput
//! (measured on 2 idle cores: 19-20k instead of 7.0-7.7k test cases per
//! second with hegeltest). When other work keeps the cores busy it is the
//! other way round: a yielding thread waits a whole time slice of someone
//! else's before it looks again, and throughput collapses (measured with
//! four busy loops on the 2 cores: 270-370 test cases per second polling,
//! 6-14k sleeping). So the server polls only while the other processes on
//! the machine leave at least half a core idle, as `/proc/stat` tells, read at
//! most every 200 ms (first after 40 ms, polling until then). Where that
//! cannot be read, or on one CPU, it does not poll.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long one poll lasts at most.
const WINDOW: Duration = Duration::from_micros(50);
/// How often the machine's load is read again (the first time sooner).
const REFRESH: Duration = Duration::from_millis(200);
const FIRST_REFRESH: Duration = Duration::from_millis(40);

/// CPU time counters, in clock ticks.
#[derive(Clone, Copy, Debug, Default)]
struct Ticks {
    /// All CPUs, all states.
    total: u64,
    /// All CPUs, idle or waiting for I/O.
    idle: u64,
    /// This process (user and system).
    own: u64,
}

fn read_ticks() -> Option<Ticks> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let cpu = stat.lines().next()?.strip_prefix("cpu ")?;
    let fields: Vec<u64> = cpu
        .split_whitespace()
        .take(8)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    let own_stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are the
    // 14th and 15th fields of the line, so the 12th and 13th after it.
    let after_name = own_stat.rsplit_once(')')?.1;
    let own: Vec<u64> = after_name
        .split_whitespace()
        .skip(11)
        .take(2)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    Some(Ticks {
        total: fields.iter().sum(),
        idle: fields.get(3)? + fields.get(4)?,
        own: own.iter().sum(),
    })
}

/// Whether other processes leave a core idle, from two readings.
fn core_to_spare(before: Ticks, now: Ticks, cpus: u64) -> bool {
    let total = now.total.saturating_sub(before.total);
    if total == 0 || cpus < 2 {
        return false;
    }
    let busy = total.saturating_sub(now.idle.saturating_sub(before.idle));
    let others = busy.saturating_sub(now.own.saturating_sub(before.own));
    // `total` spans all CPUs: one core's worth is total / cpus. The client
    // is among the others and keeps up to about a core busy itself; polling
    // goes on while the others leave at least half a core idle.
    others * cpus * 2 <= total * (cpus * 2 - 1)
}

/// The polling decision shared by the threads waiting on one input.
#[derive(Debug)]
pub struct SpinPolicy {
    allowed: AtomicBool,
    /// Whether a first decision was made (from two readings).
    decided: AtomicBool,
    /// Whether the machine's load could not be read (then it never polls).
    unreadable: AtomicBool,
    last: Mutex<Option<(Instant, Ticks)>>,
}

impl Default for SpinPolicy {
    fn default() -> Self {
        SpinPolicy::new()
    }
}

impl SpinPolicy {
    /// A policy that polls until its first reading of the machine's load
    /// (40 ms) says otherwise.
    pub const fn new() -> SpinPolicy {
        SpinPolicy {
            allowed: AtomicBool::new(true),
            decided: AtomicBool::new(false),
            unreadable: AtomicBool::new(false),
            last: Mutex::new(None),
        }
    }

    /// Whether to poll now, reading the load again when it is stale.
    fn polls(&self) -> bool {
        if self.unreadable.load(Ordering::Relaxed) {
            return false;
        }
        if let Ok(mut last) = self.last.try_lock() {
            let refresh = if self.decided.load(Ordering::Relaxed) {
                REFRESH
            } else {
                FIRST_REFRESH
            };
            let stale = last.is_none_or(|(at, _)| at.elapsed() >= refresh);
            if stale {
                let now = read_ticks();
                let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
                let allowed = match (*last, now) {
                    (Some((_, before)), Some(now)) => {
                        self.decided.store(true, Ordering::Relaxed);
                        core_to_spare(before, now, cpus)
                    }
                    // The first reading: keep polling until the second.
                    (None, Some(_)) => cpus >= 2,
                    _ => false,
                };
                self.allowed.store(allowed, Ordering::Relaxed);
                // Where the load cannot be read (not Linux), stop trying.
                self.unreadable.store(now.is_none(), Ordering::Relaxed);
                *last = now.map(|ticks| (Instant::now(), ticks));
            }
        }
        self.allowed.load(Ordering::Relaxed)
    }

    /// Waits for a value: `ready` looks without blocking, `sleep` blocks
    /// until the value comes. Polls `ready` for a short while first when a
    /// core is to spare.
    pub fn wait<T>(&self, mut ready: impl FnMut() -> Option<T>, sleep: impl FnOnce() -> T) -> T {
        if let Some(value) = ready() {
            return value;
        }
        if self.polls() {
            let until = Instant::now() + WINDOW;
            while Instant::now() < until {
                std::thread::yield_now();
                if let Some(value) = ready() {
                    return value;
                }
            }
        }
        sleep()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticks(total: u64, idle: u64, own: u64) -> Ticks {
        Ticks { total, idle, own }
    }

    #[test]
    fn a_core_is_to_spare_only_when_others_leave_half_a_core_idle() {
        let start = ticks(0, 0, 0);
        // 2 CPUs over 100 ticks each: 200 in all.
        let others_use =
            |busy_others: u64| core_to_spare(start, ticks(200, 190 - busy_others, 10), 2);
        assert!(others_use(70));
        assert!(others_use(140));
        assert!(others_use(150));
        assert!(!others_use(160));
        assert!(
            !core_to_spare(start, ticks(200, 200, 0), 1),
            "one CPU: never"
        );
        assert!(!core_to_spare(start, start, 2), "no time passed");
    }

    #[test]
    fn this_machine_can_be_read() {
        if std::path::Path::new("/proc/stat").exists() {
            let t = read_ticks().expect("readable /proc/stat and /proc/self/stat");
            assert!(t.total >= t.idle);
        }
    }

    #[test]
    fn a_ready_value_is_taken_at_once_and_a_late_one_by_sleeping() {
        let policy = SpinPolicy::new();
        assert_eq!(policy.wait(|| Some(1), || 2), 1);
        assert_eq!(policy.wait(|| None, || 2), 2);
        let mut looks = 0;
        let value = policy.wait(
            || {
                looks += 1;
                (looks == 3).then_some(3)
            },
            || 4,
        );
        assert!(value == 3 || value == 4);
    }
}
