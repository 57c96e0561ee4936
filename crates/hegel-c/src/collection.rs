//! Engine-sized loops: collections (`hegel_new_collection`) and repeat
//! loops (`hegel_new_repeat`). Both are the engine's [`Collection`]: a
//! sequence of "one more?" choices, so a shorter loop is a simpler test case
//! and the shrinker deletes elements or iterations by deleting choices.

use crate::abi::*;
use crate::context::{guard, hegel_context_t, require, write};
use crate::error::{AbiError, AbiResult};
use crate::generate::size_bounds;
use crate::handles::{self, Reusable, Slots, handled};
use crate::test_case::{TestCaseHandle, handle, hegel_test_case_t, with_handle};
use crate::text;
use geist_engine::choice::IntegerConstraints;
use geist_engine::data::Collection;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Opaque to C: `hegel_collection_t`.
pub enum hegel_collection_t {}
/// Opaque to C: `hegel_repeat_t`.
pub enum hegel_repeat_t {}

/// Where a collection handle's sizing state is: its test case and its
/// place among that test case's collections. A vector makes one and asks it
/// once per element, so handles live in place in [`COLLECTIONS`] (no
/// allocation per collection, and finding one is a bounds check and a few
/// loads), and the sizing state itself in the test case's family
/// ([`Sizing`]), under the lock every draw takes anyway: a call on a
/// collection takes no lock of its own.
#[derive(Default)]
pub struct CollectionHandle {
    /// The id of its test case ([`crate::test_case::Family::id`]).
    family: AtomicU64,
    /// Its index among the family's collections.
    index: AtomicUsize,
}

impl Reusable for CollectionHandle {
    fn reset(&self) {
        self.family.store(0, Ordering::Relaxed);
        self.index.store(usize::MAX, Ordering::Relaxed);
    }
}

/// A collection's sizing state, kept by its test case's family (guarded by
/// the family's lock), with the handle it belongs to: an entry whose handle
/// was freed is dropped when a new collection of the same test case is made
/// and it is the newest (collections are mostly freed newest first), or
/// else with the test case.
pub struct Sizing {
    handle: usize,
    sizing: Collection,
}

/// A test case's collections' sizing states, by index. Most test cases
/// that make collections make one, or one at a time: the vector's buffer
/// goes back to its thread when the test case is dropped, and the next test
/// case's first collection takes it (no allocation per test case; test
/// cases without collections neither pay nor grow for it).
#[derive(Default)]
pub struct Collections(Vec<Sizing>);

/// The largest buffer kept for reuse ([`SPARE`]), in entries.
const SPARE_KEPT: usize = 64;

std::thread_local! {
    /// An empty buffer of the collections of a test case dropped on this
    /// thread, for the next.
    static SPARE: std::cell::Cell<Vec<Sizing>> = const { std::cell::Cell::new(Vec::new()) };
}

impl Collections {
    fn get_mut(&mut self, index: usize) -> Option<&mut Sizing> {
        self.0.get_mut(index)
    }

    fn last(&self) -> Option<&Sizing> {
        self.0.last()
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn pop(&mut self) {
        self.0.pop();
    }

    fn push(&mut self, sizing: Sizing) {
        if self.0.capacity() == 0 {
            self.0 = SPARE.try_with(std::cell::Cell::take).unwrap_or_default();
        }
        self.0.push(sizing);
    }
}

impl Drop for Collections {
    #[inline(always)]
    fn drop(&mut self) {
        // Test cases without collections: nothing to give back.
        if self.0.capacity() != 0 {
            self.give_back();
        }
    }
}

impl Collections {
    /// Gives the buffer back to this thread, emptied, for the next test case.
    #[inline(never)]
    fn give_back(&mut self) {
        if self.0.capacity() > SPARE_KEPT {
            return;
        }
        self.0.clear();
        let buffer = std::mem::take(&mut self.0);
        // Whatever the thread held already is dropped here (a thread
        // ending drops the buffer with it).
        let _ = SPARE.try_with(|spare| drop(spare.replace(buffer)));
    }
}

/// The kind tag of collection handles.
const COLLECTION_KIND: u8 = 7;
const COLLECTION_NAME: &str = "collection";

/// Every collection handle.
static COLLECTIONS: Slots<CollectionHandle> = Slots::new();

/// A repeat loop's sizing state.
pub struct RepeatHandle {
    sizing: Mutex<Collection>,
}
handled!(RepeatHandle, 8, "repeat");

/// The largest minimum number of iterations a repeat loop draws: the loop
/// has no maximum, the engine decides iteration by iteration.
const REPEAT_MAX_MIN_ITERATIONS: i128 = 1 << 40;

fn lock<'a, T>(sizing: &'a Mutex<T>, what: &str) -> AbiResult<MutexGuard<'a, T>> {
    match sizing.try_lock() {
        Ok(guard) => Ok(guard),
        Err(std::sync::TryLockError::Poisoned(p)) => Ok(p.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => Err(AbiError::ConcurrentUse(format!(
            "the {what} is in use on another thread"
        ))),
    }
}

