//! The pairing link as a QR code, for the phone's camera: an SVG for the
//! app's Settings, half blocks for a terminal.

use qrcode::render::{svg, unicode};
use qrcode::{EcLevel, QrCode};

fn code(text: &str) -> Option<QrCode> {
    QrCode::with_error_correction_level(text, EcLevel::M).ok()
}

/// `text` as an SVG image (dark on light, with its quiet zone); `None` when
/// it is too long for a QR code.
pub fn svg(text: &str) -> Option<String> {
    Some(
        code(text)?
            .render::<svg::Color<'_>>()
            .min_dimensions(200, 200)
            .dark_color(svg::Color("#000000"))
            .light_color(svg::Color("#ffffff"))
            .build(),
    )
}

/// `text` as lines of half blocks for a terminal; `None` when it is too
/// long for a QR code. A block is drawn in the terminal's foreground
/// colour, so light modules are the blocks: on the usual light-on-dark
/// terminal the code reads dark on light, as a camera expects.
pub fn terminal(text: &str) -> Option<String> {
    Some(
        code(text)?
            .render::<unicode::Dense1x2>()
            .dark_color(unicode::Dense1x2::Light)
            .light_color(unicode::Dense1x2::Dark)
            .build(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_code_reads_back_as_the_link() {
        let link = "http://localhost:18791/pair/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        let qr = code(link).unwrap();
        let width = qr.width();
        let dark: Vec<bool> = qr
            .to_colors()
            .iter()
            .map(|c| *c == qrcode::Color::Dark)
            .collect();
        // Scaled up with a quiet zone, as a camera would see it.
        let (scale, margin) = (4, 4);
        let side = (width + 2 * margin) * scale;
        let mut image = rqrr::PreparedImage::prepare_from_greyscale(side, side, |x, y| {
            let (mx, my) = (x / scale, y / scale);
            let inside =
                (margin..margin + width).contains(&mx) && (margin..margin + width).contains(&my);
            if inside && dark[(my - margin) * width + (mx - margin)] {
                0
            } else {
                255
            }
        });
        let grids = image.detect_grids();
        assert_eq!(grids.len(), 1);
        let (_, read) = grids[0].decode().unwrap();
        assert_eq!(read, link);
        assert!(svg(link).unwrap().starts_with("<?xml"));
        assert!(terminal(link).unwrap().lines().count() > 10);
        assert!(svg(&"x".repeat(5000)).is_none(), "too long for a QR code");
    }
}
