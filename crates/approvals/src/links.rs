//! Signed approval links: what a webhook carries instead of a token when
//! the user set `publicBaseUrl`. A link names one gate, expires, and
//! decides once; its signature (HMAC-SHA256 under a key kept in the
//! keychain) is the only credential it needs. Opening it only shows the
//! gate; the form on that page decides.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde::{Deserialize, Serialize};

use crate::{Approvals, ApprovalsError, Channel, Choice, Decider};

/// The name of the signing key among the home's secrets.
pub const KEY_NAME: &str = "approval-link-key";

/// How long a link lasts when its gate does not expire sooner.
pub const LIFETIME: Duration = Duration::from_secs(72 * 3_600);

/// What a link says: the gate, until when, and the nonce that spends it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkClaim {
    /// The gate's state key.
    #[serde(rename = "k")]
    pub state_key: String,
    /// When the link stops working (Unix seconds).
    #[serde(rename = "e")]
    pub expires: i64,
    /// Names this link among the gate's links; spent on use.
    #[serde(rename = "n")]
    pub nonce: String,
}

/// The signer and checker of one home's links.
pub struct ApprovalLinks {
    key: Vec<u8>,
}

impl std::fmt::Debug for ApprovalLinks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApprovalLinks")
    }
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

impl ApprovalLinks {
    /// The links of `home`, their key created on first use.
    pub fn open(home: &Path) -> Result<ApprovalLinks, ApprovalsError> {
        let (key, _) = clawdis_secrets::Secrets::new(home)
            .get_or_create(KEY_NAME, crate::new_key_base64)
            .map_err(|e| ApprovalsError::Invalid(format!("approval link key: {e}")))?;
        let key = STANDARD
            .decode(key.trim())
            .map_err(|e| ApprovalsError::Invalid(format!("approval link key: {e}")))?;
        Ok(ApprovalLinks { key })
    }

    /// A link token for gate `state_key`, which expires with the gate
    /// (`expires_at`, RFC 3339) or after [`LIFETIME`], whichever is first.
    pub fn sign(&self, state_key: &str, expires_at: Option<&str>) -> String {
        let mut expires = unix_now().saturating_add(LIFETIME.as_secs() as i64);
        if let Some(gate) = expires_at.and_then(|at| chrono::DateTime::parse_from_rfc3339(at).ok())
        {
            expires = expires.min(gate.timestamp());
        }
        let claim = LinkClaim {
            state_key: state_key.to_string(),
            expires,
            nonce: uuid::Uuid::new_v4().simple().to_string(),
        };
        let body = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claim).unwrap_or_default());
        let mac = hmac_sha256::HMAC::mac(body.as_bytes(), &self.key);
        format!("{body}.{}", URL_SAFE_NO_PAD.encode(mac))
    }

    /// What `token` says, if this home signed it and it has not expired.
    pub fn verify(&self, token: &str) -> Result<LinkClaim, ApprovalsError> {
        let invalid = || ApprovalsError::Forbidden("this approval link is not valid".into());
        let (body, mac) = token.split_once('.').ok_or_else(invalid)?;
        let mac = URL_SAFE_NO_PAD.decode(mac).map_err(|_| invalid())?;
        let expected = hmac_sha256::HMAC::mac(body.as_bytes(), &self.key);
        let same = mac.len() == expected.len()
            && mac
                .iter()
                .zip(expected)
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0;
        if !same {
            return Err(invalid());
        }
        let claim: LinkClaim = URL_SAFE_NO_PAD
            .decode(body)
            .ok()
            .and_then(|json| serde_json::from_slice(&json).ok())
            .ok_or_else(invalid)?;
        if claim.expires <= unix_now() {
            return Err(ApprovalsError::Gone(
                "this approval link has expired".into(),
            ));
        }
        Ok(claim)
    }

    /// Decides the gate `token` names with `choice` (approve or deny), as
    /// a person through the link, and spends the link: it decides once.
    pub async fn decide(
        &self,
        approvals: &Approvals,
        token: &str,
        choice: Choice,
        comment: Option<String>,
        seen: Option<String>,
    ) -> Result<serde_json::Value, ApprovalsError> {
        let claim = self.verify(token)?;
        if !matches!(choice, Choice::Approve | Choice::Deny) {
            return Err(ApprovalsError::Invalid(
                "an approval link approves or denies".into(),
            ));
        }
        // A link by itself shows no person: it never approves a gate that
        // needs one, and such an attempt leaves the link unspent (the
        // person may still deny through it).
        let by = format!("link:{}", &claim.nonce[..8]);
        let gate = approvals.get(&claim.state_key).await?;
        if choice == Choice::Approve && gate.needs_a_person() {
            let refused = clawdis_store::NewAuditEntry {
                kind: "gate.refused".into(),
                subject: gate
                    .approval_id
                    .clone()
                    .unwrap_or_else(|| gate.run_id.clone()),
                by: Some(by),
                via: Some(Channel::Link.as_str().to_string()),
                presence: None,
                digest: None,
            };
            approvals.store().record_audit(&refused).await?;
            return Err(ApprovalsError::Forbidden(
                "a link by itself cannot approve this gate (approvers: human): approve it in the \
                 Clawdis app or its notification, or with a paired device's passkey in the inbox \
                 (/inbox); the link may still deny it"
                    .into(),
            ));
        }
        // A gate changed since the page showed it leaves the link unspent:
        // the person looks again.
        if choice == Choice::Approve && seen.as_ref().is_some_and(|d| *d != gate.digest) {
            return Err(ApprovalsError::Stale(
                "this approval changed since the page showed it: open the link again".into(),
            ));
        }
        let decider = Decider {
            by: Some(by),
            via: Channel::Link,
            // A link proves only that someone holds it: it may deny a
            // `human` gate, never approve one.
            presence: None,
            seen,
            comment,
        };
        spend_and_decide(approvals, &claim, choice, decider).await
    }

    /// Approves the gate `token` names as paired device `device`, whose
    /// passkey assertion the caller verified for exactly this gate and
    /// `digest`, and spends the link.
    pub async fn approve_as_device(
        &self,
        approvals: &Approvals,
        token: &str,
        device: &str,
        digest: String,
    ) -> Result<serde_json::Value, ApprovalsError> {
        let claim = self.verify(token)?;
        let decider = Decider::device(device, Some(digest), None);
        spend_and_decide(approvals, &claim, Choice::Approve, decider).await
    }
}

