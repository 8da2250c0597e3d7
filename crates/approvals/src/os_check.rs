//! The operating system's own check of the person (`presence: os`): Touch
//! ID, a paired watch or the login password, through LocalAuthentication on
//! macOS. One function; platforms without such a check say so, and a gate
//! that asks for `presence: verified` then takes a paired device's passkey
//! only.
//!
//! The macOS code is compiled and linted here (clippy for
//! `aarch64-apple-darwin`), never run: no test machine is a Mac.

/// Why the operating system did not confirm the person.
#[derive(Debug, thiserror::Error)]
pub enum OsCheckError {
    /// This platform has no such check.
    #[error("this platform has no operating-system check of the person")]
    Unavailable,
    /// The check failed, was cancelled, or cannot run (no passcode set).
    #[error("the operating system did not confirm the person: {0}")]
    Refused(String),
}

/// Asks the operating system to check the person at the machine, telling
/// them `reason`; `Ok` once they passed.
pub async fn check_person(reason: &str) -> Result<(), OsCheckError> {
    let answer = platform::start(reason)?;
    answer
        .await
        .unwrap_or_else(|_| Err(OsCheckError::Refused("no answer".into())))
}

#[cfg(target_os = "macos")]
mod platform {
    use std::sync::Mutex;

    use block2::RcBlock;
    use objc2::runtime::Bool;
    use objc2_foundation::{NSError, NSString};
    use objc2_local_authentication::{LAContext, LAPolicy};
    use tokio::sync::oneshot;

    use super::OsCheckError;

    /// Starts LocalAuthentication's check of the device's owner; the
    /// receiver gets its outcome. Nothing that is not `Send` outlives this.
    pub fn start(
        reason: &str,
    ) -> Result<oneshot::Receiver<Result<(), OsCheckError>>, OsCheckError> {
        let policy = LAPolicy::DeviceOwnerAuthentication;
        // SAFETY: a new context, used on this thread only until the reply.
        let context = unsafe { LAContext::new() };
        // SAFETY: `context` is a valid LAContext.
        unsafe { context.canEvaluatePolicy_error(policy) }
            .map_err(|e| OsCheckError::Refused(e.localizedDescription().to_string()))?;
        let (tell, answer) = oneshot::channel();
        let tell = Mutex::new(Some(tell));
        // The block keeps the context alive until LocalAuthentication
        // replies (on a thread of its own).
        let kept = context.clone();
        let reply = RcBlock::new(move |passed: Bool, error: *mut NSError| {
            let _ = &kept;
            let outcome = if passed.as_bool() {
                Ok(())
            } else {
                // SAFETY: LocalAuthentication passes a valid NSError, or null.
                let said = unsafe { error.as_ref() }.map_or_else(
                    || "refused".to_string(),
                    |e| e.localizedDescription().to_string(),
                );
                Err(OsCheckError::Refused(said))
            };
            if let Some(tell) = tell.lock().ok().and_then(|mut t| t.take()) {
                let _ = tell.send(outcome);
            }
        });
        // SAFETY: valid context, reason and block; the block is sendable
        // (it only sends on a channel).
        unsafe {
            context.evaluatePolicy_localizedReason_reply(
                policy,
                &NSString::from_str(reason),
                &reply,
            );
        }
        Ok(answer)
    }
}

#[cfg(not(target_os = "macos"))]
mod platform {
    use tokio::sync::oneshot;

    use super::OsCheckError;

    /// No such check here.
    pub fn start(
        _reason: &str,
    ) -> Result<oneshot::Receiver<Result<(), OsCheckError>>, OsCheckError> {
        Err(OsCheckError::Unavailable)
    }
}

#[cfg(all(test, not(target_os = "macos")))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn without_a_check_of_its_own_the_platform_says_so() {
        assert!(matches!(
            check_person("approve?").await,
            Err(OsCheckError::Unavailable)
        ));
    }
}
