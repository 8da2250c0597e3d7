//! The Clawdis workflow engine: a Rust reimplementation of OpenClaw's Lobster.
pub mod error;
pub mod parser;
pub mod value;
