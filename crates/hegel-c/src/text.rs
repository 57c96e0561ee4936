//! Strings across the boundary: reading the caller's `hegel_string_t`
//! views, and handing out borrowed and owned strings the way the header
//! promises (non-NULL data, a trailing NUL, lengths without it).
//!
//! Owned buffers (strings, bytes, rendered documents) are recorded when they
//! are handed out, so that freeing one twice, or freeing a string the engine
//! only lent, is refused with an error instead of corrupting the heap.

use crate::abi::{hegel_owned_string_t, hegel_string_t};
use crate::error::{AbiError, AbiResult};
use std::collections::HashSet;
use std::ffi::c_char;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{LazyLock, Mutex};

/// The bytes of an input view (`what` names the argument in errors).
///
/// # Safety
/// `s.data` must point to `s.len` readable bytes for the duration of the
/// call, as the ABI requires of the caller.
pub unsafe fn bytes<'a>(s: hegel_string_t, what: &str) -> AbiResult<&'a [u8]> {
    if s.len == 0 {
        return Ok(&[]);
    }
    if s.data.is_null() {
        return Err(AbiError::arg(format!(
            "{what}: NULL data with length {}",
            s.len
        )));
    }
    if s.len > isize::MAX as usize {
        return Err(AbiError::arg(format!(
            "{what}: length {} is above PTRDIFF_MAX",
            s.len
        )));
    }
    // SAFETY: non-null, length in range; readability is the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(s.data.cast::<u8>(), s.len) })
}

/// The text of an input view, which must be UTF-8.
///
/// # Safety
/// As [`bytes`].
pub unsafe fn text<'a>(s: hegel_string_t, what: &str) -> AbiResult<&'a str> {
    // SAFETY: forwarded contract.
    let raw = unsafe { bytes(s, what)? };
    std::str::from_utf8(raw).map_err(|e| AbiError::arg(format!("{what} is not valid UTF-8: {e}")))
}

/// Whether an input view holds exactly `expected` (a refused view does not).
///
/// # Safety
/// As [`bytes`].
pub unsafe fn view_is(s: hegel_string_t, expected: &str) -> bool {
    // SAFETY: forwarded contract.
    matches!(unsafe { bytes(s, "") }, Ok(b) if b == expected.as_bytes())
}

/// Whether an array of `len` views holds exactly `expected`.
///
/// # Safety
/// As [`text_array`].
pub unsafe fn views_are(items: *const hegel_string_t, len: usize, expected: &[String]) -> bool {
    if len != expected.len() {
        return false;
    }
    if len == 0 {
        return true;
    }
    if items.is_null() {
        return false;
    }
    // SAFETY: the caller's contract.
    let views = unsafe { std::slice::from_raw_parts(items, len) };
    views
        .iter()
        .zip(expected)
        // SAFETY: each view satisfies the contract.
        .all(|(v, e)| unsafe { view_is(*v, e) })
}

/// The text of an optional input view (NULL means absent).
///
/// # Safety
/// `s` is NULL or points to a view satisfying [`bytes`]'s contract.
pub unsafe fn optional_text<'a>(
    s: *const hegel_string_t,
    what: &str,
) -> AbiResult<Option<&'a str>> {
    if s.is_null() {
        return Ok(None);
    }
    // SAFETY: non-null pointer to a view, by the caller's contract.
    Ok(Some(unsafe { text(*s, what)? }))
}

/// The texts of an array of `len` views.
///
/// # Safety
/// `items` points to `len` views (or is NULL with `len` 0), each satisfying
/// [`bytes`]'s contract.
pub unsafe fn text_array<'a>(
    items: *const hegel_string_t,
    len: usize,
    what: &str,
) -> AbiResult<Vec<&'a str>> {
    if len == 0 {
        return Ok(Vec::new());
    }
    if items.is_null() {
        return Err(AbiError::arg(format!(
            "{what}: NULL array with length {len}"
        )));
    }
    // SAFETY: the caller's contract.
    let views = unsafe { std::slice::from_raw_parts(items, len) };
    views
        .iter()
        .enumerate()
        // SAFETY: each view satisfies the contract.
        .map(|(i, v)| match unsafe { text(*v, what) } {
            Ok(text) => Ok(text),
            // Named by its index only when it is refused: frontends pass
            // these arrays with every test case, and a name is an allocation.
            // SAFETY: as above.
            Err(_) => unsafe { text(*v, &format!("{what}[{i}]")) },
        })
        .collect()
}

