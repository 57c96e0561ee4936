//! Engine-sized loops: collections (`hegel_new_collection`) and repeat
//! loops (`hegel_new_repeat`). Both are the engine's [`Collection`]: a
//! sequence of "one more?" choices, so a shorter loop is a simpler test case
//! and the shrinker deletes elements or iterations by deleting choices.

use crate::abi::*;
use crate::context::{guard, hegel_context_t, require, write};
use crate::error::{AbiError, AbiResult};
use crate::generate::size_bounds;
use crate::handles::{self, handled};
use crate::test_case::{handle, hegel_test_case_t, with_handle};
use crate::text;
use geist_engine::choice::IntegerConstraints;
use geist_engine::data::Collection;
use std::sync::{Arc, Mutex, MutexGuard};

/// Opaque to C: `hegel_collection_t`.
pub enum hegel_collection_t {}
/// Opaque to C: `hegel_repeat_t`.
pub enum hegel_repeat_t {}

/// A collection's sizing state.
pub struct CollectionHandle {
    sizing: Mutex<Collection>,
}
handled!(CollectionHandle, 7, "collection");

/// A repeat loop's sizing state.
pub struct RepeatHandle {
    sizing: Mutex<Collection>,
}
handled!(RepeatHandle, 8, "repeat");

/// The largest minimum number of iterations a repeat loop draws: the loop
/// has no maximum, the engine decides iteration by iteration.
const REPEAT_MAX_MIN_ITERATIONS: i128 = 1 << 40;

fn lock<'a>(sizing: &'a Mutex<Collection>, what: &str) -> AbiResult<MutexGuard<'a, Collection>> {
    match sizing.try_lock() {
        Ok(guard) => Ok(guard),
        Err(std::sync::TryLockError::Poisoned(p)) => Ok(p.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => Err(AbiError::ConcurrentUse(format!(
            "the {what} is in use on another thread"
        ))),
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
            tc.draw(|_| Ok(()))?;
            let sizing = Collection::new(max.0, max.1);
            let handle = handles::insert(Arc::new(CollectionHandle {
                sizing: Mutex::new(sizing),
            }))?;
            write(out_collection, handle, "out_collection")
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
            handles::with::<CollectionHandle, _, _>(collection, |collection| {
                require(out_more, "out_more")?;
                let mut sizing = lock(&collection.sizing, "collection")?;
                let more = tc.draw(|data| Ok(sizing.more(data)?))?;
                write(out_more, more, "out_more")
            })?
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
            let collection = handles::get::<CollectionHandle, _>(collection)?;
            // SAFETY: the caller's optional view (validated, otherwise unused).
            unsafe { text::optional_text(why, "why")? };
            let mut sizing = lock(&collection.sizing, "collection")?;
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
        handles::free::<CollectionHandle, _>(collection).map(drop)
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
