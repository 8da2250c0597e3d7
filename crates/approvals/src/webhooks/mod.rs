//! Webhooks: each event a workflow's `webhooks:` block or the settings'
//! global webhooks ask for, sent signed as the Standard Webhooks
//! specification says, from the durable outbox in the store.
//!
//! The store's triggers record every pause, decision and run end as an
//! event in the same transaction as the change, whichever process made it
//! (a `lobster` run, the app, the backend). [`Webhooks::run`], in the
//! backend, turns each event into deliveries, one per receiver, and sends
//! them: each delivery keeps its `webhook-id` across retries, and every
//! attempt is recorded. A receiver that hangs or fails holds up only its
//! own delivery, never a run.

mod payload;
mod send;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use clawdis_store::{Delivery, DeliveryAttempt};
use tokio::sync::{Notify, Semaphore};
use tracing::Instrument as _;

use crate::settings::ServiceSettings;
use crate::watch::file_stamp;
use crate::{ApprovalLinks, Approvals, ApprovalsError};

/// The name of the signing secret among the home's secrets.
pub const SECRET_NAME: &str = "webhook-secret";

/// How often the sender looks for work when nothing wakes it: events from
/// other processes (a `lobster` pausing a run) are sent within this.
const POLL: Duration = Duration::from_millis(50);

/// How many attempts are in flight at once.
const IN_FLIGHT: usize = 16;

/// How long a leased delivery stays with its sender before another look
/// takes it again (a sender that hangs past its attempt's timeout).
const LEASE: Duration = Duration::from_secs(30);

/// The signing secret of `home` (`whsec_` and 32 random bytes in base64),
/// created on first use and kept in the keychain.
pub fn secret(home: &Path) -> Result<String, ApprovalsError> {
    let (secret, _) = clawdis_secrets::Secrets::new(home)
        .get_or_create(SECRET_NAME, || format!("whsec_{}", crate::new_key_base64()))
        .map_err(|e| ApprovalsError::Invalid(format!("webhook secret: {e}")))?;
    Ok(secret)
}

/// The webhook sender of one home.
pub struct Webhooks {
    approvals: Arc<Approvals>,
    settings: ServiceSettings,
    links: Option<Arc<ApprovalLinks>>,
    signer: standardwebhooks::Webhook,
    agent: ureq::Agent,
    wake: Notify,
    slots: Arc<Semaphore>,
}

impl std::fmt::Debug for Webhooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhooks")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// A delivery with each of its attempts.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DeliveryDetail {
    /// The delivery.
    #[serde(flatten)]
    pub delivery: Delivery,
    /// Its attempts, first first.
    pub history: Vec<DeliveryAttempt>,
}

impl Webhooks {
    /// The sender for `approvals`' store, with `settings`, the signing
    /// `secret` (`whsec_…`) and, where `publicBaseUrl` is set, the signer
    /// of approval links.
    pub fn new(
        approvals: Arc<Approvals>,
        settings: ServiceSettings,
        secret: &str,
        links: Option<Arc<ApprovalLinks>>,
    ) -> Result<Arc<Webhooks>, ApprovalsError> {
        let signer = standardwebhooks::Webhook::new(secret)
            .map_err(|e| ApprovalsError::Invalid(format!("webhook secret: {e}")))?;
        Ok(Arc::new(Webhooks {
            approvals,
            settings,
            links,
            signer,
            agent: send::agent(),
            wake: Notify::new(),
            slots: Arc::new(Semaphore::new(IN_FLIGHT)),
        }))
    }

