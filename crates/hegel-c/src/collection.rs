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
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Opaque to C: `hegel_collection_t`.
pub enum hegel_collection_t {}
/// Opaque to C: `hegel_repeat_t`.
pub enum hegel_repeat_t {}

/// A collection's sizing state and the test case it belongs to. A vector
/// makes one and asks it once per element, so collections live in place in
/// [`COLLECTIONS`]: no allocation per collection, and finding one is a
/// bounds check and a load.
#[derive(Default)]
pub struct CollectionHandle {
    /// `None` while the slot is vacant.
    sizing: Mutex<Option<Collection>>,
    /// The id of its test case ([`crate::test_case::Family::id`]).
    family: AtomicU64,
}

impl Reusable for CollectionHandle {
    fn reset(&self) {
        *self.sizing.lock().unwrap_or_else(|e| e.into_inner()) = None;
        self.family.store(0, Ordering::Relaxed);
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

/// The collection behind a handle, refused unless it was made in `tc`'s
/// test case.
#[inline(always)]
fn collection_of(
    tc: &TestCaseHandle,
    collection: *const hegel_collection_t,
) -> AbiResult<&'static CollectionHandle> {
    let found = COLLECTIONS.find(collection, COLLECTION_KIND, COLLECTION_NAME)?;
    if found.family.load(Ordering::Relaxed) != tc.family.id {
        return Err(AbiError::InvalidHandle(
            "the collection belongs to another test case".into(),
        ));
    }
    Ok(found)
}

/// A collection freed while this call held it (another thread's free).
#[cold]
fn vacant() -> AbiError {
    AbiError::InvalidHandle("the collection was freed while in use".into())
}

/// The sizing state of `collection` (found as `found`), locked for this
/// call; refused when the handle was freed since it was found.
fn sizing_of<'a>(
    collection: *const hegel_collection_t,
    found: &'a CollectionHandle,
) -> AbiResult<MutexGuard<'a, Option<Collection>>> {
    let sizing = lock(&found.sizing, COLLECTION_NAME)?;
    // Under the lock a reuse's reset takes: a free (and reuse) of the slot
    // since the lookup is seen, and none can happen until the call is done.
    if sizing.is_none() || !COLLECTIONS.is_live(collection as usize, COLLECTION_KIND) {
        return Err(vacant());
    }
    Ok(sizing)
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
            tc.draw(|_| Ok(()))?;
            let handle = COLLECTIONS
                .insert(COLLECTION_KIND, |collection| {
                    *collection.sizing.lock().unwrap_or_else(|e| e.into_inner()) =
                        Some(Collection::new(max.0, max.1));
                    collection.family.store(tc.family.id, Ordering::Relaxed);
                })
                .ok_or_else(|| AbiError::Internal("too many live collection handles".into()))?;
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
            let found = collection_of(tc, collection)?;
            require(out_more, "out_more")?;
            let mut sizing = sizing_of(collection, found)?;
            let sizing = sizing.as_mut().ok_or_else(vacant)?;
            let more = tc.draw(|data| Ok(sizing.more(data)?))?;
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
            let found = collection_of(tc, collection)?;
            // SAFETY: the caller's optional view (validated, otherwise unused).
            unsafe { text::optional_text(why, "why")? };
            let mut sizing = sizing_of(collection, found)?;
            let sizing = sizing.as_mut().ok_or_else(vacant)?;
            tc.draw(|data| Ok(sizing.reject(data)?))
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

    /// A collection handle of family 42 wanting exactly three elements.
    fn three() -> usize {
        COLLECTIONS
            .insert(COLLECTION_KIND, |c| {
                *c.sizing.lock().expect("unpoisoned") = Some(Collection::new(3, Some(3)));
                c.family.store(42, Ordering::Relaxed);
            })
            .expect("inserts")
    }

    #[test]
    fn a_collection_freed_and_reused_while_a_call_holds_it_is_refused() {
        let mut reused = 0;
        for _ in 0..200 {
            let old = three();
            // A call found it; another thread frees it and makes a new
            // collection of the same test case, in the same slot.
            let found = COLLECTIONS.get(old, COLLECTION_KIND).expect("live");
            assert!(COLLECTIONS.free(old, COLLECTION_KIND));
            let new = three();
            if new & 0xFF_FFFF == old & 0xFF_FFFF {
                reused += 1;
                let old = old as *const hegel_collection_t;
                assert!(
                    matches!(sizing_of(old, found), Err(AbiError::InvalidHandle(_))),
                    "the call went on with the new collection's sizing"
                );
                assert!(sizing_of(new as *const hegel_collection_t, found).is_ok());
            }
            assert!(COLLECTIONS.free(new, COLLECTION_KIND));
        }
        assert!(reused >= 2, "the slot was reused in {reused} of 200 rounds");
    }
}
