//! Workflow files (`.lobster`, `.yaml`, `.yml`, `.json`).
pub mod cli;
pub mod resume;
