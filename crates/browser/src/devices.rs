//! Device presets for `/set/device`, named as Playwright names them.

/// One emulated device.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Device {
    /// Preset name (`iPhone 13`).
    pub name: &'static str,
    /// Viewport width in CSS pixels.
    pub width: u32,
    /// Viewport height in CSS pixels.
    pub height: u32,
    /// Device pixel ratio.
    pub scale: f64,
    /// Mobile viewport and touch input.
    pub mobile: bool,
    /// The user agent it reports.
    pub user_agent: &'static str,
}

const IOS: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";
const IPAD: &str = "Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";
const ANDROID: &str = "Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/148.0.0.0 Mobile Safari/537.36";
const GALAXY: &str = "Mozilla/5.0 (Linux; Android 13; SM-S911B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/148.0.0.0 Mobile Safari/537.36";

/// The presets.
pub const DEVICES: [Device; 8] = [
    Device {
        name: "iPhone SE",
        width: 375,
        height: 667,
        scale: 2.0,
        mobile: true,
        user_agent: IOS,
    },
    Device {
        name: "iPhone 13",
        width: 390,
        height: 664,
        scale: 3.0,
        mobile: true,
        user_agent: IOS,
    },
    Device {
        name: "iPhone 15",
        width: 393,
        height: 659,
        scale: 3.0,
        mobile: true,
        user_agent: IOS,
    },
    Device {
        name: "iPhone 15 Pro Max",
        width: 430,
        height: 739,
        scale: 3.0,
        mobile: true,
        user_agent: IOS,
    },
    Device {
        name: "iPad Mini",
        width: 768,
        height: 1024,
        scale: 2.0,
        mobile: true,
        user_agent: IPAD,
    },
    Device {
        name: "iPad Pro 11",
        width: 834,
        height: 1194,
        scale: 2.0,
        mobile: true,
        user_agent: IPAD,
    },
    Device {
        name: "Pixel 7",
        width: 412,
        height: 839,
        scale: 2.625,
        mobile: true,
        user_agent: ANDROID,
    },
    Device {
        name: "Galaxy S23",
        width: 360,
        height: 780,
        scale: 3.0,
        mobile: true,
        user_agent: GALAXY,
    },
];

/// A preset by name, ignoring case and spaces.
pub fn find(name: &str) -> Option<&'static Device> {
    let key = |s: &str| {
        s.chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase()
    };
    let wanted = key(name);
    DEVICES.iter().find(|d| key(d.name) == wanted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_loosely() {
        assert_eq!(find("iphone 13").map(|d| d.width), Some(390));
        assert_eq!(find("Pixel7").map(|d| d.name), Some("Pixel 7"));
        assert!(find("Nokia 3310").is_none());
    }
}
