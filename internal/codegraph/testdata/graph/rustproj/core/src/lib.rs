//! A library crate of the workspace (grep-like naming: crate dir "core").
pub mod matcher;

pub use self::matcher::Matcher;

pub fn version() -> &'static str {
    "1.0"
}
