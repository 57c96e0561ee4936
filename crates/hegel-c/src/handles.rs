//! Opaque handles that can be checked before they are used.
//!
//! The ABI hands the caller pointers to opaque objects. A careless caller may
//! pass one back after freeing it, pass a handle of another kind, or pass
//! garbage; none of that may become undefined behaviour. So a handle is never
//! a real pointer: it is a key into a concurrent slab (sharded-slab), with
//! the kind of object in its top byte and a generation counter in the key, and
//! every call looks the key up before touching anything. A freed or
//! foreign handle is simply not found, and the call returns
//! `HEGEL_E_INVALID_HANDLE`. Objects sit in the slab behind an `Arc`, so one
//! freed while another thread is still using it lives until that use ends.
//!
//! A frontend makes several calls per drawn value, each naming the same
//! handle, so each thread remembers the last [`REMEMBERED`] objects it
//! looked up of each kind: those handles again are found without the slab.
//! Every free of a handle moves a count of frees on, one of
//! [`FREE_BUCKETS`] per kind chosen by the handle, and a remembered object
//! counts only while its handle's count is the one it was looked up under,
//! so a freed handle is refused as before (a slot reused by the slab has a
//! new key, never the remembered one). A thread forgets what it remembered
//! of a handle when it frees it; another thread that remembered it drops
//! its reference at its next slab lookup of that kind, or when it is pushed
//! out by newer ones.
//!
//! Kinds whose objects are cheap to keep for ever and to reset for reuse
//! (contexts, collections, state machine handles) live in place instead, in
//! a [`Slots`] table: a handle is a slot index and a generation, a lookup
//! is a bounds check and one atomic load, with no thread-local state, no
//! reference count and no allocation per handle. A slot's memory is never
//! freed, so a handle freed while another thread still uses it names a
//! valid (vacant or reused) object, never freed memory, and a call checks
//! the handle again after reading it (see [`Slots::read`]). Test case
//! handles, made and freed at every step of a state machine, live in such
//! a table too, each slot holding its handle's object (an `Arc`) while the
//! handle is live and a count of the calls using it ([`Pinned`]).

use crate::error::AbiError;
use sharded_slab::{Config, Slab};
use std::cell::{RefCell, UnsafeCell};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::LocalKey;

/// The slabs' layout: the top byte of every key is ours, for the kind tag.
pub struct HandleConfig;

impl Config for HandleConfig {
    const RESERVED_BITS: usize = 8;
}

const KIND_SHIFT: u32 = usize::BITS - 8;
const KEY_MASK: usize = (1 << KIND_SHIFT) - 1;

/// An object the ABI hands out handles to.
pub trait Handled: Send + Sync + Sized + 'static {
    /// The kind's tag (distinct per kind, non-zero).
    const KIND: u8;
    /// The kind's name in error messages.
    const NAME: &'static str;
    /// The slab holding every live object of the kind.
    fn slab() -> &'static Slab<Arc<Self>, HandleConfig>;
    /// How many handles of the kind have been freed, by [`free_bucket`].
    fn frees() -> &'static [AtomicU64; FREE_BUCKETS];
    /// This thread's last looked-up object of the kind.
    fn remembered() -> &'static std::thread::LocalKey<RefCell<Remembered<Self>>>;
}

/// How many counts of frees each kind keeps (see the module docs).
pub const FREE_BUCKETS: usize = 64;

/// Which of its kind's counts of frees a handle moves on when freed.
fn free_bucket(raw: usize) -> usize {
    // The key's generation bits change each time the slab reuses a slot, so
    // a handle made and freed over and over lands in varying buckets.
    (raw as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) as usize >> (usize::BITS - 6)
}

/// This handle's count of frees.
fn frees_of<T: Handled>(raw: usize) -> &'static AtomicU64 {
    &T::frees()[free_bucket(raw) % FREE_BUCKETS]
}

/// How many objects of each kind a thread remembers.
pub const REMEMBERED: usize = 4;

/// A remembered object: its handle, its count of frees when it was looked
/// up, and the object.
pub type Entry<T> = (usize, u64, Arc<T>);

/// A thread's last looked-up objects of one kind.
pub struct Remembered<T> {
    entries: [Option<Entry<T>>; REMEMBERED],
    /// The slot the next object goes to when none is free.
    next: usize,
}

impl<T: Handled> Remembered<T> {
    /// Remembers nothing.
    pub const fn new() -> RefCell<Remembered<T>> {
        RefCell::new(Remembered {
            entries: [const { None }; REMEMBERED],
            next: 0,
        })
    }

    /// The object remembered as `raw`'s, looked up under `frees`.
    #[inline(always)]
    fn find(&self, raw: usize, frees: u64) -> Option<&Arc<T>> {
        self.entries
            .iter()
            .flatten()
            .find(|(h, seen, _)| *h == raw && *seen == frees)
            .map(|(_, _, object)| object)
    }

    /// Remembers `object` as `raw`'s, looked up under `frees`, in place of
    /// an entry gone stale (its handle freed since), a free slot, or the
    /// oldest; returns what it no longer remembers, to be dropped outside
    /// the borrow (the last reference to a freed object may go with it).
    fn remember(
        &mut self,
        raw: usize,
        frees: u64,
        object: Arc<T>,
    ) -> [Option<Entry<T>>; REMEMBERED] {
        replace_remembered(
            &mut self.entries,
            &mut self.next,
            (raw, frees, object),
            |(h, seen, _)| *h == raw || frees_of::<T>(*h).load(Ordering::Acquire) != *seen,
        )
    }

    /// Forgets `raw`'s object; returns it.
    fn forget(&mut self, raw: usize) -> Option<Entry<T>> {
        self.entries
            .iter_mut()
            .find(|e| e.as_ref().is_some_and(|(h, _, _)| *h == raw))
            .and_then(Option::take)
    }
}

/// Declares a handled kind: its tag, its name and its slab.
macro_rules! handled {
    ($type:ty, $kind:expr, $name:expr) => {
        impl $crate::handles::Handled for $type {
            const KIND: u8 = $kind;
            const NAME: &'static str = $name;
            fn slab()
            -> &'static ::sharded_slab::Slab<::std::sync::Arc<Self>, $crate::handles::HandleConfig>
            {
                static SLAB: ::std::sync::LazyLock<
                    ::sharded_slab::Slab<::std::sync::Arc<$type>, $crate::handles::HandleConfig>,
                > = ::std::sync::LazyLock::new(|| {
                    ::sharded_slab::Slab::new_with_config::<$crate::handles::HandleConfig>()
                });
                &SLAB
            }
            fn frees() -> &'static [::std::sync::atomic::AtomicU64; $crate::handles::FREE_BUCKETS] {
                static FREES: [::std::sync::atomic::AtomicU64; $crate::handles::FREE_BUCKETS] =
                    [const { ::std::sync::atomic::AtomicU64::new(0) };
                        $crate::handles::FREE_BUCKETS];
                &FREES
            }
            fn remembered() -> &'static ::std::thread::LocalKey<
                ::std::cell::RefCell<$crate::handles::Remembered<Self>>,
            > {
                ::std::thread_local! {
                    static REMEMBERED: ::std::cell::RefCell<$crate::handles::Remembered<$type>> =
                        const { $crate::handles::Remembered::new() };
                }
                &REMEMBERED
            }
        }
    };
}
pub(crate) use handled;

/// Registers `object` and returns its handle.
pub fn insert<T: Handled, H>(object: Arc<T>) -> Result<*mut H, AbiError> {
    let key = T::slab()
        .insert(object)
        .ok_or_else(|| AbiError::too_many_handles(T::NAME))?;
    Ok(((usize::from(T::KIND) << KIND_SHIFT) | (key & KEY_MASK)) as *mut H)
}

fn key_of<T: Handled, H>(handle: *const H) -> Result<usize, AbiError> {
    if handle.is_null() {
        return Err(AbiError::InvalidHandle(format!(
            "the {} handle is NULL",
            T::NAME
        )));
    }
    let raw = handle as usize;
    if raw >> KIND_SHIFT != usize::from(T::KIND) {
        return Err(AbiError::InvalidHandle(format!(
            "{raw:#x} is not a {} handle",
            T::NAME
        )));
    }
    Ok(raw & KEY_MASK)
}

