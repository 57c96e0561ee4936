//! Standard output that a closed pipe ends quietly.
//!
//! `println!` panics when standard output is closed (`geist vectors check DIR |
//! head -1`). Every line goes through [`write`] instead, which returns the
//! error; `main` recognises a broken pipe anywhere in an error's chain and
//! exits with status 1 without a message (the reader stopped listening, so
//! there is nobody to tell).

use std::io::Write as _;

/// Writes formatted text to standard output.
pub fn write(args: std::fmt::Arguments<'_>) -> std::io::Result<()> {
    std::io::stdout().lock().write_fmt(args)
}

/// Whether an error comes from writing to a closed pipe.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Like `println!`, returning the I/O error instead of panicking.
macro_rules! outln {
    () => {
        $crate::output::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// Like `print!`, returning the I/O error instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write(format_args!($($arg)*))
    };
}
