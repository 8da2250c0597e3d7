//! OpenClaw's `/set/*`: per-tab network and environment overrides.

use chromiumoxide::Page;
use serde_json::{Map, Value, json};

use crate::cdp::Cdp;
use crate::cdp::page_call;
use crate::inspect::eval;
use crate::{BrowserError, Result};

fn bad_value(what: &str, e: BrowserError) -> BrowserError {
    match e {
        BrowserError::Cdp(m) => BrowserError::invalid(format!("{what} refused: {m}")),
        other => other,
    }
}

/// Chromium takes unknown time zones and locales silently; the page's
/// `Intl` knows which are real.
async fn check_in_page(page: &Page, probe: &str, field: &str, value: &str) -> Result<()> {
    let js =
        format!("(() => {{ try {{ {probe}; return true; }} catch (e) {{ return false; }} }})()");
    match eval(page, &js, false).await? {
        Value::Bool(true) => Ok(()),
        _ => Err(BrowserError::invalid(format!(
            "{field} {value} is not valid"
        ))),
    }
}

/// The settings `/set/{setting}` applies.
pub const SETTINGS: [&str; 7] = [
    "device",
    "offline",
    "headers",
    "geolocation",
    "media",
    "timezone",
    "locale",
];

fn unknown(setting: &str) -> BrowserError {
    if setting == "credentials" {
        BrowserError::Unsupported(format!("not implemented: POST /set/{setting}"))
    } else {
        BrowserError::Missing(format!("unknown route: POST /set/{setting}"))
    }
}

/// [`BrowserError::Unsupported`] for OpenClaw settings we lack,
/// [`BrowserError::Missing`] for unknown ones.
pub fn check(setting: &str) -> Result<()> {
    if SETTINGS.contains(&setting) {
        Ok(())
    } else {
        Err(unknown(setting))
    }
}