    /// Looks at the outbox now rather than at the next poll (a run in this
    /// process changed).
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Sends deliveries until the last handle is dropped. Deliveries a
    /// killed sender had taken are due again at once.
    pub async fn run(self: Arc<Self>) {
        tracing::info!("webhook sender started");
        match self.approvals.store().release_dead_leases().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(n, "deliveries a killed sender had taken are due again"),
            Err(e) => tracing::warn!(error = %e, "webhooks: releasing leases"),
        }
        let weak = Arc::downgrade(&self);
        drop(self);
        // Between looks, only a commit (the database's stamp), a wake-up or
        // the next delivery's due time gives work; otherwise nothing is read.
        let mut stamp = None;
        let mut woken = true;
        let mut next_due: Option<String> = None;
        loop {
            let Some(this) = weak.upgrade() else { return };
            let now_stamp = file_stamp(this.approvals.store().path());
            let changed = woken || now_stamp.is_none() || now_stamp != stamp;
            stamp = now_stamp;
            let due = next_due
                .as_deref()
                .is_some_and(|at| at <= clawdis_store::now_iso().as_str());
            if changed && let Err(e) = this.fan_out().await {
                tracing::warn!(error = %e, "webhooks: turning events into deliveries");
            }
            if changed || due {
                if let Err(e) = this.send_due().await {
                    tracing::warn!(error = %e, "webhooks: sending");
                }
                match this.approvals.store().next_delivery_due().await {
                    Ok(next) => next_due = next,
                    Err(e) => tracing::warn!(error = %e, "webhooks: reading the outbox"),
                }
            }
            woken = tokio::time::timeout(POLL, this.wake.notified())
                .await
                .is_ok();
        }
    }

    /// Turns every recorded event into its deliveries.
    async fn fan_out(&self) -> Result<(), ApprovalsError> {
        let store = self.approvals.store();
        loop {
            let events = store.pending_events(64).await?;
            if events.is_empty() {
                return Ok(());
            }
            for event in &events {
                let deliveries =
                    payload::deliveries_for(&self.approvals, &self.settings, event).await?;
                tracing::debug!(seq = event.seq, kind = %event.kind, n = deliveries.len(), "event");
                store.fan_out(event.seq, &deliveries).await?;
            }
        }
    }

    /// Starts an attempt of each due delivery, as many as there are free
    /// slots.
    async fn send_due(self: &Arc<Self>) -> Result<(), ApprovalsError> {
        let free = self.slots.available_permits();
        if free == 0 {
            return Ok(());
        }
        let due = self
            .approvals
            .store()
            .lease_due(
                &clawdis_store::now_iso(),
                &clawdis_store::iso_after(LEASE),
                u32::try_from(free).unwrap_or(1),
            )
            .await?;
        for delivery in due {
            let Ok(permit) = self.slots.clone().try_acquire_owned() else {
                break;
            };
            let this = self.clone();
            let span = tracing::info_span!("webhook", id = %delivery.id, kind = %delivery.kind);
            tokio::spawn(
                async move {
                    this.deliver(delivery).await;
                    drop(permit);
                    this.wake();
                }
                .instrument(span),
            );
        }
        Ok(())
    }

    /// One attempt of `delivery`, recorded with what it comes to.
    async fn deliver(self: &Arc<Self>, delivery: Delivery) {
        let this = self.clone();
        let body = self.body_of(&delivery);
        let sent = tokio::task::spawn_blocking(move || {
            let attempt = send::attempt(&this.agent, &this.signer, &delivery, body.as_bytes());
            (delivery, attempt)
        })
        .await;
        let Ok((delivery, attempt)) = sent else {
            tracing::error!("a webhook attempt panicked");
            return;
        };
        let end = send::end_of(&delivery, &attempt, self.settings.webhook_retry);
        tracing::info!(
            attempt = attempt.attempt,
            status = ?attempt.status_code,
            error = ?attempt.error,
            ?end,
            "webhook attempt"
        );
        if let Err(e) = self
            .approvals
            .store()
            .record_attempt(&delivery.id, &attempt, &end)
            .await
        {
            tracing::error!(error = %e, "recording a webhook attempt");
        }
    }

    /// What an attempt of `delivery` sends: its stored body, with a link to
    /// its gate signed now as `data.approvalUrl` (a hand-off's live view as
    /// `data.handoffUrl`) where it has one (the store never holds a usable
    /// link).
    fn body_of(&self, delivery: &Delivery) -> String {
        let (Some(link), Some(links), Some(base)) =
            (&delivery.link, &self.links, &self.settings.public_base_url)
        else {
            return delivery.payload_json.clone();
        };
        let Ok(mut body) = serde_json::from_str::<serde_json::Value>(&delivery.payload_json) else {
            return delivery.payload_json.clone();
        };
        let token = links.sign(&link.gate, link.expires_at.as_deref());
        // A hand-off's link opens its live view; an approval's, its page.
        let (key, route) = if delivery.kind == "handoff.requested" {
            ("handoffUrl", "handoff")
        } else {
            ("approvalUrl", "approve")
        };
        if let Some(data) = body
            .get_mut("data")
            .and_then(serde_json::Value::as_object_mut)
        {
            data.insert(
                key.into(),
                serde_json::Value::String(format!(
                    "{}/{route}/{token}",
                    base.trim_end_matches('/')
                )),
            );
        }
        body.to_string()
    }

    /// The most recent deliveries, newest first.
    pub async fn deliveries(&self, limit: u32) -> Result<Vec<Delivery>, ApprovalsError> {
        Ok(self.approvals.store().list_deliveries(limit).await?)
    }

    /// Delivery `id` with its attempts.
    pub async fn delivery(&self, id: &str) -> Result<DeliveryDetail, ApprovalsError> {
        let store = self.approvals.store();
        let delivery = store
            .get_delivery(id)
            .await?
            .ok_or_else(|| ApprovalsError::NotFound(format!("no webhook delivery {id}")))?;
        let history = store.delivery_attempts(id).await?;
        Ok(DeliveryDetail { delivery, history })
    }

    /// Sends delivery `id` again, now, with its id and body unchanged and a
    /// fresh set of attempts.
    pub async fn redeliver(&self, id: &str) -> Result<Delivery, ApprovalsError> {
        let delivery = self
            .approvals
            .store()
            .redeliver(id)
            .await?
            .ok_or_else(|| ApprovalsError::NotFound(format!("no webhook delivery {id}")))?;
        self.wake();
        Ok(delivery)
    }
}
