//! The slot table's ordering contract, with plain (non-atomic) data, so
//! that ThreadSanitizer (`scripts/sanitize-hegel-c.sh tsan`) checks it:
//! what `init` writes before a hand-out is seen by any thread that finds
//! the handle live (the generation word's Release store and Acquire load),
//! and what a thread read of an object before freeing its handle is never
//! overwritten under it by a reuse's reset (the free, then the vacant list's
//! lock, come between). The crate's own objects hold only atomics and
//! mutexes; these objects do not, so an ordering too weak in the table is a
//! data race TSan reports here, not just a rare wrong value.
//!
//! Without TSan these are ordinary tests of the values read.

use hegel_c::handles::{Reusable, Slots};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Words written without atomics: by `init` before a hand-out and by
/// `reset` at a reuse, read by whoever holds a live handle.
#[derive(Default)]
struct Plain(UnsafeCell<[u64; 4]>);

// SAFETY: the words are written only by `Slots::insert` (reset and init,
// before the handle is live, on the inserting thread) and read only through
// a live handle by the thread that frees it (or reads it before a free by
// the same thread); the table orders the hand-out before the reads and the
// free before the next reset. That ordering is what these tests check.
unsafe impl Sync for Plain {}

impl Reusable for Plain {
    fn reset(&self) {
        // SAFETY: called by `Slots::insert` on a vacant slot: no live handle
        // names it, and the free that vacated it came before (see above).
        unsafe { *self.0.get() = [0; 4] };
    }
}

const KIND: u8 = 250;
const ROUNDS: u64 = if cfg!(miri) { 200 } else { 20_000 };

fn set(n: u64) -> impl FnOnce(&Plain) {
    // SAFETY: `init` runs on the inserting thread before the handle is live.
    move |p: &Plain| unsafe { *p.0.get() = [n, n + 1, n + 2, n + 3] }
}

#[test]
fn init_is_seen_by_the_thread_that_finds_the_handle_and_frees_it() {
    static PLAIN: Slots<Plain> = Slots::new();
    // The handle passes between the threads with no ordering of its own:
    // only the table's generation word orders `init` before the read.
    let mailbox = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            let mut seen = 0u64;
            while seen < ROUNDS {
                let raw = mailbox.swap(0, Ordering::Relaxed);
                if raw == 0 {
                    std::hint::spin_loop();
                    continue;
                }
                // The mailbox orders nothing, so the memory model lets this
                // thread see the handle before the Release store that made it
                // live (Miri's weak memory emulation does): until then the
                // table refuses it, rightly. What is checked is that once it
                // is found live, `init`'s writes are seen.
                let mut lookups = 0u32;
                let object = loop {
                    if let Some(object) = PLAIN.get(raw, KIND) {
                        break object;
                    }
                    lookups += 1;
                    assert!(lookups < 1_000_000, "handed over live, never found live");
                    std::hint::spin_loop();
                };
                // SAFETY: this thread holds the only copy of a live handle;
                // the slot is reset only after the free below.
                let words = unsafe { *object.0.get() };
                let n = words[0];
                assert_eq!(words, [n, n + 1, n + 2, n + 3], "a whole init");
                assert!(PLAIN.free(raw, KIND), "frees");
                seen += 1;
            }
            seen
        });
        'rounds: for n in 1..=ROUNDS {
            let raw = PLAIN.insert(KIND, set(n)).expect("inserts");
            // Waits for the reader to take the last one (at most one in
            // flight, so the slot is reused at once), unless it failed.
            while mailbox
                .compare_exchange(0, raw, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
            {
                if reader.is_finished() {
                    break 'rounds;
                }
                std::hint::spin_loop();
            }
        }
        assert_eq!(reader.join().expect("the reader saw whole objects"), ROUNDS);
    });
}
