//! The only places the browser may read uploads from and write downloads
//! to: `<home>/uploads` and `<home>/downloads`. Paths are taken relative to
//! the root (or absolute inside it); `..` and symlinks out of it are refused.

use std::path::{Component, Path, PathBuf};

use crate::{BrowserError, Result};

/// Files the browser may upload.
pub fn upload_root(home: &Path) -> PathBuf {
    home.join("uploads")
}

/// Files a browser session may upload (`upload` actions).
pub fn session_upload_root(home: &Path) -> PathBuf {
    home.join("browser").join("uploads")
}

/// Where downloads are saved.
pub fn download_root(home: &Path) -> PathBuf {
    home.join("downloads")
}

fn escape(requested: &str, root: &Path) -> BrowserError {
    BrowserError::invalid(format!(
        "path {requested} is outside {}; use a path inside it",
        root.display()
    ))
}

/// `requested` inside `root`, lexically: no `..`, and absolute paths must
/// already be under the root.
fn inside(root: &Path, requested: &str) -> Result<PathBuf> {
    let p = Path::new(requested.trim());
    if requested.trim().is_empty() {
        return Err(BrowserError::invalid("path is required"));
    }
    if p.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(escape(requested, root));
    }
    let full = if p.is_absolute() {
        p.to_path_buf()
    } else {
        root.join(p)
    };
    let real_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let under = |r: &Path| full.starts_with(r) && full != r;
    if !under(root) && !under(&real_root) {
        return Err(escape(requested, root));
    }
    Ok(full)
}

fn canonical_root(root: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(root)?;
    Ok(root.canonicalize()?)
}

/// An existing file under the upload root, as an absolute path.
pub fn upload_file(home: &Path, requested: &str) -> Result<PathBuf> {
    file_under(&upload_root(home), requested)
}

/// An existing file under `root`, as an absolute path.
pub fn file_under(root: &Path, requested: &str) -> Result<PathBuf> {
    let root = root.to_path_buf();
    let full = inside(&root, requested)?;
    let real = full
        .canonicalize()
        .map_err(|_| BrowserError::Missing(format!("no such file to upload: {requested}")))?;
    if !real.starts_with(canonical_root(&root)?) {
        return Err(escape(requested, &root));
    }
    if !real.is_file() {
        return Err(BrowserError::invalid(format!("not a file: {requested}")));
    }
    Ok(real)
}

/// Where a download named `requested` goes; its directory is created inside
/// the download root.
pub fn download_target(home: &Path, requested: &str) -> Result<PathBuf> {
    let root = canonical_root(&download_root(home))?;
    let full = inside(&download_root(home), requested)?;
    let parent = full.parent().unwrap_or(&root);
    std::fs::create_dir_all(parent)?;
    let real_parent = parent.canonicalize()?;
    if !real_parent.starts_with(&root) {
        return Err(escape(requested, &root));
    }
    let name = full.file_name().ok_or_else(|| escape(requested, &root))?;
    Ok(real_parent.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uploads_stay_inside_the_root() {
        let home = tempfile::tempdir().unwrap();
        let root = upload_root(home.path());
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("a.txt"), "a").unwrap();
        std::fs::write(home.path().join("secret"), "s").unwrap();
        assert!(
            upload_file(home.path(), "a.txt")
                .unwrap()
                .ends_with("uploads/a.txt")
        );
        let abs = root.join("a.txt").display().to_string();
        assert!(upload_file(home.path(), &abs).is_ok());
        for bad in ["../secret", "/etc/passwd", "", "missing.txt"] {
            assert!(upload_file(home.path(), bad).is_err(), "{bad}");
        }
        std::os::unix::fs::symlink(home.path().join("secret"), root.join("link")).unwrap();
        assert!(
            upload_file(home.path(), "link").is_err(),
            "symlink out of the root"
        );
    }

    #[test]
    fn downloads_stay_inside_the_root() {
        let home = tempfile::tempdir().unwrap();
        let t = download_target(home.path(), "sub/x.bin").unwrap();
        assert!(t.ends_with("downloads/sub/x.bin"));
        for bad in ["../x", "/tmp/x", "a/../../x", ""] {
            assert!(download_target(home.path(), bad).is_err(), "{bad}");
        }
    }
}
