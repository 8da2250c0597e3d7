//! Who is calling. The owner presents the control token (`clawdis token`);
//! everyone else presents a named token with a role (`clawdis token create`),
//! kept in the store as a SHA-256 digest only. Identity comes from the
//! credential, never from a field the caller fills in.

use clawdis_store::{Issuer, Presence, Role, Store, StoreError};
use sha2::{Digest, Sha256};

/// A caller, as its credential names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Principal {
    /// The control token's holder.
    Owner,
    /// A named token.
    Token {
        /// The token's name.
        name: String,
        /// What it may do.
        role: Role,
    },
    /// An agent on `clawdis mcp` (the MCP server over stdio), named by its
    /// client. It holds no token of its own and is always an agent: the
    /// name is a label, never a grant.
    McpClient {
        /// The client's name from its `clientInfo`.
        client: String,
    },
}

impl Principal {
    /// How the credential shows a person is there: an approver token
    /// (`token`). The owner token is not proof of a person (agents are
    /// often given it), nor is an agent token or an MCP client.
    pub fn presence(&self) -> Option<Presence> {
        matches!(
            self,
            Principal::Token {
                role: Role::Approver,
                ..
            }
        )
        .then_some(Presence::Token)
    }

    /// How runs and decisions record it: `owner` or `token:<name>`.
    pub fn label(&self) -> String {
        match self {
            Principal::Owner => "owner".to_string(),
            Principal::Token { name, .. } => format!("token:{name}"),
            Principal::McpClient { client } => format!("mcp:{client}"),
        }
    }
}

/// Why a token could not be created.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// The name is empty, too long or has characters outside `A-Z a-z 0-9 . _ -`.
    #[error("a token name is 1 to 64 of A-Z a-z 0-9 . _ - (got {0:?})")]
    BadName(String),
    /// A token (live or revoked) already has this name.
    #[error("a token named {0:?} exists already")]
    Taken(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The hex SHA-256 digest a token is kept as. Tokens are 244 random bits,
/// so a fast digest is enough: there is nothing to guess.
pub fn digest(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether `name` may name a token: 1 to 64 of `A-Z a-z 0-9 . _ -`.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// Creates a token named `name` with `role`, issued by `issuer`, and
/// returns it: the only time it is seen in clear. An approver token is
/// made only once a person confirmed it (see [`crate::requests`]).
pub async fn create_token(
    store: &Store,
    name: &str,
    role: Role,
    issuer: &Issuer,
) -> Result<String, TokenError> {
    if !valid_name(name) {
        return Err(TokenError::BadName(name.to_string()));
    }
    let token = format!(
        "clawdis_{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    if !store
        .insert_token(name, role, &digest(&token), issuer)
        .await?
    {
        return Err(TokenError::Taken(name.to_string()));
    }
    Ok(token)
}

/// The principal a presented named token belongs to, if it is live.
pub async fn named(store: &Store, presented: &str) -> Result<Option<Principal>, StoreError> {
    Ok(store
        .token_by_digest(&digest(presented))
        .await?
        .map(|t| Principal::Token {
            name: t.name,
            role: t.role,
        }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_is_hex_sha256() {
        assert_eq!(
            digest("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[tokio::test]
    async fn a_created_token_names_its_principal_until_revoked() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_dir(dir.path()).await.unwrap();
        let token = create_token(&store, "ci-agent", Role::Agent, &Issuer::cli())
            .await
            .unwrap();
        assert_eq!(
            named(&store, &token).await.unwrap(),
            Some(Principal::Token {
                name: "ci-agent".into(),
                role: Role::Agent
            })
        );
        assert!(matches!(
            create_token(&store, "ci-agent", Role::Approver, &Issuer::cli()).await,
            Err(TokenError::Taken(_))
        ));
        for bad in ["", "has space", "x/y", &"n".repeat(65)] {
            assert!(matches!(
                create_token(&store, bad, Role::Agent, &Issuer::cli()).await,
                Err(TokenError::BadName(_))
            ));
        }
        assert_eq!(named(&store, "clawdis_wrong").await.unwrap(), None);
        store
            .revoke_token("ci-agent", &Issuer::cli())
            .await
            .unwrap();
        assert_eq!(named(&store, &token).await.unwrap(), None);
    }
}