/// The object behind a live handle.
pub fn get<T: Handled, H>(handle: *const H) -> Result<Arc<T>, AbiError> {
    let raw = handle as usize;
    // Loaded before the slab is consulted: a free after this load makes the
    // remembered object stale at the next lookup.
    let frees = frees_of::<T>(raw).load(Ordering::Acquire);
    let hit = T::remembered().try_with(|remembered| {
        let remembered = remembered.try_borrow().ok()?;
        remembered.find(raw, frees).map(Arc::clone)
    });
    if let Ok(Some(object)) = hit {
        return Ok(object);
    }
    let key = key_of::<T, H>(handle)?;
    match T::slab().get(key) {
        Some(entry) => {
            let object = Arc::clone(&entry);
            drop(entry);
            // Replacing the remembered object may drop the last reference
            // to a freed one; that happens outside the borrow.
            // (Not while this thread is inside `with` for the kind: the
            // remembered object is borrowed then, and stays remembered.)
            let dropped = T::remembered()
                .try_with(|remembered| {
                    let mut remembered = remembered.try_borrow_mut().ok()?;
                    Some(remembered.remember(raw, frees, Arc::clone(&object)))
                })
                .ok()
                .flatten();
            drop(dropped);
            Ok(object)
        }
        None => Err(AbiError::InvalidHandle(format!(
            "the {} handle {:#x} was freed or never existed",
            T::NAME,
            handle as usize
        ))),
    }
}

/// Runs `f` on the object behind a live handle. When this thread remembers
/// the handle (the common case: the calls of a test case name the same few),
/// no reference count is touched: atomic operations are most of
/// what a lookup costs. That path is inlined into every caller (several
/// lookups make up an ABI call, each otherwise a call of its own); the slab
/// lookup is not.
#[inline(always)]
pub fn with<T: Handled, H, R>(handle: *const H, f: impl FnOnce(&T) -> R) -> Result<R, AbiError> {
    let raw = handle as usize;
    let frees = frees_of::<T>(raw).load(Ordering::Acquire);
    let mut f = Some(f);
    let hit = T::remembered().try_with(|remembered| {
        let remembered = remembered.try_borrow().ok()?;
        let object = remembered.find(raw, frees)?;
        f.take().map(|f| f(object))
    });
    if let Ok(Some(result)) = hit {
        return Ok(result);
    }
    with_looked_up(handle, f)
}

/// [`with`] for a handle this thread does not remember: from the slab.
#[cold]
#[inline(never)]
fn with_looked_up<T: Handled, H, R>(
    handle: *const H,
    f: Option<impl FnOnce(&T) -> R>,
) -> Result<R, AbiError> {
    let object = get::<T, H>(handle)?;
    match f {
        Some(f) => Ok(f(&object)),
        // `f` runs at most once, and only a hit takes it.
        None => Err(AbiError::Internal(format!(
            "the {} handle was looked up twice",
            T::NAME
        ))),
    }
}

/// Releases a handle; NULL is a no-op. The object is dropped once the last
/// use of it ends.
pub fn free<T: Handled, H>(handle: *mut H) -> Result<Option<Arc<T>>, AbiError> {
    if handle.is_null() {
        return Ok(None);
    }
    let key = key_of::<T, H>(handle)?;
    match T::slab().take(key) {
        Some(object) => {
            let raw = handle as usize;
            frees_of::<T>(raw).fetch_add(1, Ordering::Release);
            let forgotten = T::remembered()
                .try_with(|remembered| {
                    let mut remembered = remembered.try_borrow_mut().ok()?;
                    remembered.forget(raw)
                })
                .ok()
                .flatten();
            drop(forgotten);
            Ok(Some(object))
        }
        None => Err(AbiError::InvalidHandle(format!(
            "the {} handle {:#x} was already freed or never existed",
            T::NAME,
            handle as usize
        ))),
    }
}

/// A table of objects that live in place: a handle is a slot's index and
/// the generation it was handed out under, and a lookup is a bounds check
/// and one atomic load, with no thread-local state and no reference count.
///
/// For objects cheap to keep for ever and to reset for reuse (contexts): a
/// slot's memory is never freed, so a freed handle still points at a valid
/// object, and the generation is what refuses it. The object is reset (by
/// [`Reusable::reset`]) when its slot is handed out again, never while a
/// handle to it is live. A call racing with the free of the handle it uses
/// touches an object that is live, vacant or reused, never freed memory;
/// so that it never acts on a reuse, it reads through [`Slots::read`] or
/// checks [`Slots::is_live`] under a lock the reset takes.
pub struct Slots<T: 'static> {
    /// Segment `s` holds `SEGMENT_BASE << s` slots; made on first use.
    segments: [OnceLock<Box<[Slot<T>]>>; SEGMENTS],
    /// Vacant slots and the next index never used.
    vacant: Mutex<Vacant>,
}

/// The vacant slots of a [`Slots`] table.
struct Vacant {
    freed: Vec<u32>,
    next: u32,
}

/// Puts the vacant slot `index` (owned by the caller) back on `list`, its
/// table's vacant list.
fn give_back(list: &Mutex<Vacant>, index: u32) {
    list.lock()
        .unwrap_or_else(|e| e.into_inner())
        .freed
        .push(index);
}

/// One slot: its generation word (odd while the slot is live, even while
/// vacant; bumped by one at each hand-out and each free) and its object.
pub struct Slot<T> {
    generation: AtomicU32,
    value: T,
}

/// An object kept in a [`Slots`] table.
pub trait Reusable: Default + Send + Sync + 'static {
    /// Readies a vacant slot's object for a new handle. A call that uses
    /// an object across a lock (not just one read) takes the lock here too,
    /// and checks [`Slots::is_live`] under it.
    fn reset(&self);

    /// Called when a handle to the slot's object is freed, after the free
    /// is published (the handle no longer found) and before the slot can be
    /// handed out again: for an object that lets go of what it holds at
    /// once rather than at the slot's next reuse ([`Pinned`]).
    fn vacate(&self) {}
}

const SEGMENT_BASE: usize = 64;
const SEGMENTS: usize = 19;
/// Bits of a slot handle holding the slot's index (the top byte is the
/// kind tag, the 32 bits below it the generation).
const SLOT_INDEX_BITS: u32 = 24;
const SLOT_INDEX_MASK: usize = (1 << SLOT_INDEX_BITS) - 1;
// A slot handle is the kind (8 bits), the generation (32) and the index (24).
const _: () = assert!(KIND_SHIFT == 32 + SLOT_INDEX_BITS);

/// The segment and offset of slot `index`.
#[inline(always)]
fn segment_of(index: usize) -> (usize, usize) {
    let block = index / SEGMENT_BASE + 1;
    let segment = (usize::BITS - 1 - block.leading_zeros()) as usize;
    (segment, index - SEGMENT_BASE * ((1 << segment) - 1))
}

impl<T: Reusable> Slots<T> {
    /// An empty table.
    pub const fn new() -> Slots<T> {
        Slots {
            segments: [const { OnceLock::new() }; SEGMENTS],
            vacant: Mutex::new(Vacant {
                freed: Vec::new(),
                next: 0,
            }),
        }
    }

    #[inline(always)]
    fn slot(&self, index: usize) -> Option<&Slot<T>> {
        // The first segment's slots (most programs never need another) are
        // found without working out the segment.
        if index < SEGMENT_BASE {
            return self.segments[0].get()?.get(index);
        }
        let (segment, offset) = segment_of(index);
        self.segments.get(segment)?.get()?.get(offset)
    }

    /// Hands out a slot, its object reset and then set up by `init` (before
    /// the handle is live); returns its handle with the kind's tag `kind`,
    /// or `None` when every index is in use.
    pub fn insert(&self, kind: u8, init: impl FnOnce(&T)) -> Option<usize> {
        let index = self.claim_vacant()?;
        self.hand_out_at(index, kind, init)
    }

