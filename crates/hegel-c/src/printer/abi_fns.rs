//! The printer's exported functions: options, printer handles onto a
//! document region, writes, holes, speculation, resolve and read.

use super::{DEFAULT_WIDTH, Document, Op, Target, reflow, to_abi};
use crate::abi::*;
use crate::context::{guard, hegel_context_t, require, write};
use crate::error::{AbiError, AbiResult};
use crate::handles::{self, handled};
use crate::test_case::{self, TestCaseHandle, hegel_test_case_t};
use crate::text;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Opaque to C: `hegel_printer_t`.
pub enum hegel_printer_t {}
/// Opaque to C: `hegel_printer_options_t`.
pub enum hegel_printer_options_t {}
/// Opaque to C: `hegel_reflow_options_t`.
pub enum hegel_reflow_options_t {}

/// Printer options: the width, when set.
pub struct PrinterOptions {
    max_width: Mutex<Option<u64>>,
}
handled!(PrinterOptions, 9, "printer options");

/// Reflow options (none yet).
pub struct ReflowOptions;
handled!(ReflowOptions, 10, "reflow options");

/// Whose worker a printer's lines are attributed to: the test-case handle it
/// was fetched from (whose worker may change after).
struct Attribution {
    test_case: Arc<TestCaseHandle>,
}

/// A handle onto one region of a document.
pub struct PrinterHandle {
    document: Arc<Document>,
    target: Target,
    root: bool,
    busy: AtomicBool,
    attribution: Option<Attribution>,
}
handled!(PrinterHandle, 11, "printer");

struct Claim<'a>(&'a AtomicBool);

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl PrinterHandle {
    fn claim(&self) -> AbiResult<Claim<'_>> {
        if self.busy.swap(true, Ordering::Acquire) {
            return Err(AbiError::ConcurrentUse(
                "the printer handle is in use on another thread: give each thread its own \
                 region with hegel_printer_deferred"
                    .into(),
            ));
        }
        Ok(Claim(&self.busy))
    }

    fn prefix(&self) -> Option<String> {
        self.attribution.as_ref()?.test_case.line_prefix()
    }

    /// Records content ops, prefixed when a worker line starts.
    fn content(&self, ops: Vec<Op>) -> AbiResult {
        let _claim = self.claim()?;
        let prefix = self.prefix();
        let mut first = true;
        for op in ops {
            let prefix = if first { prefix.as_deref() } else { None };
            first = false;
            self.document
                .record_prefixed(self.target, op, prefix)
                .map_err(to_abi)?;
        }
        Ok(())
    }
}

fn printer(p: *mut hegel_printer_t) -> AbiResult<Arc<PrinterHandle>> {
    handles::get::<PrinterHandle, _>(p)
}

/// Text for a printer call: UTF-8, no newlines.
fn line_text(s: hegel_string_t, what: &str) -> AbiResult<String> {
    // SAFETY: the caller's view.
    let t = unsafe { text::text(s, what)? };
    if t.contains('\n') {
        return Err(AbiError::arg(format!(
            "{what} must not contain newlines: break lines with hegel_printer_hard_break"
        )));
    }
    Ok(t.to_string())
}

fn width_of(options: *const hegel_printer_options_t) -> AbiResult<Option<u64>> {
    if options.is_null() {
        return Ok(None);
    }
    let options = handles::get::<PrinterOptions, _>(options)?;
    Ok(*options.max_width.lock().unwrap_or_else(|e| e.into_inner()))
}

fn hand_out(handle: PrinterHandle, out: *mut *mut hegel_printer_t) -> AbiResult {
    write(out, handles::insert(Arc::new(handle))?, "out_printer")
}

/// New printer options at their defaults.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_printer_options_new(
    ctx: *mut hegel_context_t,
    out_options: *mut *mut hegel_printer_options_t,
) -> hegel_result_t {
    guard(ctx, || {
        require(out_options, "out_options")?;
        let options = PrinterOptions {
            max_width: Mutex::new(None),
        };
        write(
            out_options,
            handles::insert(Arc::new(options))?,
            "out_options",
        )
    })
}

/// Frees printer options; NULL is a no-op.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_printer_options_free(
    ctx: *mut hegel_context_t,
    options: *mut hegel_printer_options_t,
) -> hegel_result_t {
    guard(ctx, || {
        handles::free::<PrinterOptions, _>(options).map(drop)
    })
}

/// Sets the width documents are laid out at.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_printer_options_set_max_width(
    ctx: *mut hegel_context_t,
    options: *mut hegel_printer_options_t,
    max_width: u64,
) -> hegel_result_t {
    guard(ctx, || {
        let options = handles::get::<PrinterOptions, _>(options)?;
        if max_width == 0 {
            return Err(AbiError::arg("max_width must be at least 1"));
        }
        *options.max_width.lock().unwrap_or_else(|e| e.into_inner()) = Some(max_width);
        Ok(())
    })
}

