//! Embeds `tauri.conf.json` (top level, beside this package's manifest) and
//! the UI when the desktop app is built.

fn main() {
    #[cfg(feature = "desktop")]
    tauri_build::build();
}
