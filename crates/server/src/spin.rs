//! Whether to poll briefly for the client's next packet instead of sleeping.
//!
//! A Hegel client answers within microseconds. On an idle machine waking a
//! sleeping thread costs more than that, and polling for a few tens of
//! microseconds before sleeping more than doubles throughput (measured: 19k
//! instead of 7.4k test cases per second). On a busy machine the opposite
//! holds: the polling thread takes a core the client needs, so the answer
//! comes later, and throughput drops several-fold (measured with two cores
//! shared with other work: 3k instead of 17k). Neither choice is right for
//! every machine, so the policy measures: it alternates the two while
//! sampling how long waits take, uses the faster one for a while, and
//! samples again, since the machine's load changes.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long one poll lasts at most.
const WINDOW: Duration = Duration::from_micros(50);
/// Waits sampled per way of waiting before choosing.
const SAMPLES: u32 = 32;
/// Waits that use the chosen way before sampling again.
const EXPLOIT: u32 = 4096;
/// Longer waits count as this long: a client busy in its own test, or idle
/// between runs, says nothing about how to wait.
const CAP: Duration = Duration::from_millis(1);

#[derive(Debug)]
enum Phase {
    /// Alternating the two ways, summing capped wait times.
    Sampling {
        polling: (Duration, u32),
        sleeping: (Duration, u32),
    },
    /// Using one way for this many more waits.
    Using { poll: bool, remaining: u32 },
}

/// The waiting record shared by the threads waiting on one input.
#[derive(Debug)]
pub struct SpinPolicy {
    phase: Mutex<Phase>,
}

impl Default for SpinPolicy {
    fn default() -> Self {
        SpinPolicy::new()
    }
}

impl SpinPolicy {
    /// A policy that starts by sampling both ways of waiting.
    pub const fn new() -> SpinPolicy {
        SpinPolicy {
            phase: Mutex::new(Phase::Sampling {
                polling: (Duration::ZERO, 0),
                sleeping: (Duration::ZERO, 0),
            }),
        }
    }

    /// Whether the next wait should poll before sleeping.
    fn next_polls(&self) -> bool {
        let mut phase = self.phase.lock().unwrap_or_else(|e| e.into_inner());
        match &mut *phase {
            Phase::Sampling { polling, sleeping } => polling.1 <= sleeping.1,
            Phase::Using { poll, remaining } => {
                let poll = *poll;
                *remaining = remaining.saturating_sub(1);
                if *remaining == 0 {
                    *phase = Phase::Sampling {
                        polling: (Duration::ZERO, 0),
                        sleeping: (Duration::ZERO, 0),
                    };
                }
                poll
            }
        }
    }

    fn record(&self, polled: bool, took: Duration) {
        let mut phase = self.phase.lock().unwrap_or_else(|e| e.into_inner());
        if let Phase::Sampling { polling, sleeping } = &mut *phase {
            let slot = if polled {
                &mut *polling
            } else {
                &mut *sleeping
            };
            slot.0 += took.min(CAP);
            slot.1 += 1;
            if polling.1 >= SAMPLES && sleeping.1 >= SAMPLES {
                let poll = polling.0 / polling.1 < sleeping.0 / sleeping.1;
                *phase = Phase::Using {
                    poll,
                    remaining: EXPLOIT,
                };
            }
        }
    }

    /// Waits for a value: `ready` looks without blocking, `sleep` blocks
    /// until the value comes. Polls `ready` for a short while first when
    /// that has been the faster way to wait.
    pub fn wait<T>(&self, mut ready: impl FnMut() -> Option<T>, sleep: impl FnOnce() -> T) -> T {
        if let Some(value) = ready() {
            return value;
        }
        let started = Instant::now();
        let poll = self.next_polls();
        if poll {
            let until = started + WINDOW;
            loop {
                std::hint::spin_loop();
                if let Some(value) = ready() {
                    self.record(true, started.elapsed());
                    return value;
                }
                if Instant::now() >= until {
                    break;
                }
            }
        }
        let value = sleep();
        self.record(poll, started.elapsed());
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(policy: &SpinPolicy) -> String {
        format!("{:?}", policy.phase.lock().unwrap())
    }

    #[test]
    fn a_ready_value_is_taken_at_once() {
        let policy = SpinPolicy::new();
        assert_eq!(policy.wait(|| Some(1), || 2), 1);
        assert!(phase(&policy).contains("Sampling"), "nothing sampled");
    }

    #[test]
    fn the_faster_way_is_chosen_then_sampled_again() {
        let policy = SpinPolicy::new();
        // Polling catches the value on its second look; sleeping takes 3 ms.
        for _ in 0..2 * SAMPLES {
            let mut looks = 0;
            policy.wait(
                || {
                    looks += 1;
                    (looks == 2).then_some(())
                },
                || std::thread::sleep(Duration::from_millis(3)),
            );
        }
        assert!(phase(&policy).contains("poll: true"), "{}", phase(&policy));
        for _ in 0..EXPLOIT {
            assert!(policy.next_polls());
        }
        assert!(phase(&policy).contains("Sampling"), "{}", phase(&policy));
    }

    #[test]
    fn sleeping_is_chosen_when_polling_never_catches_anything() {
        let policy = SpinPolicy::new();
        for _ in 0..2 * SAMPLES {
            policy.wait(|| None, || ());
        }
        assert!(phase(&policy).contains("poll: false"), "{}", phase(&policy));
    }
}