    /// Takes a vacant slot's index off the vacant list (or the next index
    /// never used, its segment made on first use): the caller owns the
    /// vacant slot until it hands it out; `None` when every index is in use.
    fn claim_vacant(&self) -> Option<usize> {
        let mut vacant = self.vacant.lock().unwrap_or_else(|e| e.into_inner());
        match vacant.freed.pop() {
            Some(index) => Some(index as usize),
            None => {
                let index = vacant.next as usize;
                if index > SLOT_INDEX_MASK {
                    return None;
                }
                let (segment, _) = segment_of(index);
                self.segments.get(segment)?.get_or_init(|| {
                    (0..SEGMENT_BASE << segment)
                        .map(|_| Slot {
                            generation: AtomicU32::new(0),
                            value: T::default(),
                        })
                        .collect()
                });
                vacant.next += 1;
                Some(index)
            }
        }
    }

    /// Puts a vacant slot's index (owned by the caller) back on the vacant list.
    fn push_vacant(&self, index: u32) {
        give_back(&self.vacant, index);
    }

    /// Hands out the vacant slot `index`, which the caller owns (claimed
    /// from the vacant list, or kept by the thread that freed it): its
    /// object reset and set up by `init` before the handle is live.
    #[inline(always)]
    fn hand_out_at(&self, index: usize, kind: u8, init: impl FnOnce(&T)) -> Option<usize> {
        Some(self.hand_out_slot(index, kind, init)?.0)
    }

    /// [`Slots::hand_out_at`], returning the slot too.
    #[inline(always)]
    fn hand_out_slot(
        &self,
        index: usize,
        kind: u8,
        init: impl FnOnce(&T),
    ) -> Option<(usize, &Slot<T>)> {
        let slot = self.slot(index)?;
        // The free that vacated the slot came before (through `vacant`, or
        // on this thread); this orders it before the reset's stores for
        // `Slots::read`.
        fence(Ordering::Release);
        slot.value.reset();
        init(&slot.value);
        // Vacant (even) to live (odd); published after the reset.
        let generation = slot.generation.load(Ordering::Relaxed).wrapping_add(1);
        slot.generation.store(generation, Ordering::Release);
        let raw =
            (usize::from(kind) << KIND_SHIFT) | ((generation as usize) << SLOT_INDEX_BITS) | index;
        Some((raw, slot))
    }

    /// The live object behind `raw` (a handle of kind `kind`), or `None`.
    #[inline(always)]
    pub fn get(&self, raw: usize, kind: u8) -> Option<&T> {
        if raw >> KIND_SHIFT != usize::from(kind) {
            return None;
        }
        let generation = ((raw & KEY_MASK) >> SLOT_INDEX_BITS) as u32;
        let slot = self.slot(raw & SLOT_INDEX_MASK)?;
        (generation & 1 == 1 && slot.generation.load(Ordering::Acquire) == generation)
            .then_some(&slot.value)
    }

    /// Whether `raw` (a handle of kind `kind`) is still live. A caller that
    /// found an object and then took a lock its reset also takes (see
    /// [`Reusable::reset`]) asks this under the lock: a free of the handle
    /// since the lookup, and any reuse of the slot, are seen, and no reuse
    /// can reset the object until the lock is released.
    #[inline(always)]
    pub fn is_live(&self, raw: usize, kind: u8) -> bool {
        self.get(raw, kind).is_some()
    }

    /// `f` on the object behind a live handle, refused (with the ABI's
    /// error) when the handle is not live before `f` runs or after: what
    /// `f` read is the handle's own object's, never that of a reuse of the
    /// slot (reset and set up by another thread meanwhile). `f` only reads
    /// (atomics); it may run on a reused object, whose result is dropped.
    #[inline(always)]
    pub fn read<H, R>(
        &self,
        handle: *const H,
        kind: u8,
        name: &str,
        f: impl FnOnce(&T) -> R,
    ) -> Result<R, AbiError> {
        let raw = handle as usize;
        let value = self.find(handle, kind, name)?;
        let result = f(value);
        // Pairs with the fence before a reuse's reset: if `f` saw any store
        // of a reuse, this load sees the free before it.
        fence(Ordering::Acquire);
        if self.is_live(raw, kind) {
            Ok(result)
        } else {
            Err(not_found(raw, kind, name))
        }
    }

    /// [`Slots::get`] with the ABI's error for a handle not found: NULL,
    /// of another kind, freed or never handed out. `name` names the kind.
    #[inline(always)]
    pub fn find<H>(&self, handle: *const H, kind: u8, name: &str) -> Result<&T, AbiError> {
        match self.get(handle as usize, kind) {
            Some(value) => Ok(value),
            None => Err(not_found(handle as usize, kind, name)),
        }
    }

    /// Frees the handle `handle` of kind `kind` (NULL is a no-op), with the
    /// ABI's error for a handle not live.
    pub fn release<H>(&self, handle: *const H, kind: u8, name: &str) -> Result<(), AbiError> {
        if handle.is_null() || self.free(handle as usize, kind) {
            Ok(())
        } else {
            Err(not_found(handle as usize, kind, name))
        }
    }

    /// Frees the slot behind `raw`; `false` when it is not live.
    pub fn free(&self, raw: usize, kind: u8) -> bool {
        match self.vacate(raw, kind) {
            Some(Some(index)) => {
                self.push_vacant(index);
                true
            }
            Some(None) => true,
            None => false,
        }
    }

    /// Frees the slot behind `raw` (`None` when it is not live) and returns
    /// its index, now vacant and owned by the caller, who puts it back on
    /// the vacant list or hands it out again; `Some(None)` for a slot
    /// retired as its generation wrapped.
    #[inline(always)]
    fn vacate(&self, raw: usize, kind: u8) -> Option<Option<u32>> {
        if raw >> KIND_SHIFT != usize::from(kind) {
            return None;
        }
        let generation = ((raw & KEY_MASK) >> SLOT_INDEX_BITS) as u32;
        let index = raw & SLOT_INDEX_MASK;
        let slot = self.slot(index)?;
        if generation & 1 == 0
            || slot
                .generation
                // SeqCst: a [`Pinned`] object's readers pin it and then
                // check the generation; this and the vacate's load of
                // their pins are the other half of that handshake.
                .compare_exchange(
                    generation,
                    generation.wrapping_add(1),
                    Ordering::SeqCst,
                    Ordering::Relaxed,
                )
                .is_err()
        {
            return None;
        }
        slot.value.vacate();
        // A slot whose generation wrapped to 0 is retired: reused, it would
        // hand out its first handles again, and a stale copy of one would
        // name the new object (one slot lost per 2^31 reuses).
        Some((generation != u32::MAX).then_some(index as u32))
    }
}

/// A shared object kept in a [`Slots`] table, for kinds made and freed so
/// often that a slab's insert and take, and an allocation per handle for
/// its bookkeeping, are much of what a call costs (a state machine makes
/// and frees a block handle at every step): the handle is a slot and a
/// generation, and the object an `Arc` the slot holds while the handle is
/// live, so a call that keeps the object (a printer attributed to a test
/// case) clones the `Arc` as before.
///
/// Each thread remembers the objects it used last, each with a reference
/// of its own ([`Recent`]): those are found with loads only, and are live
/// while their slot's generation is their handle's. Any other lookup pins
/// the slot (a count), then checks the handle's generation and takes a
/// reference; a free moves the generation on, then waits until no lookup
/// is pinned before it lets go of the object ([`Reusable::vacate`]). Both
/// sides are SeqCst, so either the lookup sees the free and touches
/// nothing, or the free sees the lookup and waits for it: a freed handle
/// is refused, and an object is never dropped under a lookup. A lookup
/// with a stale handle pins a reused slot for a moment and touches
/// nothing: the generation differs. A pin lasts while a reference is
/// taken, so the wait ends.
pub struct Pinned<T> {
    /// Readers inside a call with the object.
    pins: AtomicU32,
    /// The object while a handle to the slot is live.
    object: UnsafeCell<Option<Arc<T>>>,
}

impl<T> Default for Pinned<T> {
    fn default() -> Self {
        Pinned {
            pins: AtomicU32::new(0),
            object: UnsafeCell::new(None),
        }
    }
}

// SAFETY: the object is written only by the hand-out that owns the vacant
// slot (before the generation is published) and by the vacate of the one
// free that won the generation (once no reader is pinned); it is read only
// by pinned readers that found the generation live, which both exclude.
// What it holds is shared across threads as an `Arc<T>`, so `T` must be
// Send and Sync.
unsafe impl<T: Send + Sync> Sync for Pinned<T> {}

