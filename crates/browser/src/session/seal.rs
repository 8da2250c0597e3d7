//! Session snapshots at rest: cookies and localStorage are logins, so the
//! copies in SQLite and in a profile's directory are sealed
//! (ChaCha20-Poly1305) with a key kept in the keychain (`browser-state-key`,
//! made on first use), never in clear.

use base64::Engine;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng};
use chacha20poly1305::{ChaCha20Poly1305, Nonce};

use super::state::StorageState;
use crate::{BrowserError, Result};

/// The keychain entry of the key.
pub const KEY_SECRET: &str = "browser-state-key";
/// What a sealed text starts with.
const PREFIX: &str = "sealed1:";

/// Seals and opens storage states with one key.
#[derive(Clone)]
pub struct Sealer {
    cipher: ChaCha20Poly1305,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer")
    }
}

fn b64() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::STANDARD
}

impl Sealer {
    /// The home's key, from the keychain (made on first use).
    pub fn for_home(home: &std::path::Path) -> Result<Sealer> {
        Sealer::for_home_with(home, true)
    }

    /// The home's key, from the keychain when `keychain`, else from the
    /// home's secret files.
    pub fn for_home_with(home: &std::path::Path, keychain: bool) -> Result<Sealer> {
        let secrets = if keychain {
            clawdis_secrets::Secrets::new(home)
        } else {
            clawdis_secrets::Secrets::files_only(home)
        };
        let (key, _) = secrets
            .get_or_create(KEY_SECRET, || {
                b64().encode(ChaCha20Poly1305::generate_key(&mut OsRng))
            })
            .map_err(|e| BrowserError::Io(format!("the session key: {e}")))?;
        Sealer::from_key(&key)
    }

    fn from_key(key: &str) -> Result<Sealer> {
        let cipher = b64()
            .decode(key.trim())
            .ok()
            .and_then(|b| ChaCha20Poly1305::new_from_slice(&b).ok())
            .ok_or_else(|| {
                BrowserError::Io(format!("the keychain's {KEY_SECRET} is not a 32-byte key"))
            })?;
        Ok(Sealer { cipher })
    }

    /// The state, sealed.
    pub fn seal(&self, state: &StorageState) -> String {
        let nonce = ChaCha20Poly1305::generate_nonce(&mut OsRng);
        let sealed = self
            .cipher
            .encrypt(&nonce, state.to_json().as_bytes())
            .unwrap_or_default();
        let mut out = nonce.to_vec();
        out.extend(sealed);
        format!("{PREFIX}{}", b64().encode(out))
    }

    /// A sealed state opened; anything that does not open (another key, a
    /// damaged file) is an empty state, with a warning.
    pub fn open(&self, text: &str) -> StorageState {
        if text.trim().is_empty() || text.trim() == "{}" {
            return StorageState::default();
        }
        let opened = text
            .strip_prefix(PREFIX)
            .and_then(|b| b64().decode(b.trim()).ok())
            .filter(|bytes| bytes.len() > 12)
            .and_then(|bytes| {
                let (nonce, sealed) = bytes.split_at(12);
                let nonce: [u8; 12] = nonce.try_into().ok()?;
                self.cipher.decrypt(&Nonce::from(nonce), sealed).ok()
            });
        match opened.and_then(|plain| String::from_utf8(plain).ok()) {
            Some(json) => StorageState::parse(&json),
            None => {
                tracing::warn!(
                    "a session snapshot does not open with this home's key; starting it empty"
                );
                StorageState::default()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seals_and_opens() {
        let key = b64().encode([7u8; 32]);
        let s = Sealer::from_key(&key).unwrap();
        let state = StorageState {
            cookies: vec![serde_json::json!({ "name": "sid", "value": "secret-session" })],
            origins: Vec::new(),
        };
        let sealed = s.seal(&state);
        assert!(
            sealed.starts_with(PREFIX) && !sealed.contains("secret-session"),
            "{sealed}"
        );
        assert_ne!(sealed, s.seal(&state), "a fresh nonce each time");
        assert_eq!(s.open(&sealed), state);
        let other = Sealer::from_key(&b64().encode([8u8; 32])).unwrap();
        assert_eq!(other.open(&sealed), StorageState::default());
        assert_eq!(s.open("garbage"), StorageState::default());
        assert!(Sealer::from_key("short").is_err());
    }
}
