//! geist: property-based testing for Rust with Hypothesis-grade shrinking.
//!
//! A property is a function of a [`TestCase`] that draws values from
//! [generators] and panics when something is wrong. [`check`]
//! runs it on many generated test cases in-process, on geist's engine; when
//! one fails it shrinks the failure to a minimal example, replays it, and
//! panics with a report naming every drawn value, the notes, the original
//! panic and a line to reproduce it. The same properties run over the wire
//! against any Hegel server ([`Transport::Server`], or `GEIST_SERVER_COMMAND`).
//!
//! ```
//! use geist::generators as gs;
//! use geist::{Settings, TestCase, check};
//!
//! check(Settings::new().test_cases(100), |tc: &mut TestCase| {
//!     let xs: Vec<i64> = tc.draw(gs::vecs(gs::integers::<i64>()).max_size(10));
//!     let mut once = xs.clone();
//!     once.sort();
//!     let mut twice = once.clone();
//!     twice.sort();
//!     assert_eq!(once, twice);
//! });
//! ```

mod backend;
mod generate;
pub mod generators;
mod panic_capture;
mod runner;
mod settings;
pub mod stateful;
mod test_case;
pub mod transport;

pub use geist_database::DatabaseSetting;
pub use geist_engine::HealthCheck;
/// `#[geist::test]`: a property test run by [`check`]; `#[derive(Generate)]`:
/// a default generator for a struct or enum.
pub use geist_macros::{Generate, test};
pub use generate::Generate;
#[doc(hidden)]
pub use generate::private as __private;
pub use generators::{BoxedGenerator, Generator};
pub use runner::{RunSummary, check, run_property};
pub use settings::{DEFAULT_DATABASE, Settings, Verbosity};
pub use test_case::TestCase;
pub use transport::{ServerAddress, ServerCommand, Transport, WireError};
