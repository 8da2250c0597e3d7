//! The control token: generated on first start and kept in a 0600 file in
//! the Clawdis home (the OS keychain comes with the desktop shell).

use std::path::Path;

/// The token file name.
const TOKEN_FILE: &str = "control-token";

/// Reads the control token, creating it on first use.
pub fn control_token(home: &Path) -> std::io::Result<String> {
    let path = home.join(TOKEN_FILE);
    if let Ok(existing) = std::fs::read_to_string(&path) {
        let t = existing.trim();
        if !t.is_empty() {
            return Ok(t.to_string());
        }
    }
    std::fs::create_dir_all(home)?;
    let token = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    use std::io::Write;
    opts.open(&path)?.write_all(token.as_bytes())?;
    Ok(token)
}