/// A standalone document.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_printer_new(
    ctx: *mut hegel_context_t,
    options: *const hegel_printer_options_t,
    out_printer: *mut *mut hegel_printer_t,
) -> hegel_result_t {
    guard(ctx, || {
        require(out_printer, "out_printer")?;
        let document = Document::new();
        document.set_width(width_of(options)?.unwrap_or(DEFAULT_WIDTH));
        hand_out(
            PrinterHandle {
                document,
                target: Target::Main,
                root: true,
                busy: AtomicBool::new(false),
                attribution: None,
            },
            out_printer,
        )
    })
}

/// A printer onto the test-case handle's region of its family document.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_test_case_printer(
    ctx: *mut hegel_context_t,
    tc: *mut hegel_test_case_t,
    options: *const hegel_printer_options_t,
    out_printer: *mut *mut hegel_printer_t,
) -> hegel_result_t {
    guard(ctx, || {
        let tc = test_case::handle(tc)?;
        require(out_printer, "out_printer")?;
        test_case::configure_width(&tc.family, width_of(options)?)?;
        hand_out(
            PrinterHandle {
                document: Arc::clone(tc.family.document()),
                target: tc.region,
                root: tc.region == Target::Main,
                busy: AtomicBool::new(false),
                attribution: Some(Attribution {
                    test_case: Arc::clone(&tc),
                }),
            },
            out_printer,
        )
    })
}

/// Frees a printer handle (the document's content stays); NULL is a no-op.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_printer_free(
    ctx: *mut hegel_context_t,
    printer: *mut hegel_printer_t,
) -> hegel_result_t {
    guard(ctx, || handles::free::<PrinterHandle, _>(printer).map(drop))
}

/// Text shown only if the innermost group breaks.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_printer_if_break(
    ctx: *mut hegel_context_t,
    p: *mut hegel_printer_t,
    text_: hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        let p = printer(p)?;
        p.content(vec![Op::IfBroken(line_text(text_, "text")?)])
    })
}

/// Unbreakable text.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_printer_text(
    ctx: *mut hegel_context_t,
    p: *mut hegel_printer_t,
    text_: hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        let p = printer(p)?;
        p.content(vec![Op::Text(line_text(text_, "text")?)])
    })
}

/// A break point.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_printer_breakable(
    ctx: *mut hegel_context_t,
    p: *mut hegel_printer_t,
    sep: hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        let p = printer(p)?;
        p.content(vec![Op::Break(line_text(sep, "sep")?)])
    })
}

/// A comment at the end of the current line.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_printer_comment(
    ctx: *mut hegel_context_t,
    p: *mut hegel_printer_t,
    text_: hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        let p = printer(p)?;
        p.content(vec![Op::Comment(line_text(text_, "text")?)])
    })
}

/// A hard line break.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_printer_hard_break(
    ctx: *mut hegel_context_t,
    p: *mut hegel_printer_t,
) -> hegel_result_t {
    guard(ctx, || printer(p)?.content(vec![Op::Newline]))
}

/// Opens a group.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_printer_begin_group(
    ctx: *mut hegel_context_t,
    p: *mut hegel_printer_t,
    indent: u64,
    open: hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        let p = printer(p)?;
        let indent = usize::try_from(indent)
            .ok()
            .filter(|i| *i <= isize::MAX as usize)
            .ok_or_else(|| AbiError::arg(format!("indent {indent} is too large")))?;
        p.content(vec![Op::Open {
            indent,
            text: line_text(open, "open")?,
        }])
    })
}

/// Closes the innermost group.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_printer_end_group(
    ctx: *mut hegel_context_t,
    p: *mut hegel_printer_t,
    close: hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        let p = printer(p)?;
        p.content(vec![Op::Close(line_text(close, "close")?)])
    })
}

/// Shifts the indentation of later break points.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_printer_shift_indent(
    ctx: *mut hegel_context_t,
    p: *mut hegel_printer_t,
    delta: i64,
) -> hegel_result_t {
    guard(ctx, || {
        let p = printer(p)?;
        let delta = isize::try_from(delta).map_err(|_| AbiError::arg("delta is out of range"))?;
        let _claim = p.claim()?;
        p.document
            .record(p.target, Op::Shift(delta))
            .map_err(to_abi)
    })
}

/// New reflow options.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_reflow_options_new(
    ctx: *mut hegel_context_t,
    out_options: *mut *mut hegel_reflow_options_t,
) -> hegel_result_t {
    guard(ctx, || {
        require(out_options, "out_options")?;
        write(
            out_options,
            handles::insert(Arc::new(ReflowOptions))?,
            "out_options",
        )
    })
}

/// Frees reflow options; NULL is a no-op.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_reflow_options_free(
    ctx: *mut hegel_context_t,
    options: *mut hegel_reflow_options_t,
) -> hegel_result_t {
    guard(ctx, || handles::free::<ReflowOptions, _>(options).map(drop))
}

