//! Quiet panics inside test cases.
//!
//! Searching and shrinking run the property thousands of times, and many of
//! those runs panic; the default hook would print every one. A process-wide
//! hook, installed once, records the message and location of a panic on a
//! thread that is inside a test case instead of printing it, and defers to
//! the previous hook everywhere else.

use std::cell::{Cell, RefCell};
use std::sync::Once;

/// A panic raised by the property.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CapturedPanic {
    /// The panic message (or a description of a non-text payload).
    pub(crate) message: String,
    /// `file:line:column`, if known.
    pub(crate) location: Option<String>,
}

thread_local! {
    static CAPTURING: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<Option<CapturedPanic>> = const { RefCell::new(None) };
}

static INSTALL: Once = Once::new();

fn install() {
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CAPTURING.with(Cell::get) {
                let payload = info.payload();
                let message = if let Some(s) = payload.downcast_ref::<&str>() {
                    (*s).to_string()
                } else if let Some(s) = payload.downcast_ref::<String>() {
                    s.clone()
                } else {
                    "(a panic with a non-text payload)".to_string()
                };
                let location = info
                    .location()
                    .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(CapturedPanic { message, location }));
            } else {
                previous(info);
            }
        }));
    });
}

/// While alive, panics on this thread are recorded rather than printed.
pub(crate) struct CaptureGuard {
    was_capturing: bool,
}

impl CaptureGuard {
    /// Starts capturing on this thread.
    pub(crate) fn start() -> CaptureGuard {
        install();
        let was_capturing = CAPTURING.with(|c| c.replace(true));
        CaptureGuard { was_capturing }
    }
}

impl Drop for CaptureGuard {
    fn drop(&mut self) {
        CAPTURING.with(|c| c.set(self.was_capturing));
    }
}

/// Takes the last panic recorded on this thread.
pub(crate) fn take_last_panic() -> Option<CapturedPanic> {
    LAST_PANIC.with(|p| p.borrow_mut().take())
}