impl<T: Send + Sync + 'static> Reusable for Pinned<T> {
    fn reset(&self) {}

    #[inline(always)]
    fn vacate(&self) {
        // Pairs with the readers' Release unpins: what they did with the
        // object happens before it is dropped here.
        while self.pins.load(Ordering::SeqCst) != 0 {
            std::thread::yield_now();
        }
        // SAFETY: the generation has moved on (this free won it), so no
        // reader pins and reads from now on, and none is pinned: the object
        // is this thread's alone until the slot is handed out again, which
        // comes after this free pushes it on the vacant list.
        let object = unsafe { (*self.object.get()).take() };
        drop(object);
    }
}

/// Unpins a slot when a read ends (unwinding too).
struct Pin<'a>(&'a AtomicU32);

impl Drop for Pin<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Release);
    }
}

/// A remembered object of a [`Pinned`] table: its handle, its slot's
/// generation word and a reference of this thread's to it.
type Recalled<T> = (usize, &'static AtomicU32, Arc<T>);

/// A thread's last looked-up objects of a [`Pinned`] table, each with a
/// reference of its own: found again with no atomic read-modify-write (a
/// pin costs two, each dearer than the rest of a lookup), and still live
/// while the slot's generation is the handle's. The reference keeps the
/// object alive, not the handle: a handle freed meanwhile is refused.
pub struct Recent<T> {
    entries: [Option<Recalled<T>>; REMEMBERED],
    /// The entry the next object goes to when none is free or stale.
    next: usize,
    /// A slot this thread freed and keeps for its next hand-out (a state
    /// machine's frontend frees a block and makes another at every step),
    /// off its table's vacant list (named by that list) and owned by this
    /// thread: handed out again, or put back on the list when the thread
    /// ends or frees another.
    vacant: Option<(&'static Mutex<Vacant>, u32)>,
    /// The object of the last handle this thread freed when nothing else
    /// referred to it, if its kind reuses allocations
    /// ([`Slots::release_shared_keeping`]): the next hand-out may reuse it.
    spare: Option<Arc<T>>,
}

impl<T> Drop for Recent<T> {
    fn drop(&mut self) {
        if let Some((vacant, index)) = self.vacant.take() {
            give_back(vacant, index);
        }
    }
}

impl<T> Recent<T> {
    /// Remembers nothing.
    pub const fn new() -> RefCell<Recent<T>> {
        RefCell::new(Recent {
            entries: [const { None }; REMEMBERED],
            next: 0,
            vacant: None,
            spare: None,
        })
    }

    /// Remembers `entry`, a handle just handed out (so not remembered
    /// yet), in the first free place, or else in place of the oldest;
    /// returns what it no longer remembers, to be dropped outside the
    /// borrow. A free place is the common case (a handle freed on this
    /// thread left one); no other entry is looked at: a stale one is let go
    /// of when it is pushed out, here or by a lookup ([`Recent::remember`]).
    #[inline(always)]
    fn remember_new(&mut self, entry: Recalled<T>) -> Option<Recalled<T>> {
        let i = match self.entries.iter().position(Option::is_none) {
            Some(i) => i,
            None => {
                let i = self.next;
                self.next = (i + 1) % REMEMBERED;
                i
            }
        };
        self.entries[i].replace(entry)
    }

    /// The entry remembered for the handle `raw`.
    #[inline(always)]
    fn find(&self, raw: usize) -> Option<&Recalled<T>> {
        self.entries.iter().flatten().find(|(h, _, _)| *h == raw)
    }

    /// Remembers `entry` in place of one whose handle was freed, a free
    /// one, or the oldest; returns what it no longer remembers, to be
    /// dropped outside the borrow.
    fn remember(&mut self, entry: Recalled<T>) -> [Option<Recalled<T>>; REMEMBERED] {
        let raw = entry.0;
        replace_remembered(
            &mut self.entries,
            &mut self.next,
            entry,
            |(h, generation, _)| {
                *h == raw || generation.load(Ordering::Acquire) != generation_of(*h)
            },
        )
    }
}

/// Puts `entry` among a thread's remembered handles ([`Remembered`],
/// [`Recent`]): every entry `stale` names (the same handle, or one freed
/// since) is let go of, and `entry` takes the first free place, or else the
/// oldest (`next` goes round). Returns what is no longer remembered, to be
/// dropped outside the borrow (the last reference to a freed object may go
/// with it).
fn replace_remembered<E>(
    entries: &mut [Option<E>; REMEMBERED],
    next: &mut usize,
    entry: E,
    stale: impl Fn(&E) -> bool,
) -> [Option<E>; REMEMBERED] {
    let mut dropped = [const { None }; REMEMBERED];
    let mut free = None;
    for (i, slot) in entries.iter_mut().enumerate() {
        if slot.as_ref().is_some_and(&stale) {
            dropped[i] = slot.take();
        }
        if slot.is_none() && free.is_none() {
            free = Some(i);
        }
    }
    let i = free.unwrap_or_else(|| {
        let i = *next;
        *next = (i + 1) % REMEMBERED;
        dropped[i] = entries[i].take();
        i
    });
    entries[i] = Some(entry);
    dropped
}

/// The generation a slot handle was handed out under.
#[inline(always)]
fn generation_of(raw: usize) -> u32 {
    ((raw & KEY_MASK) >> SLOT_INDEX_BITS) as u32
}

impl<T: Send + Sync + 'static> Slots<Pinned<T>> {
    /// Hands `object` out under a new handle of kind `kind`, remembered on
    /// this thread (the caller uses a new handle at once, on the thread
    /// that made it); `None` when every index is in use.
    pub fn insert_shared(
        &'static self,
        recent: &'static LocalKey<RefCell<Recent<T>>>,
        kind: u8,
        object: Arc<T>,
    ) -> Option<usize> {
        self.insert_shared_with(recent, kind, |_| (object, ()))
    }

    /// [`Slots::insert_shared`] of the object `make` returns. `make` may
    /// take this thread's spare object (kept by
    /// [`Slots::release_shared_keeping`]) to reuse its allocation; what it
    /// returns beside the object (what the spare held) is dropped once this
    /// thread's memory is no longer borrowed. The thread's memory is
    /// borrowed once: the handle takes the slot this thread freed last,
    /// when it kept one, and the first free place among the remembered.
    #[inline(always)]
    pub fn insert_shared_with<D>(
        &'static self,
        recent: &'static LocalKey<RefCell<Recent<T>>>,
        kind: u8,
        make: impl FnOnce(&mut Option<Arc<T>>) -> (Arc<T>, D),
    ) -> Option<usize> {
        let mut make = Some(make);
        let done = recent.try_with(|cell| {
            let mut recent = cell.try_borrow_mut().ok()?;
            let (object, leftover) = (make.take()?)(&mut recent.spare);
            let kept = match recent.vacant {
                Some((list, index)) if std::ptr::eq(list, &self.vacant) => {
                    recent.vacant = None;
                    Some(index as usize)
                }
                _ => None,
            };
            let Some(index) = kept.or_else(|| self.claim_vacant()) else {
                return Some((None, (leftover, Some(object), None)));
            };
            let remembered = Arc::clone(&object);
            let Some((raw, slot)) = self.hand_out_object(index, kind, object) else {
                return Some((None, (leftover, Some(remembered), None)));
            };
            let pushed_out = recent.remember_new((raw, &slot.generation, remembered));
            Some((Some(raw), (leftover, None, pushed_out)))
        });
        match (done, make) {
            (Ok(Some((raw, dropped))), _) => {
                drop(dropped);
                raw
            }
            // This thread's memory is in use (a hand-out nested in a call's
            // `f`) or gone (the thread is ending): as a new thread would.
            (_, Some(make)) => {
                let (object, leftover) = make(&mut None);
                drop(leftover);
                let remembered = Arc::clone(&object);
                let (raw, slot) = self.hand_out_object(self.claim_vacant()?, kind, object)?;
                remember(recent, (raw, &slot.generation, remembered));
                Some(raw)
            }
            (_, None) => None,
        }
    }

    /// Hands out the vacant slot `index` (owned by the caller) holding `object`.
    #[inline(always)]
    fn hand_out_object(
        &self,
        index: usize,
        kind: u8,
        object: Arc<T>,
    ) -> Option<(usize, &Slot<Pinned<T>>)> {
        self.hand_out_slot(index, kind, |slot| {
            // SAFETY: the slot is vacant and this hand-out owns it (popped
            // under the vacant list's lock, never used, or kept by the
            // thread that freed it): no reader reads the object until the
            // generation published after this write says the handle is
            // live, and the vacate of its last free has already run.
            unsafe { *slot.object.get() = Some(object) }
        })
    }

    /// `f` on the object behind a live handle, with the ABI's error for a
    /// handle not found (NULL, another kind, freed, never handed out).
    /// `name` names the kind. A handle this thread remembers (the common
    /// case: a frontend's calls name the same few handles) is found with
    /// loads only; the others are looked up in their slot under a pin.
    #[inline(always)]
    pub fn with_shared<H, R>(
        &'static self,
        recent: &'static LocalKey<RefCell<Recent<T>>>,
        handle: *const H,
        kind: u8,
        name: &str,
        f: impl FnOnce(&Arc<T>) -> R,
    ) -> Result<R, AbiError> {
        self.try_with_shared(
            recent,
            handle,
            kind,
            name,
            #[inline(always)]
            |object| Ok(f(object)),
        )
    }

    /// [`Slots::with_shared`] for an `f` that may fail: its error and a
    /// handle not found come out as one result, with no result inside a
    /// result for every call to take apart (the per-draw path).
    #[inline(always)]
    pub fn try_with_shared<H, R>(
        &'static self,
        recent: &'static LocalKey<RefCell<Recent<T>>>,
        handle: *const H,
        kind: u8,
        name: &str,
        f: impl FnOnce(&Arc<T>) -> Result<R, AbiError>,
    ) -> Result<R, AbiError> {
        let raw = handle as usize;
        let mut f = Some(f);
        let hit = recent.try_with(|recent| {
            let recent = recent.try_borrow().ok()?;
            let (_, generation, object) = recent.find(raw)?;
            if generation.load(Ordering::Acquire) != generation_of(raw) {
                return None;
            }
            f.take().map(
                #[inline(always)]
                |f| f(object),
            )
        });
        if let Ok(Some(result)) = hit {
            return result;
        }
        let object = self.looked_up(recent, handle, kind, name)?;
        match f {
            Some(f) => f(&object),
            // `f` runs at most once, and only a hit takes it.
            None => Err(AbiError::Internal(format!(
                "the {name} handle was looked up twice"
            ))),
        }
    }

    /// The object behind a handle this thread does not remember, from its
    /// slot under a pin; remembered from now on.
    #[cold]
    #[inline(never)]
    fn looked_up<H>(
        &'static self,
        recent: &'static LocalKey<RefCell<Recent<T>>>,
        handle: *const H,
        kind: u8,
        name: &str,
    ) -> Result<Arc<T>, AbiError> {
        let raw = handle as usize;
        if raw >> KIND_SHIFT != usize::from(kind) {
            return Err(not_found(raw, kind, name));
        }
        let generation = generation_of(raw);
        let Some(slot) = self.slot(raw & SLOT_INDEX_MASK) else {
            return Err(not_found(raw, kind, name));
        };
        let object = {
            slot.value.pins.fetch_add(1, Ordering::SeqCst);
            let _pin = Pin(&slot.value.pins);
            if generation & 1 == 0 || slot.generation.load(Ordering::SeqCst) != generation {
                return Err(not_found(raw, kind, name));
            }
            // SAFETY: pinned, and the handle live after the pin: the object
            // was written before its generation was published (this load saw
            // that store), and no free can let go of it until this pin is
            // dropped.
            match unsafe { &*slot.value.object.get() } {
                Some(object) => Arc::clone(object),
                None => return Err(not_found(raw, kind, name)),
            }
        };
        remember(recent, (raw, &slot.generation, Arc::clone(&object)));
        Ok(object)
    }

    /// Frees the handle `handle` of kind `kind` (NULL is a no-op), with the
    /// ABI's error for a handle not live; this thread forgets it. The slot
    /// lets go of the object once no pinned lookup is using it; a thread
    /// that remembers it keeps its own reference until it next remembers
    /// another in its place.
    pub fn release_shared<H>(
        &'static self,
        recent: &'static LocalKey<RefCell<Recent<T>>>,
        handle: *const H,
        kind: u8,
        name: &str,
    ) -> Result<(), AbiError> {
        self.release_in(recent, handle, kind, name, false)
    }

    /// [`Slots::release_shared`], for kinds whose allocations are reused:
    /// this thread's reference to the object, when it remembered it and
    /// that was the last one, is kept as the thread's spare for the next
    /// hand-out ([`Slots::insert_shared_with`]), in place of the one kept
    /// before. The freed slot is kept by this thread for its next hand-out
    /// too.
    pub fn release_shared_keeping<H>(
        &'static self,
        recent: &'static LocalKey<RefCell<Recent<T>>>,
        handle: *const H,
        kind: u8,
        name: &str,
    ) -> Result<(), AbiError> {
        self.release_in(recent, handle, kind, name, true)
    }

    /// [`Slots::release_shared`]; `keep`: whether this thread keeps the
    /// object for reuse ([`Slots::release_shared_keeping`]).
    #[inline(always)]
    fn release_in<H>(
        &'static self,
        recent: &'static LocalKey<RefCell<Recent<T>>>,
        handle: *const H,
        kind: u8,
        name: &str,
        keep: bool,
    ) -> Result<(), AbiError> {
        let raw = handle as usize;
        if handle.is_null() {
            return Ok(());
        }
        let Some(index) = self.vacate(raw, kind) else {
            return Err(not_found(raw, kind, name));
        };
        let dropped = recent
            .try_with(|recent| {
                let mut recent = recent.try_borrow_mut().ok()?;
                let mut forgotten = recent
                    .entries
                    .iter_mut()
                    .find(|e| e.as_ref().is_some_and(|(h, _, _)| *h == raw))
                    .and_then(Option::take)
                    .map(|(_, _, object)| object);
                // The last reference (no other thread remembers it, and
                // the slot let go of it): kept.
                if keep
                    && forgotten
                        .as_mut()
                        .is_some_and(|o| Arc::get_mut(o).is_some())
                {
                    forgotten = std::mem::replace(&mut recent.spare, forgotten);
                }
                let vacant = match index {
                    Some(index) => recent.vacant.replace((&self.vacant, index)),
                    None => None,
                };
                Some((forgotten, vacant))
            })
            .ok()
            .flatten();
        match dropped {
            Some((forgotten, vacant)) => {
                drop(forgotten);
                // The slot kept before, of this table or another.
                if let Some((list, index)) = vacant {
                    give_back(list, index);
                }
            }
            // Not kept by this thread: back on the vacant list.
            None => {
                if let Some(index) = index {
                    self.push_vacant(index);
                }
            }
        }
        Ok(())
    }
}

/// Remembers `entry` on this thread, unless its memory is in use (a lookup
/// nested in another's `f`) or gone (the thread is ending).
fn remember<T>(recent: &'static LocalKey<RefCell<Recent<T>>>, entry: Recalled<T>) {
    let dropped = recent
        .try_with(|recent| {
            let mut recent = recent.try_borrow_mut().ok()?;
            Some(recent.remember(entry))
        })
        .ok()
        .flatten();
    drop(dropped);
}

/// The error of a slot handle not found.
#[cold]
#[inline(never)]
fn not_found(raw: usize, kind: u8, name: &str) -> AbiError {
    AbiError::InvalidHandle(if raw == 0 {
        format!("the {name} handle is NULL")
    } else if raw >> KIND_SHIFT != usize::from(kind) {
        format!("{raw:#x} is not a {name} handle")
    } else {
        format!("the {name} handle {raw:#x} was freed or never existed")
    })
}

impl<T: Reusable> Default for Slots<T> {
    fn default() -> Self {
        Slots::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frees `handle` on a thread of its own.
    fn free_on_another_thread(handle: *mut u8) {
        let raw = handle as usize;
        std::thread::spawn(move || free::<Thing, u8>(raw as *mut u8).map(drop))
            .join()
            .expect("joins")
            .expect("frees");
    }

    struct Thing(u32);
    handled!(Thing, 200, "thing");
    struct Other;
    handled!(Other, 201, "other");

    #[test]
    fn a_live_handle_finds_its_object() {
        let h: *mut u8 = insert(Arc::new(Thing(7))).expect("inserts");
        assert_eq!(get::<Thing, u8>(h).expect("live").0, 7);
        assert!(free::<Thing, u8>(h).expect("frees").is_some());
    }

    #[test]
    fn freed_null_and_foreign_handles_are_refused() {
        let h: *mut u8 = insert(Arc::new(Thing(1))).expect("inserts");
        free::<Thing, u8>(h).expect("frees");
        assert!(matches!(
            get::<Thing, u8>(h),
            Err(AbiError::InvalidHandle(_))
        ));
        assert!(matches!(
            free::<Thing, u8>(h),
            Err(AbiError::InvalidHandle(_))
        ));
        assert!(matches!(
            get::<Thing, u8>(std::ptr::null()),
            Err(AbiError::InvalidHandle(_))
        ));
        let o: *mut u8 = insert(Arc::new(Other)).expect("inserts");
        assert!(matches!(
            get::<Thing, u8>(o),
            Err(AbiError::InvalidHandle(_))
        ));
        assert!(matches!(
            get::<Thing, u8>(0x1234 as *const u8),
            Err(AbiError::InvalidHandle(_))
        ));
        assert!(
            free::<Thing, u8>(std::ptr::null_mut())
                .expect("null")
                .is_none()
        );
    }

    #[test]
    fn a_remembered_handle_is_refused_once_freed() {
        let h: *mut u8 = insert(Arc::new(Thing(3))).expect("inserts");
        assert_eq!(with::<Thing, u8, u32>(h, |t| t.0).expect("live"), 3);
        // Remembered now: found again without the slab.
        assert_eq!(with::<Thing, u8, u32>(h, |t| t.0 + 1).expect("live"), 4);
        assert_eq!(get::<Thing, u8>(h).expect("live").0, 3);
        // Freed on another thread: this thread's memory of it is stale.
        free_on_another_thread(h);
        assert!(matches!(
            with::<Thing, u8, u32>(h, |t| t.0),
            Err(AbiError::InvalidHandle(_))
        ));
        assert!(matches!(
            get::<Thing, u8>(h),
            Err(AbiError::InvalidHandle(_))
        ));
        // Nested lookups of the same kind work (the inner one is not remembered).
        let a: *mut u8 = insert(Arc::new(Thing(10))).expect("inserts");
        let b: *mut u8 = insert(Arc::new(Thing(20))).expect("inserts");
        let sum = with::<Thing, u8, u32>(a, |x| {
            x.0 + with::<Thing, u8, u32>(b, |y| y.0).expect("live")
        });
        assert_eq!(sum.expect("live"), 30);
        free::<Thing, u8>(a).expect("frees");
        free::<Thing, u8>(b).expect("frees");
    }

    #[test]
    fn several_handles_of_a_kind_are_remembered_and_each_refused_once_freed() {
        let handles: Vec<*mut u8> = (0..REMEMBERED as u32 + 2)
            .map(|i| insert(Arc::new(Thing(i))).expect("inserts"))
            .collect();
        // Looked up in turn, more of them than are remembered: each is found.
        for _ in 0..3 {
            for (i, h) in handles.iter().enumerate() {
                assert_eq!(with::<Thing, u8, u32>(*h, |t| t.0).expect("live"), i as u32);
            }
        }
        // A remembered one freed on another thread is refused here, while
        // the others are still found.
        let (a, b) = (handles[REMEMBERED], handles[REMEMBERED + 1]);
        assert_eq!(
            with::<Thing, u8, u32>(a, |t| t.0).expect("live"),
            REMEMBERED as u32
        );
        assert_eq!(
            with::<Thing, u8, u32>(b, |t| t.0).expect("live"),
            REMEMBERED as u32 + 1
        );
        free_on_another_thread(a);
        assert!(matches!(
            with::<Thing, u8, u32>(a, |t| t.0),
            Err(AbiError::InvalidHandle(_))
        ));
        assert_eq!(
            with::<Thing, u8, u32>(b, |t| t.0).expect("live"),
            REMEMBERED as u32 + 1
        );
        // Freed on this thread: forgotten and refused.
        free::<Thing, u8>(b).expect("frees");
        assert!(get::<Thing, u8>(b).is_err());
        for h in &handles[..REMEMBERED] {
            free::<Thing, u8>(*h).expect("frees");
            assert!(with::<Thing, u8, u32>(*h, |t| t.0).is_err());
        }
    }

    #[test]
    fn an_object_freed_elsewhere_is_released_by_a_later_lookup_here() {
        let object = Arc::new(Thing(5));
        let h: *mut u8 = insert(Arc::clone(&object)).expect("inserts");
        assert_eq!(with::<Thing, u8, u32>(h, |t| t.0).expect("live"), 5);
        free_on_another_thread(h);
        // This thread still remembers it until its next slab lookup.
        let other: *mut u8 = insert(Arc::new(Thing(6))).expect("inserts");
        assert_eq!(with::<Thing, u8, u32>(other, |t| t.0).expect("live"), 6);
        assert_eq!(
            Arc::strong_count(&object),
            1,
            "the freed object is released"
        );
        free::<Thing, u8>(other).expect("frees");
    }

    #[test]
    fn a_reused_slot_does_not_revive_an_old_handle() {
        let old: *mut u8 = insert(Arc::new(Thing(1))).expect("inserts");
        free::<Thing, u8>(old).expect("frees");
        let new: *mut u8 = insert(Arc::new(Thing(2))).expect("inserts");
        assert_ne!(old, new);
        assert!(get::<Thing, u8>(old).is_err());
        assert_eq!(get::<Thing, u8>(new).expect("live").0, 2);
    }

    #[derive(Default)]
    struct Cell(AtomicU32);
    impl Reusable for Cell {
        fn reset(&self) {
            self.0.store(0, Ordering::Relaxed);
        }
    }

    #[test]
    fn a_slot_handle_is_found_while_live_and_refused_once_freed() {
        static CELLS: Slots<Cell> = Slots::new();
        let h = CELLS.insert(202, |_| ()).expect("inserts");
        CELLS
            .get(h, 202)
            .expect("live")
            .0
            .store(9, Ordering::Relaxed);
        assert_eq!(
            CELLS.get(h, 202).expect("live").0.load(Ordering::Relaxed),
            9
        );
        // Another kind's tag, NULL, garbage and an index never handed out.
        assert!(CELLS.get(h, 203).is_none());
        assert!(CELLS.get(0, 202).is_none());
        assert!(CELLS.get(0x1234, 202).is_none());
        assert!(CELLS.get(h ^ 1 << 20, 202).is_none());
        assert!(CELLS.get(h ^ 1 << SLOT_INDEX_BITS, 202).is_none());
        assert!(CELLS.free(h, 202));
        assert!(CELLS.get(h, 202).is_none());
        assert!(!CELLS.free(h, 202), "freed twice");
        // The slot is reused under a new generation, its object reset; the
        // old handle stays refused.
        let again = CELLS.insert(202, |_| ()).expect("inserts");
        assert_ne!(again, h);
        assert_eq!(again & SLOT_INDEX_MASK, h & SLOT_INDEX_MASK);
        assert!(CELLS.get(h, 202).is_none());
        assert!(!CELLS.free(h, 202));
        assert_eq!(
            CELLS
                .get(again, 202)
                .expect("live")
                .0
                .load(Ordering::Relaxed),
            0
        );
        assert!(CELLS.free(again, 202));
    }

    #[test]
    fn a_read_spanning_a_free_and_a_reuse_of_its_slot_is_refused() {
        static CELLS: Slots<Cell> = Slots::new();
        let old = CELLS
            .insert(202, |c| c.0.store(1, Ordering::Relaxed))
            .expect("inserts");
        let p = old as *const u8;
        assert_eq!(
            CELLS
                .read(p, 202, "cell", |c| c.0.load(Ordering::Relaxed))
                .expect("live"),
            1
        );
        // Freed and reused (as by another thread) while the read runs: what
        // it read is the new handle's, so it is refused.
        let mut new = 0;
        let read = CELLS.read(p, 202, "cell", |c| {
            assert!(CELLS.free(old, 202));
            new = CELLS
                .insert(202, |c| c.0.store(2, Ordering::Relaxed))
                .expect("inserts");
            c.0.load(Ordering::Relaxed)
        });
        assert_eq!(new & SLOT_INDEX_MASK, old & SLOT_INDEX_MASK, "reused");
        assert!(matches!(read, Err(AbiError::InvalidHandle(_))), "{read:?}");
        // Freed only: refused too; the new handle reads its own object.
        let read = CELLS.read(new as *const u8, 202, "cell", |c| {
            assert!(CELLS.free(new, 202));
            c.0.load(Ordering::Relaxed)
        });
        assert!(matches!(read, Err(AbiError::InvalidHandle(_))), "{read:?}");
    }

    /// Two words set together: a read that mixes two handles' objects
    /// sees them differ.
    #[derive(Default)]
    struct Pair(AtomicU32, AtomicU32);
    impl Reusable for Pair {
        fn reset(&self) {
            self.0.store(0, Ordering::Relaxed);
            self.1.store(0, Ordering::Relaxed);
        }
    }

    #[test]
    fn reads_racing_frees_and_reuses_see_only_their_own_handles_object() {
        static PAIRS: Slots<Pair> = Slots::new();
        const ROUNDS: u32 = if cfg!(miri) { 300 } else { 100_000 };
        let set = |n: u32| {
            move |p: &Pair| {
                p.0.store(n, Ordering::Relaxed);
                p.1.store(n, Ordering::Relaxed);
            }
        };
        let current = AtomicU64::new(PAIRS.insert(202, set(1)).expect("inserts") as u64);
        use std::sync::atomic::AtomicBool;
        let (started, done) = (AtomicBool::new(false), AtomicBool::new(false));
        let (read, refused) = std::thread::scope(|scope| {
            let reader = scope.spawn(|| {
                let (mut read, mut refused) = (0u32, 0u32);
                while !done.load(Ordering::Relaxed) {
                    let h = current.load(Ordering::Relaxed) as usize as *const u8;
                    match PAIRS.read(h, 202, "pair", |p| {
                        let a = p.0.load(Ordering::Relaxed);
                        // Widens the window for a free and a reuse.
                        std::thread::yield_now();
                        (a, p.1.load(Ordering::Relaxed))
                    }) {
                        Ok((a, b)) => {
                            assert!(a == b && a != 0, "read ({a}, {b}) through {h:?}");
                            read += 1;
                            started.store(true, Ordering::Relaxed);
                        }
                        Err(_) => refused += 1,
                    }
                }
                (read, refused)
            });
            while !started.load(Ordering::Relaxed) {
                std::thread::yield_now();
            }
            for n in 2..ROUNDS {
                let old = current.load(Ordering::Relaxed) as usize;
                assert!(PAIRS.free(old, 202));
                let new = PAIRS.insert(202, set(n)).expect("inserts");
                current.store(new as u64, Ordering::Relaxed);
            }
            done.store(true, Ordering::Relaxed);
            reader.join().expect("the reader saw only whole objects")
        });
        assert!(
            read > 0 && read + refused > 0,
            "{read} reads, {refused} refused"
        );
    }

    #[test]
    fn a_slot_is_not_reused_once_its_generation_wraps() {
        static CELLS: Slots<Cell> = Slots::new();
        let first = CELLS.insert(202, |_| ()).expect("inserts");
        let index = first & SLOT_INDEX_MASK;
        assert!(CELLS.free(first, 202));
        // As after 2^31 - 1 reuses: the next hand-out is the last generation.
        let slot = CELLS.slot(index).expect("made");
        slot.generation.store(u32::MAX - 1, Ordering::Relaxed);
        let last = CELLS.insert(202, |_| ()).expect("inserts");
        assert_eq!(last & SLOT_INDEX_MASK, index);
        assert!(CELLS.free(last, 202));
        // Reused now, the slot would hand `first` out again, and a stale
        // copy of `first` would name the new object.
        let next = CELLS.insert(202, |_| ()).expect("inserts");
        assert_ne!(next, first);
        assert_ne!(next & SLOT_INDEX_MASK, index, "the wrapped slot is retired");
        assert!(CELLS.get(first, 202).is_none());
        assert!(CELLS.free(next, 202));
    }

    #[test]
    fn slot_handles_span_segments_and_threads() {
        static CELLS: Slots<Cell> = Slots::new();
        let handles: Vec<usize> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..4)
                .map(|t| {
                    scope.spawn(move || {
                        (0..300u32)
                            .map(|i| {
                                let h = CELLS.insert(202, |_| ()).expect("inserts");
                                CELLS
                                    .get(h, 202)
                                    .expect("live")
                                    .0
                                    .store(t * 1000 + i, Ordering::Relaxed);
                                h
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().expect("joins"))
                .collect()
        });
        let mut indices: Vec<usize> = handles.iter().map(|h| h & SLOT_INDEX_MASK).collect();
        indices.sort_unstable();
        indices.dedup();
        assert_eq!(indices.len(), 1200, "every live handle has its own slot");
        for (n, h) in handles.iter().enumerate() {
            let expected = (n / 300) as u32 * 1000 + (n % 300) as u32;
            assert_eq!(
                CELLS.get(*h, 202).expect("live").0.load(Ordering::Relaxed),
                expected
            );
        }
        for h in &handles {
            assert!(CELLS.free(*h, 202));
            assert!(CELLS.get(*h, 202).is_none());
        }
    }

    std::thread_local! {
        static RECENT_THINGS: RefCell<Recent<Thing>> = const { Recent::new() };
    }

    /// [`Slots::with_shared`] of a test's table of things.
    fn read_thing(table: &'static Slots<Pinned<Thing>>, raw: usize) -> Result<u32, AbiError> {
        table.with_shared(&RECENT_THINGS, raw as *const u8, 204, "thing", |t| t.0)
    }

    #[test]
    fn a_pinned_handle_is_found_while_live_and_refused_once_freed() {
        static SHARED: Slots<Pinned<Thing>> = Slots::new();
        let object = Arc::new(Thing(4));
        let h = SHARED
            .insert_shared(&RECENT_THINGS, 204, Arc::clone(&object))
            .expect("inserts");
        assert_eq!(read_thing(&SHARED, h).expect("live"), 4);
        // Another kind's tag, NULL, garbage, an index never handed out.
        for bad in [
            h ^ (1 << 57),
            0,
            0x1234,
            h ^ (1 << 20),
            h ^ (1 << SLOT_INDEX_BITS),
        ] {
            let read = read_thing(&SHARED, bad);
            assert!(
                matches!(read, Err(AbiError::InvalidHandle(_))),
                "{bad:#x}: {read:?}"
            );
        }
        // The slot's reference and this thread's.
        assert_eq!(Arc::strong_count(&object), 3);
        let p = h as *const u8;
        SHARED
            .release_shared(&RECENT_THINGS, p, 204, "thing")
            .expect("frees");
        // Let go of at the free, by the slot and this thread.
        assert_eq!(Arc::strong_count(&object), 1);
        assert!(matches!(
            read_thing(&SHARED, h),
            Err(AbiError::InvalidHandle(_))
        ));
        assert!(matches!(
            SHARED.release_shared(&RECENT_THINGS, p, 204, "thing"),
            Err(AbiError::InvalidHandle(_))
        ));
        SHARED
            .release_shared(&RECENT_THINGS, std::ptr::null::<u8>(), 204, "thing")
            .expect("NULL");
        // The slot reused under a new generation: the old handle stays refused.
        let again = SHARED
            .insert_shared(&RECENT_THINGS, 204, Arc::new(Thing(5)))
            .expect("inserts");
        assert_eq!(again & SLOT_INDEX_MASK, h & SLOT_INDEX_MASK);
        assert!(read_thing(&SHARED, h).is_err());
        assert_eq!(read_thing(&SHARED, again).expect("live"), 5);
        SHARED
            .release_shared(&RECENT_THINGS, again as *const u8, 204, "thing")
            .expect("frees");
    }

    #[test]
    fn a_pinned_handle_freed_on_another_thread_is_refused_here_and_let_go_of() {
        static SHARED: Slots<Pinned<Thing>> = Slots::new();
        let object = Arc::new(Thing(8));
        let h = SHARED
            .insert_shared(&RECENT_THINGS, 204, Arc::clone(&object))
            .expect("inserts");
        let others: Vec<usize> = (0..REMEMBERED as u32 + 1)
            .map(|i| {
                SHARED
                    .insert_shared(&RECENT_THINGS, 204, Arc::new(Thing(100 + i)))
                    .expect("inserts")
            })
            .collect();
        // Remembered here, freed elsewhere: refused here at once.
        assert_eq!(read_thing(&SHARED, h).expect("live"), 8);
        std::thread::spawn(move || {
            SHARED
                .release_shared(&RECENT_THINGS, h as *const u8, 204, "thing")
                .expect("frees")
        })
        .join()
        .expect("joins");
        assert!(matches!(
            read_thing(&SHARED, h),
            Err(AbiError::InvalidHandle(_))
        ));
        // This thread's reference goes once others take its place.
        for (i, other) in others.iter().enumerate() {
            assert_eq!(read_thing(&SHARED, *other).expect("live"), 100 + i as u32);
        }
        assert_eq!(
            Arc::strong_count(&object),
            1,
            "the freed object is let go of"
        );
        for other in others {
            SHARED
                .release_shared(&RECENT_THINGS, other as *const u8, 204, "thing")
                .expect("frees");
        }
    }

    #[test]
    fn a_free_waits_for_a_pinned_lookup() {
        static SHARED: Slots<Pinned<Thing>> = Slots::new();
        let h = SHARED.insert(204, |slot| {
            // SAFETY: the slot is vacant and this hand-out owns it.
            unsafe { *slot.object.get() = Some(Arc::new(Thing(9))) }
        });
        let h = h.expect("inserts");
        let slot = SHARED.slot(h & SLOT_INDEX_MASK).expect("made");
        // A lookup on another thread between its pin and its unpin.
        slot.value.pins.fetch_add(1, Ordering::SeqCst);
        use std::sync::atomic::AtomicBool;
        let freed = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let freer = scope.spawn(|| {
                assert!(SHARED.free(h, 204));
                freed.store(true, Ordering::SeqCst);
            });
            for _ in 0..50 {
                std::thread::yield_now();
            }
            assert!(!freed.load(Ordering::SeqCst), "let go of under a pin");
            // SAFETY: pinned, and the free has not let go of the object.
            assert_eq!(
                unsafe { &*slot.value.object.get() }.as_ref().map(|t| t.0),
                Some(9)
            );
            slot.value.pins.fetch_sub(1, Ordering::Release);
            freer.join().expect("joins");
        });
        assert!(freed.load(Ordering::SeqCst));
    }

    #[test]
    fn pinned_reads_racing_frees_and_reuses_see_only_their_own_handles_object() {
        static SHARED: Slots<Pinned<Thing>> = Slots::new();
        const ROUNDS: u32 = if cfg!(miri) { 200 } else { 50_000 };
        let first = SHARED
            .insert_shared(&RECENT_THINGS, 204, Arc::new(Thing(1)))
            .expect("inserts");
        let current = AtomicU64::new(first as u64);
        let handed = Mutex::new(std::collections::HashMap::from([(first as u64, 1u32)]));
        use std::sync::atomic::AtomicBool;
        let (started, done) = (AtomicBool::new(false), AtomicBool::new(false));
        std::thread::scope(|scope| {
            let reader = scope.spawn(|| {
                let mut read = 0u32;
                while !done.load(Ordering::Relaxed) {
                    let h = current.load(Ordering::Relaxed);
                    if let Ok(n) = read_thing(&SHARED, h as usize) {
                        // The object read is the one handed out under `h`.
                        let handed = handed.lock().unwrap_or_else(|e| e.into_inner());
                        assert_eq!(handed.get(&h), Some(&n), "{h:#x} read {n}");
                        read += 1;
                        started.store(true, Ordering::Relaxed);
                    }
                }
                read
            });
            while !started.load(Ordering::Relaxed) {
                std::thread::yield_now();
            }
            for n in 2..ROUNDS {
                let old = current.load(Ordering::Relaxed) as usize;
                SHARED
                    .release_shared(&RECENT_THINGS, old as *const u8, 204, "thing")
                    .expect("frees");
                let new = SHARED
                    .insert_shared(&RECENT_THINGS, 204, Arc::new(Thing(n)))
                    .expect("inserts");
                handed
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(new as u64, n);
                current.store(new as u64, Ordering::Relaxed);
            }
            done.store(true, Ordering::Relaxed);
            let read = reader
                .join()
                .expect("the reader saw only its handle's object");
            assert!(read > 0);
        });
        let last = current.load(Ordering::Relaxed) as usize as *const u8;
        SHARED
            .release_shared(&RECENT_THINGS, last, 204, "thing")
            .expect("frees");
    }

    /// How many slots are on `table`'s vacant list.
    fn vacant_count<T: Reusable>(table: &Slots<T>) -> usize {
        table
            .vacant
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .freed
            .len()
    }

    #[test]
    fn a_freed_slot_and_object_are_kept_by_the_freeing_thread_for_its_next_handle() {
        static SHARED: Slots<Pinned<Thing>> = Slots::new();
        static OTHER: Slots<Pinned<Thing>> = Slots::new();
        std::thread::spawn(|| {
            let keep = |table: &'static Slots<Pinned<Thing>>, h: usize| {
                table
                    .release_shared_keeping(&RECENT_THINGS, h as *const u8, 204, "thing")
                    .expect("frees")
            };
            let a = SHARED
                .insert_shared(&RECENT_THINGS, 204, Arc::new(Thing(1)))
                .expect("inserts");
            keep(&SHARED, a);
            assert_eq!(vacant_count(&SHARED), 0, "kept by this thread");
            assert!(read_thing(&SHARED, a).is_err());
            // The next handle takes the slot (under a new generation) and
            // may reuse the object's allocation.
            let b = SHARED
                .insert_shared_with(&RECENT_THINGS, 204, |spare| {
                    let old = spare.take().expect("kept");
                    assert_eq!((old.0, Arc::strong_count(&old)), (1, 1));
                    (Arc::new(Thing(2)), old)
                })
                .expect("inserts");
            assert_eq!(b & SLOT_INDEX_MASK, a & SLOT_INDEX_MASK);
            assert_ne!(a, b);
            assert!(
                read_thing(&SHARED, a).is_err(),
                "the old handle stays freed"
            );
            assert_eq!(read_thing(&SHARED, b).expect("live"), 2);
            assert!(matches!(
                SHARED.release_shared_keeping(&RECENT_THINGS, a as *const u8, 204, "thing"),
                Err(AbiError::InvalidHandle(_))
            ));
            // A slot of another table is not handed out here; the one kept
            // before goes back on its own table's list when another is kept.
            keep(&SHARED, b);
            let c = OTHER
                .insert_shared(&RECENT_THINGS, 204, Arc::new(Thing(3)))
                .expect("inserts");
            assert_eq!(vacant_count(&SHARED), 0);
            keep(&OTHER, c);
            assert_eq!(vacant_count(&SHARED), 1, "back on its list");
            assert_eq!(vacant_count(&OTHER), 0, "kept by this thread");
            // Another thread's object is not kept: it still refers to it.
            let d = SHARED
                .insert_shared(&RECENT_THINGS, 204, Arc::new(Thing(4)))
                .expect("inserts");
            let held = SHARED
                .with_shared(&RECENT_THINGS, d as *const u8, 204, "thing", Arc::clone)
                .expect("live");
            keep(&SHARED, d);
            let e = SHARED
                .insert_shared_with(&RECENT_THINGS, 204, |spare| {
                    assert!(spare.as_ref().is_none_or(|s| s.0 != 4), "not kept");
                    (Arc::new(Thing(5)), ())
                })
                .expect("inserts");
            assert_eq!(Arc::strong_count(&held), 1);
            keep(&SHARED, e);
        })
        .join()
        .expect("joins");
        // The thread ended: the slot it kept went back on its table's list.
        assert_eq!(vacant_count(&OTHER), 1);
        assert_eq!(vacant_count(&SHARED), 1);
    }

    #[test]
    fn segments_cover_every_index_once() {
        let mut expected = (0, 0);
        for index in 0..SEGMENT_BASE * 40 {
            let (segment, offset) = segment_of(index);
            assert_eq!((segment, offset), expected, "index {index}");
            expected.1 += 1;
            if expected.1 == SEGMENT_BASE << segment {
                expected = (segment + 1, 0);
            }
        }
        assert!(segment_of(SLOT_INDEX_MASK).0 < SEGMENTS);
    }
}