/// Applies one `/set/{setting}` body.
pub async fn apply(page: &Page, setting: &str, body: &Map<String, Value>) -> Result<()> {
    let text = |k: &str| {
        body.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
    };
    let flag = |k: &str| body.get(k).and_then(Value::as_bool);
    let number = |k: &str| body.get(k).and_then(Value::as_f64);
    let (method, params) = match setting {
        "offline" => {
            let offline = flag("offline")
                .ok_or_else(|| BrowserError::invalid("offline (true or false) is required"))?;
            (
                "Network.emulateNetworkConditions",
                json!({ "offline": offline, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1 }),
            )
        }
        "headers" => {
            let headers = body
                .get("headers")
                .and_then(Value::as_object)
                .ok_or_else(|| {
                    BrowserError::invalid("headers (an object of strings) is required")
                })?;
            if headers.values().any(|v| !v.is_string()) {
                return Err(BrowserError::invalid("header values must be strings"));
            }
            ("Network.setExtraHTTPHeaders", json!({ "headers": headers }))
        }
        "geolocation" if flag("clear") == Some(true) => {
            ("Emulation.clearGeolocationOverride", json!({}))
        }
        "geolocation" => {
            let (Some(latitude), Some(longitude)) = (number("latitude"), number("longitude"))
            else {
                return Err(BrowserError::invalid("latitude and longitude are required"));
            };
            if !(-90.0..=90.0).contains(&latitude) || !(-180.0..=180.0).contains(&longitude) {
                return Err(BrowserError::invalid(
                    "latitude must be within ±90 and longitude within ±180",
                ));
            }
            if let Some(origin) = text("origin") {
                page_call(
                    page,
                    "Browser.grantPermissions",
                    json!({ "permissions": ["geolocation"], "origin": origin }),
                )
                .await
                .map_err(|e| bad_value("origin", e))?;
            }
            (
                "Emulation.setGeolocationOverride",
                json!({ "latitude": latitude, "longitude": longitude, "accuracy": number("accuracy").unwrap_or(10.0) }),
            )
        }
        "media" => {
            let scheme = text("colorScheme")
                .ok_or_else(|| BrowserError::invalid("colorScheme is required"))?;
            let features = match scheme {
                "dark" | "light" | "no-preference" => {
                    json!([{ "name": "prefers-color-scheme", "value": scheme }])
                }
                "none" => json!([]),
                other => {
                    return Err(BrowserError::invalid(format!(
                        "colorScheme must be dark, light, no-preference or none, not {other}"
                    )));
                }
            };
            (
                "Emulation.setEmulatedMedia",
                json!({ "features": features }),
            )
        }
        "timezone" => {
            let id = text("timezoneId")
                .ok_or_else(|| BrowserError::invalid("timezoneId is required"))?;
            let probe = format!(
                "new Intl.DateTimeFormat('en', {{ timeZone: {} }})",
                json!(id)
            );
            check_in_page(page, &probe, "timezoneId", id).await?;
            ("Emulation.setTimezoneOverride", json!({ "timezoneId": id }))
        }
        "device" if flag("clear") == Some(true) => {
            page_call(page, "Emulation.clearDeviceMetricsOverride", json!({})).await?;
            page_call(
                page,
                "Emulation.setTouchEmulationEnabled",
                json!({ "enabled": false }),
            )
            .await?;
            ("Emulation.setUserAgentOverride", json!({ "userAgent": "" }))
        }
        "device" => {
            let name = text("name")
                .ok_or_else(|| BrowserError::invalid("name is required (or clear: true)"))?;
            let d = crate::devices::find(name).ok_or_else(|| {
                let known: Vec<&str> = crate::devices::DEVICES.iter().map(|d| d.name).collect();
                BrowserError::invalid(format!(
                    "unknown device {name}; known: {}",
                    known.join(", ")
                ))
            })?;
            page_call(
                page,
                "Emulation.setDeviceMetricsOverride",
                json!({ "width": d.width, "height": d.height, "deviceScaleFactor": d.scale, "mobile": d.mobile }),
            )
            .await?;
            page_call(
                page,
                "Emulation.setTouchEmulationEnabled",
                json!({ "enabled": d.mobile, "maxTouchPoints": 5 }),
            )
            .await?;
            (
                "Emulation.setUserAgentOverride",
                json!({ "userAgent": d.user_agent }),
            )
        }
        "locale" => {
            let locale =
                text("locale").ok_or_else(|| BrowserError::invalid("locale is required"))?;
            let probe = format!("Intl.getCanonicalLocales({})", json!(locale));
            check_in_page(page, &probe, "locale", locale).await?;
            ("Emulation.setLocaleOverride", json!({ "locale": locale }))
        }
        other => return Err(unknown(other)),
    };
    page_call(page, method, params)
        .await
        .map(drop)
        .map_err(|e| bad_value(setting, e))
}

/// The permissions [`grant`] takes: CDP's `Browser.PermissionType`s that
/// Chromium grants to a page's origin (a few others, such as `smartCard`,
/// it refuses outside an isolated context).
pub const PERMISSIONS: &[&str] = &[
    "ar",
    "audioCapture",
    "automaticFullscreen",
    "backgroundFetch",
    "backgroundSync",
    "cameraPanTiltZoom",
    "capturedSurfaceControl",
    "clipboardReadWrite",
    "clipboardSanitizedWrite",
    "displayCapture",
    "durableStorage",
    "geolocation",
    "idleDetection",
    "keyboardLock",
    "localFonts",
    "localNetworkAccess",
    "midi",
    "midiSysex",
    "nfc",
    "notifications",
    "paymentHandler",
    "periodicBackgroundSync",
    "pointerLock",
    "sensors",
    "speakerSelection",
    "storageAccess",
    "topLevelStorageAccess",
    "videoCapture",
    "vr",
    "wakeLockScreen",
    "wakeLockSystem",
    "webAppInstallation",
    "windowManagement",
];

/// Grants browser permissions (`geolocation`, `notifications`, ...), for
/// one origin or all.
pub async fn grant(cdp: &Cdp, permissions: &[String], origin: Option<&str>) -> Result<()> {
    let mut params = json!({ "permissions": permissions });
    if let Some(origin) = origin {
        params["origin"] = json!(origin);
    }
    cdp.call("Browser.grantPermissions", params)
        .await
        .map_err(|e| match e {
            BrowserError::Cdp(m) => BrowserError::invalid(format!("permissions refused: {m}")),
            other => other,
        })?;
    Ok(())
}
