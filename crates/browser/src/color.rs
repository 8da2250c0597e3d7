//! Accent colours: `#RRGGBB` text and Chromium's signed 32-bit ARGB form.

/// Parses `#RRGGBB` (or `RRGGBB`) into its channels.
pub fn parse_hex(text: &str) -> Option<(u8, u8, u8)> {
    let hex = text.trim().strip_prefix('#').unwrap_or(text.trim());
    if hex.len() != 6 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let channel = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
    Some((channel(0)?, channel(2)?, channel(4)?))
}

/// Chromium stores colours as opaque ARGB in a signed 32-bit integer
/// (`#FF4500` → `0xFFFF4500` → `-47872`).
pub fn signed_argb((r, g, b): (u8, u8, u8)) -> i32 {
    i32::from_be_bytes([0xFF, r, g, b])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lobster_orange_is_minus_47872() {
        assert_eq!(signed_argb(parse_hex("#FF4500").unwrap()), -47872);
        assert_eq!(parse_hex("ff4500"), Some((0xFF, 0x45, 0x00)));
        assert_eq!(parse_hex("#FF450"), None);
        assert_eq!(parse_hex("#GG4500"), None);
    }
}