/// A string the engine lends out: NUL-terminated bytes with a descriptor
/// whose address stays put, for outputs of type `const hegel_string_t *`.
pub struct LentText {
    /// A `Vec`, not a `Box<[u8]>`: moving a `Box` (into this struct, and
    /// with it) asserts that it is the only way to its bytes, which the
    /// descriptor's pointer also is (Miri's Stacked Borrows then reports a
    /// read through a view as undefined behaviour); a `Vec` asserts nothing
    /// when moved, and `Vec::as_ptr` makes no reference.
    bytes: Vec<u8>,
    view: Box<hegel_string_t>,
}

// SAFETY: the descriptor only points into `bytes`, which is owned, immutable
// and moves with it.
unsafe impl Send for LentText {}
// SAFETY: as above; nothing is mutated after construction.
unsafe impl Sync for LentText {}

impl LentText {
    /// Lends out `text`.
    pub fn new(text: impl Into<Vec<u8>>) -> LentText {
        let mut bytes = text.into();
        let len = bytes.len();
        bytes.reserve_exact(1);
        bytes.push(0);
        let view = Box::new(hegel_string_t {
            data: bytes.as_ptr().cast::<c_char>(),
            len,
        });
        LentText { bytes, view }
    }

    /// The descriptor, by value.
    pub fn view(&self) -> hegel_string_t {
        *self.view
    }

    /// The descriptor's stable address.
    pub fn view_ptr(&self) -> *const hegel_string_t {
        &*self.view
    }

    /// The text's bytes, without the NUL.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.bytes.len() - 1]
    }
}

impl std::fmt::Debug for LentText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        String::from_utf8_lossy(self.as_bytes()).fmt(f)
    }
}

/// Addresses of the owned buffers handed out and not yet freed, beyond
/// those [`FRONT`] holds (hashed with a fast hash, not SipHash).
type Addresses = HashSet<usize, foldhash::fast::RandomState>;
static OWNED: LazyLock<Mutex<Addresses>> = LazyLock::new(|| Mutex::new(Addresses::default()));
/// How many addresses [`OWNED`] holds: while none, a lookup that [`FRONT`]
/// misses takes no lock.
static OWNED_COUNT: AtomicUsize = AtomicUsize::new(0);

fn owned() -> std::sync::MutexGuard<'static, Addresses> {
    OWNED.lock().unwrap_or_else(|e| e.into_inner())
}

/// How many windows [`FRONT`] has, and how many places each.
const FRONT_WINDOWS: usize = 256;
const WINDOW: usize = 8;

/// The registry's front: places for the addresses of owned buffers handed
/// out and not yet freed (0 in a free place), each address in a window of
/// [`WINDOW`] places chosen by its hash. One string is drawn, handed out
/// and freed per test case: its address goes in and out with one atomic
/// compare-and-swap each, where a locked set costs a lock and an unlock
/// each way. An address whose window is full goes to [`OWNED`]. An address
/// is in one place at a time (it is registered after its buffer is made
/// and taken out before the buffer is freed); a free looks it up in its
/// whole window (a place freed meanwhile ends no search).
static FRONT: [AtomicUsize; FRONT_WINDOWS * WINDOW] =
    [const { AtomicUsize::new(0) }; FRONT_WINDOWS * WINDOW];

/// The window of `address` in [`FRONT`].
#[inline(always)]
fn window(address: usize) -> &'static [AtomicUsize] {
    let hash = (address as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56;
    let start = hash as usize % FRONT_WINDOWS * WINDOW;
    &FRONT[start..start + WINDOW]
}

