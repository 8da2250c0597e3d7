//! One signed attempt of a delivery, and when to try again.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clawdis_store::{AttemptEnd, Delivery, DeliveryAttempt};

use crate::settings::WebhookRetry;

/// How long a receiver has to answer an attempt.
pub(super) const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest wait between two attempts, however many came before.
const MAX_DELAY: Duration = Duration::from_secs(3_600);

/// How much of a receiver's answer is kept in `lastError`.
const ERROR_BODY_CHARS: usize = 200;

/// The HTTP client of every attempt: no redirects (a receiver that moved
/// has failed), a bounded wait, statuses as answers rather than errors.
pub(super) fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(ATTEMPT_TIMEOUT))
        .build()
        .into()
}

/// Posts `body` as `delivery` once, signed with `signer` as the Standard
/// Webhooks specification says, and records nothing: the caller does.
pub(super) fn attempt(
    agent: &ureq::Agent,
    signer: &standardwebhooks::Webhook,
    delivery: &Delivery,
    body: &[u8],
) -> DeliveryAttempt {
    let started = Instant::now();
    let at = clawdis_store::now_iso();
    let timestamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let (status_code, error) = match signer.sign(&delivery.id, timestamp, body) {
        Err(e) => (None, Some(format!("signing: {e}"))),
        Ok(signature) => post(agent, delivery, body, timestamp, &signature),
    };
    DeliveryAttempt {
        attempt: delivery.attempts + 1,
        at,
        status_code,
        error,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    }
}

fn post(
    agent: &ureq::Agent,
    delivery: &Delivery,
    body: &[u8],
    timestamp: i64,
    signature: &str,
) -> (Option<u16>, Option<String>) {
    let sent = agent
        .post(&delivery.url)
        .header("content-type", "application/json")
        .header("user-agent", concat!("clawdis/", env!("CARGO_PKG_VERSION")))
        .header("webhook-id", &delivery.id)
        .header("webhook-timestamp", &timestamp.to_string())
        .header("webhook-signature", signature)
        .send(body);
    match sent {
        Err(e) => (None, Some(e.to_string())),
        Ok(mut response) => {
            let status = response.status();
            if status.is_success() {
                return (Some(status.as_u16()), None);
            }
            let body = response
                .body_mut()
                .with_config()
                .limit(64 * 1024)
                .lossy_utf8(true)
                .read_to_string()
                .unwrap_or_default();
            let body: String = body.trim().chars().take(ERROR_BODY_CHARS).collect();
            let error = if body.is_empty() {
                format!("HTTP {}", status.as_u16())
            } else {
                format!("HTTP {}: {body}", status.as_u16())
            };
            (Some(status.as_u16()), Some(error))
        }
    }
}

/// What `attempt` of `delivery` comes to under `retry`.
pub(super) fn end_of(
    delivery: &Delivery,
    attempt: &DeliveryAttempt,
    retry: WebhookRetry,
) -> AttemptEnd {
    if attempt.error.is_none() {
        return AttemptEnd::Delivered;
    }
    let made = attempt.attempt.saturating_sub(delivery.budget_from);
    if made >= retry.max_attempts {
        return AttemptEnd::GiveUp;
    }
    AttemptEnd::Retry(clawdis_store::iso_after(backoff(retry, made)))
}

/// The wait after the `made`th failed attempt: `firstDelayMs` doubled for
/// each attempt before it, between half and all of that (jitter, so that
/// receivers coming back are not hit by every delivery at once).
pub(super) fn backoff(retry: WebhookRetry, made: u32) -> Duration {
    let doubled = Duration::from_millis(retry.first_delay_ms)
        .saturating_mul(1u32 << made.saturating_sub(1).min(20))
        .min(MAX_DELAY);
    let unit = f64::from(uuid::Uuid::new_v4().as_u128() as u32) / f64::from(u32::MAX);
    doubled / 2 + doubled.mul_f64(0.5 * unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_and_stops_at_the_cap() {
        let retry = WebhookRetry {
            first_delay_ms: 1_000,
            max_attempts: 8,
        };
        for made in 1..=6u32 {
            let full = Duration::from_millis(1_000 * (1 << (made - 1)));
            let wait = backoff(retry, made);
            assert!(wait >= full / 2 && wait <= full, "{made}: {wait:?}");
        }
        assert!(backoff(retry, 40) <= MAX_DELAY);
    }
}