/// The index among `tc`'s collections of the collection behind a handle,
/// refused unless it was made in `tc`'s test case.
#[inline(always)]
fn collection_of(tc: &TestCaseHandle, collection: *const hegel_collection_t) -> AbiResult<usize> {
    // Read without checking the handle again after: a free (and reuse of
    // the slot) meanwhile is seen under the family's lock ([`sizing_of`]).
    let found = COLLECTIONS.find(collection, COLLECTION_KIND, COLLECTION_NAME)?;
    let (family, index) = (
        found.family.load(Ordering::Relaxed),
        found.index.load(Ordering::Relaxed),
    );
    if family != tc.family.id {
        return Err(AbiError::InvalidHandle(
            "the collection belongs to another test case".into(),
        ));
    }
    Ok(index)
}

/// A collection freed while this call held it (another thread's free).
#[cold]
fn vacant() -> AbiError {
    AbiError::InvalidHandle("the collection was freed while in use".into())
}

/// The sizing state of `collection` (found at `index`) among its family's
/// collections, taken under the family's lock; refused when the handle was
/// freed since it was found (its entry then names another handle, or none,
/// or its handle is no longer live).
fn sizing_of(
    collections: &mut Collections,
    collection: *const hegel_collection_t,
    index: usize,
) -> AbiResult<&mut Collection> {
    match collections.get_mut(index) {
        Some(entry)
            if entry.handle == collection as usize
                && COLLECTIONS.is_live(entry.handle, COLLECTION_KIND) =>
        {
            Ok(&mut entry.sizing)
        }
        _ => Err(vacant()),
    }
}

/// Starts a collection.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_new_collection(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    min_size: u64,
    max_size: u64,
    out_collection: *mut *mut hegel_collection_t,
) -> hegel_result_t {
    guard(ctx, || {
        with_handle(tc, |tc| {
            require(out_collection, "out_collection")?;
            let max = if max_size == u64::MAX {
                let min = usize::try_from(min_size)
                    .map_err(|_| AbiError::arg(format!("min_size {min_size} is too large")))?;
                (min, None)
            } else {
                let (min, max) = size_bounds(min_size, max_size)?;
                (min, Some(max))
            };
            let handle = tc.draw_with_collections(|collections, _| {
                // Entries of freed collections, newest first.
                while collections
                    .last()
                    .is_some_and(|e| !COLLECTIONS.is_live(e.handle, COLLECTION_KIND))
                {
                    collections.pop();
                }
                let index = collections.len();
                let handle = COLLECTIONS
                    .insert(COLLECTION_KIND, |collection| {
                        collection.family.store(tc.family.id, Ordering::Relaxed);
                        collection.index.store(index, Ordering::Relaxed);
                    })
                    .ok_or_else(|| AbiError::too_many_handles("collection"))?;
                collections.push(Sizing {
                    handle,
                    sizing: Collection::new(max.0, max.1),
                });
                Ok(handle)
            })?;
            write(
                out_collection,
                handle as *mut hegel_collection_t,
                "out_collection",
            )
        })
    })
}

/// Whether the collection wants another element.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_collection_more(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    collection: *mut hegel_collection_t,
    out_more: *mut bool,
) -> hegel_result_t {
    guard(ctx, || {
        with_handle(tc, |tc| {
            let index = collection_of(tc, collection)?;
            require(out_more, "out_more")?;
            let more = tc.draw_with_collections(|collections, data| {
                Ok(sizing_of(collections, collection, index)?.more(data)?)
            })?;
            write(out_more, more, "out_more")
        })
    })
}