/// Re-emits a one-line debug representation through groups and breaks.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_printer_reflow(
    ctx: *mut hegel_context_t,
    p: *mut hegel_printer_t,
    options: *const hegel_reflow_options_t,
    text_: hegel_string_t,
) -> hegel_result_t {
    guard(ctx, || {
        let p = printer(p)?;
        if !options.is_null() {
            handles::get::<ReflowOptions, _>(options)?;
        }
        // SAFETY: the caller's view.
        let repr = unsafe { text::text(text_, "text")? };
        p.content(reflow::reflow(repr))
    })
}

/// Opens a hole at the handle's position; writes to the new handle land there.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_printer_deferred(
    ctx: *mut hegel_context_t,
    p: *mut hegel_printer_t,
    out_printer: *mut *mut hegel_printer_t,
) -> hegel_result_t {
    guard(ctx, || {
        let p = printer(p)?;
        require(out_printer, "out_printer")?;
        let target = {
            let _claim = p.claim()?;
            p.document.deferred(p.target).map_err(to_abi)?
        };
        hand_out(
            PrinterHandle {
                document: Arc::clone(&p.document),
                target,
                root: false,
                busy: AtomicBool::new(false),
                attribution: p.attribution.as_ref().map(|a| Attribution {
                    test_case: Arc::clone(&a.test_case),
                }),
            },
            out_printer,
        )
    })
}

/// Opens a speculative region.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_printer_begin_speculative(
    ctx: *mut hegel_context_t,
    p: *mut hegel_printer_t,
) -> hegel_result_t {
    guard(ctx, || {
        let p = printer(p)?;
        let _claim = p.claim()?;
        p.document.begin_speculative(p.target).map_err(to_abi)
    })
}

/// Keeps the innermost speculative region's content.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_printer_commit_speculative(
    ctx: *mut hegel_context_t,
    p: *mut hegel_printer_t,
) -> hegel_result_t {
    guard(ctx, || {
        let p = printer(p)?;
        let _claim = p.claim()?;
        p.document.commit_speculative(p.target).map_err(to_abi)
    })
}

/// Discards the innermost speculative region's content.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_printer_abort_speculative(
    ctx: *mut hegel_context_t,
    p: *mut hegel_printer_t,
) -> hegel_result_t {
    guard(ctx, || {
        let p = printer(p)?;
        let _claim = p.claim()?;
        p.document.abort_speculative(p.target).map_err(to_abi)
    })
}

fn require_root(p: &PrinterHandle, call: &str) -> AbiResult {
    if p.root {
        Ok(())
    } else {
        Err(AbiError::arg(format!(
            "{call} must be called on the document's root handle, not a deferred one"
        )))
    }
}

/// Splices the holes in and seals the document.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_printer_resolve(
    ctx: *mut hegel_context_t,
    p: *mut hegel_printer_t,
) -> hegel_result_t {
    guard(ctx, || {
        let p = printer(p)?;
        require_root(&p, "hegel_printer_resolve")?;
        p.document
            .resolve()
            .map_err(|e| AbiError::arg(e.to_string()))
    })
}

/// Whether the handle can still be written to.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_printer_is_live(
    ctx: *mut hegel_context_t,
    p: *mut hegel_printer_t,
    out_live: *mut bool,
) -> hegel_result_t {
    guard(ctx, || {
        let p = printer(p)?;
        let live = p.root || p.document.is_live(p.target);
        write(out_live, live, "out_live")
    })
}

/// Reads (and seals) the document.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_printer_value(
    ctx: *mut hegel_context_t,
    p: *mut hegel_printer_t,
    out_result: *mut hegel_printer_value_result_t,
) -> hegel_result_t {
    guard(ctx, || {
        let p = printer(p)?;
        require(out_result, "out_result")?;
        require_root(&p, "hegel_printer_value")?;
        let rendered = p
            .document
            .value()
            .map_err(|e| AbiError::arg(e.to_string()))?;
        let (data, len) = text::hand_out(rendered.into_bytes());
        write(
            out_result,
            hegel_printer_value_result_t {
                data: data.cast(),
                len,
            },
            "out_result",
        )
    })
}

/// Frees a rendered document and zeroes the struct.
#[unsafe(no_mangle)]
pub extern "C" fn hegel_printer_value_result_free(
    ctx: *mut hegel_context_t,
    result: *mut hegel_printer_value_result_t,
) -> hegel_result_t {
    guard(ctx, || {
        if result.is_null() {
            return Ok(());
        }
        // SAFETY: non-null, pointing at the caller's struct.
        let r = unsafe { &mut *result };
        text::take_back(r.data.cast(), r.len, "result")?;
        r.data = std::ptr::null_mut();
        r.len = 0;
        Ok(())
    })
}
