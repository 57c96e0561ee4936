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

use crate::error::AbiError;
use sharded_slab::{Config, Slab};
use std::sync::Arc;

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
        }
    };
}
pub(crate) use handled;

/// Registers `object` and returns its handle.
pub fn insert<T: Handled, H>(object: Arc<T>) -> Result<*mut H, AbiError> {
    let key = T::slab()
        .insert(object)
        .ok_or_else(|| AbiError::Internal(format!("too many live {} handles", T::NAME)))?;
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
    let key = key_of::<T, H>(handle)?;
    match T::slab().get(key) {
        Some(entry) => Ok(Arc::clone(&entry)),
        None => Err(AbiError::InvalidHandle(format!(
            "the {} handle {:#x} was freed or never existed",
            T::NAME,
            handle as usize
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
        Some(object) => Ok(Some(object)),
        None => Err(AbiError::InvalidHandle(format!(
            "the {} handle {:#x} was already freed or never existed",
            T::NAME,
            handle as usize
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_reused_slot_does_not_revive_an_old_handle() {
        let old: *mut u8 = insert(Arc::new(Thing(1))).expect("inserts");
        free::<Thing, u8>(old).expect("frees");
        let new: *mut u8 = insert(Arc::new(Thing(2))).expect("inserts");
        assert_ne!(old, new);
        assert!(get::<Thing, u8>(old).is_err());
        assert_eq!(get::<Thing, u8>(new).expect("live").0, 2);
    }
}