/// The last element was not kept.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_collection_reject(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    collection: *mut hegel_collection_t,
    why: *const hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        with_handle(tc, |tc| {
            let index = collection_of(tc, collection)?;
            // SAFETY: the caller's optional view (validated, otherwise unused).
            unsafe { text::optional_text(why, "why")? };
            tc.draw_with_collections(|collections, data| {
                Ok(sizing_of(collections, collection, index)?.reject(data)?)
            })
        })
    })
}

/// Frees a collection; NULL is a no-op.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_collection_free(
    ctx: *mut hegel_context_t,
    collection: *mut hegel_collection_t,
) -> hegel_result_t {
    guard(ctx, || {
        COLLECTIONS.release(collection, COLLECTION_KIND, COLLECTION_NAME)
    })
}

/// Starts a repeat loop: draws its minimum number of iterations.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_new_repeat(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    out_repeat: *mut *mut hegel_repeat_t,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        require(out_repeat, "out_repeat")?;
        let c = IntegerConstraints::bounded(0, REPEAT_MAX_MIN_ITERATIONS);
        let min = tc.draw(|data| Ok(data.draw_integer(c)?))?;
        let sizing = Collection::new(min as usize, None);
        let handle = handles::insert(Arc::new(RepeatHandle {
            sizing: Mutex::new(sizing),
        }))?;
        write(out_repeat, handle, "out_repeat")
    })
}

/// Whether the loop wants another iteration.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_repeat_more(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    repeat: *mut hegel_repeat_t,
    out_more: *mut bool,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        let repeat = handles::get::<RepeatHandle, _>(repeat)?;
        require(out_more, "out_more")?;
        let mut sizing = lock(&repeat.sizing, "repeat loop")?;
        let more = tc.draw(|data| Ok(sizing.more(data)?))?;
        write(out_more, more, "out_more")
    })
}

/// The iteration just run failed: marks it in the choices, ending the loop.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_repeat_failed(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    repeat: *mut hegel_repeat_t,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = handle(tc)?;
        let repeat = handles::get::<RepeatHandle, _>(repeat)?;
        let _sizing = lock(&repeat.sizing, "repeat loop")?;
        tc.draw(|data| Ok(data.draw_boolean(0.5).map(drop)?))
    })
}

/// Frees a repeat loop; NULL is a no-op.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_repeat_free(
    ctx: *mut hegel_context_t,
    repeat: *mut hegel_repeat_t,
) -> hegel_result_t {
    guard(ctx, || handles::free::<RepeatHandle, _>(repeat).map(drop))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A collection handle of family 42, at `index` among its collections.
    fn at(index: usize) -> usize {
        COLLECTIONS
            .insert(COLLECTION_KIND, |c| {
                c.family.store(42, Ordering::Relaxed);
                c.index.store(index, Ordering::Relaxed);
            })
            .expect("inserts")
    }

    fn entry(handle: usize) -> Sizing {
        Sizing {
            handle,
            sizing: Collection::new(3, Some(3)),
        }
    }

    #[test]
    fn a_collection_freed_and_reused_while_a_call_holds_it_is_refused() {
        let mut reused = 0;
        for _ in 0..200 {
            let old = at(0);
            let mut collections = Collections::default();
            collections.push(entry(old));
            let old_ptr = old as *const hegel_collection_t;
            assert!(sizing_of(&mut collections, old_ptr, 0).is_ok());
            // A call found it (index 0); another thread frees it, and the
            // test case's next collection takes its place, maybe its slot.
            assert!(COLLECTIONS.free(old, COLLECTION_KIND));
            assert!(
                matches!(
                    sizing_of(&mut collections, old_ptr, 0),
                    Err(AbiError::InvalidHandle(_))
                ),
                "the call went on with a freed collection"
            );
            collections.pop();
            let new = at(0);
            collections.push(entry(new));
            if new & 0xFF_FFFF == old & 0xFF_FFFF {
                reused += 1;
            }
            assert!(
                matches!(
                    sizing_of(&mut collections, old_ptr, 0),
                    Err(AbiError::InvalidHandle(_))
                ),
                "the call went on with the new collection's sizing"
            );
            assert!(sizing_of(&mut collections, new as *const hegel_collection_t, 0).is_ok());
            assert!(sizing_of(&mut collections, new as *const hegel_collection_t, 1).is_err());
            assert!(COLLECTIONS.free(new, COLLECTION_KIND));
        }
        assert!(reused >= 2, "the slot was reused in {reused} of 200 rounds");
    }
}