impl ApprovalLinks {
    /// Ends the hand-off `token` opens, as the person at its live view:
    /// `done` approves its gate (they hand the page back), else denies it
    /// (they decline). `device` is the paired device signed in to a view
    /// opened from afar (presence `passkey`); on this machine the link is
    /// the credential (presence `click`): a hand-off's Done authorizes no
    /// effect, it only gives the page back to the agent. Spends the link.
    pub async fn hand_back(
        &self,
        approvals: &Approvals,
        token: &str,
        done: bool,
        device: Option<&str>,
    ) -> Result<serde_json::Value, ApprovalsError> {
        let claim = self.verify(token)?;
        let gate = approvals.get(&claim.state_key).await?;
        if !gate.is_handoff() {
            return Err(ApprovalsError::Forbidden(
                "this link is not a hand-off's".into(),
            ));
        }
        let decider = match device {
            Some(device) => Decider::device(device, None, None),
            None => Decider {
                by: Some(format!("link:{}", &claim.nonce[..8])),
                via: Channel::Link,
                presence: Some(clawdis_store::Presence::Click),
                seen: None,
                comment: None,
            },
        };
        let choice = if done { Choice::Approve } else { Choice::Deny };
        spend_and_decide(approvals, &claim, choice, decider).await
    }
}

/// Spends the link of `claim`, then decides its gate: a link decides once.
async fn spend_and_decide(
    approvals: &Approvals,
    claim: &LinkClaim,
    choice: Choice,
    decider: Decider,
) -> Result<serde_json::Value, ApprovalsError> {
    if !approvals
        .store()
        .spend_link(&claim.nonce, &claim.state_key)
        .await?
    {
        return Err(ApprovalsError::Gone(
            "this approval link was already used".into(),
        ));
    }
    approvals.decide(&claim.state_key, choice, decider).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links() -> ApprovalLinks {
        ApprovalLinks {
            key: b"0123456789abcdef0123456789abcdef".to_vec(),
        }
    }

    #[test]
    fn a_link_verifies_until_it_expires_and_not_when_altered() {
        let l = links();
        let token = l.sign("workflow_resume_1", None);
        let claim = l.verify(&token).unwrap();
        assert_eq!(claim.state_key, "workflow_resume_1");
        assert!(claim.expires > unix_now());
        // The gate's own expiry comes first.
        let soon = l.sign("k", Some("2001-01-01T00:00:00Z"));
        assert!(matches!(l.verify(&soon), Err(ApprovalsError::Gone(_))));
        // Another key, another gate, a cut token: not valid.
        let other = ApprovalLinks {
            key: b"another key".to_vec(),
        };
        assert!(matches!(
            other.verify(&token),
            Err(ApprovalsError::Forbidden(_))
        ));
        let (body, mac) = token.split_once('.').unwrap();
        let forged = URL_SAFE_NO_PAD.encode(
            String::from_utf8(URL_SAFE_NO_PAD.decode(body).unwrap())
                .unwrap()
                .replace("workflow_resume_1", "workflow_resume_2"),
        );
        for bad in [format!("{forged}.{mac}"), body.to_string(), String::new()] {
            assert!(
                matches!(l.verify(&bad), Err(ApprovalsError::Forbidden(_))),
                "{bad}"
            );
        }
    }
}