/// Records `address` (non-zero) as handed out.
fn register(address: usize) {
    for place in window(address) {
        if place.load(Ordering::Relaxed) == 0
            && place
                .compare_exchange(0, address, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        {
            return;
        }
    }
    let mut owned = owned();
    owned.insert(address);
    OWNED_COUNT.store(owned.len(), Ordering::Release);
}

/// Takes `address` out of the record; `false` when it is not in it (never
/// handed out, or freed already).
fn unregister(address: usize) -> bool {
    for place in window(address) {
        if place.load(Ordering::Acquire) == address
            && place
                .compare_exchange(address, 0, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        {
            return true;
        }
    }
    if OWNED_COUNT.load(Ordering::Acquire) == 0 {
        return false;
    }
    let mut owned = owned();
    let removed = owned.remove(&address);
    OWNED_COUNT.store(owned.len(), Ordering::Release);
    removed
}

/// Hands out `bytes`, NUL-terminated, as a buffer the caller owns: its
/// address and length (without the NUL).
pub fn hand_out(mut bytes: Vec<u8>) -> (*mut u8, usize) {
    let len = bytes.len();
    // Room for the NUL and no more: the boxed slice then takes the buffer
    // as it is.
    bytes.reserve_exact(1);
    bytes.push(0);
    let data = Box::into_raw(bytes.into_boxed_slice()).cast::<u8>();
    register(data as usize);
    (data, len)
}

/// Takes back a buffer from [`hand_out`]; a NULL one is a no-op.
pub fn take_back(data: *mut u8, len: usize, what: &str) -> AbiResult {
    if data.is_null() {
        return Ok(());
    }
    if !unregister(data as usize) {
        return Err(AbiError::arg(format!(
            "{what}: {data:p} is not a buffer libhegel handed out, or it was freed already"
        )));
    }
    // SAFETY: `data` came from `hand_out` with this length (+1 for the NUL):
    // the registry proves it was handed out and not yet taken back, and the
    // caller may not change the length of a buffer it owns.
    drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(data, len + 1)) });
    Ok(())
}

/// An owned string for the caller.
pub fn owned_string(text: String) -> hegel_owned_string_t {
    let (data, len) = hand_out(text.into_bytes());
    hegel_string_t {
        data: data.cast::<c_char>(),
        len,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(s: &str) -> hegel_string_t {
        hegel_string_t {
            data: s.as_ptr().cast(),
            len: s.len(),
        }
    }

    #[test]
    fn views_are_checked() {
        // SAFETY: the views point into live strings.
        unsafe {
            assert_eq!(text(view("héllo"), "x").expect("utf-8"), "héllo");
            let empty = hegel_string_t {
                data: std::ptr::null(),
                len: 0,
            };
            assert_eq!(text(empty, "x").expect("empty"), "");
            let bad = hegel_string_t {
                data: std::ptr::null(),
                len: 3,
            };
            assert!(text(bad, "x").is_err());
            let invalid = [0xffu8, 0xfe];
            let invalid = hegel_string_t {
                data: invalid.as_ptr().cast(),
                len: 2,
            };
            assert!(text(invalid, "x").is_err());
        }
    }

    #[test]
    fn owned_buffers_are_freed_once() {
        let s = owned_string("abc".into());
        assert_eq!(s.len, 3);
        // SAFETY: hand_out wrote a NUL after the bytes.
        assert_eq!(unsafe { *s.data.add(3) }, 0);
        take_back(s.data as *mut u8, s.len, "s").expect("first free");
        assert!(take_back(s.data as *mut u8, s.len, "s").is_err());
        let lent = LentText::new("xyz");
        assert!(take_back(lent.view().data as *mut u8, 3, "lent").is_err());
    }

    #[test]
    fn buffers_beyond_the_front_are_recorded_and_freed_once() {
        // More buffers live at once than the front has places: some go to
        // the locked set, and every one is taken back.
        let strings: Vec<_> = (0..FRONT_WINDOWS * WINDOW + 100)
            .map(|i| owned_string(i.to_string()))
            .collect();
        assert!(OWNED_COUNT.load(Ordering::Acquire) > 0);
        for s in &strings {
            take_back(s.data as *mut u8, s.len, "s").expect("first free");
        }
        // A buffer never handed out is refused.
        let mut other = [1u8, 0];
        assert!(take_back(other.as_mut_ptr(), 1, "other").is_err());
    }
}
