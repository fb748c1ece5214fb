//! Images for the read tool: magic-byte detection and resizing within the inline limits.

use std::io::Cursor;

use base64::Engine;
use image::codecs::jpeg::JpegEncoder;
use image::imageops::FilterType;
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader};

/// Bytes sniffed from the start of a file to recognise an image.
pub const SNIFF_BYTES: usize = 4100;
/// Largest side of an image sent inline.
pub const MAX_DIMENSION: u32 = 2000;
/// Largest base64 payload sent inline (4.5 MB).
pub const MAX_ENCODED_BYTES: usize = 4_718_592;

/// The supported image MIME type of these leading bytes, if any.
pub fn detect_image_mime(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(&[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A]) {
        Some("image/png")
    } else if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if head.len() >= 12 && &head[0..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// An image ready to send, with its original and displayed sizes.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedImage {
    pub data: String,
    pub mime_type: String,
    pub original_width: u32,
    pub original_height: u32,
    pub width: u32,
    pub height: u32,
    pub was_resized: bool,
}

impl PreparedImage {
    /// The note telling the model how displayed coordinates map back (only when resized).
    pub fn dimension_note(&self) -> Option<String> {
        if !self.was_resized || self.width == 0 {
            return None;
        }
        let scale = f64::from(self.original_width) / f64::from(self.width);
        Some(format!(
            "[Image: original {}x{}, displayed at {}x{}. Multiply coordinates by {:.2} to map to original image.]",
            self.original_width, self.original_height, self.width, self.height, scale
        ))
    }
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn decode_oriented(bytes: &[u8]) -> Option<DynamicImage> {
    let reader = ImageReader::new(Cursor::new(bytes)).with_guessed_format().ok()?;
    let mut decoder = reader.into_decoder().ok()?;
    let orientation = decoder.orientation().ok();
    let mut img = DynamicImage::from_decoder(decoder).ok()?;
    if let Some(o) = orientation {
        img.apply_orientation(o);
    }
    Some(img)
}

fn encode_png(img: &DynamicImage) -> Option<Vec<u8>> {
    let mut out = Cursor::new(Vec::new());
    img.write_to(&mut out, ImageFormat::Png).ok()?;
    Some(out.into_inner())
}

fn encode_jpeg(img: &DynamicImage, quality: u8) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let rgb = DynamicImage::ImageRgb8(img.to_rgb8());
    rgb.write_with_encoder(JpegEncoder::new_with_quality(&mut out, quality))
        .ok()?;
    Some(out)
}

/// Fit an image within 2000x2000 and 4.5 MB of base64. `None` when it cannot be decoded or
/// no size and quality gets it under the limit. CPU-heavy: call from `spawn_blocking`.
pub fn prepare_image(bytes: &[u8], mime_type: &str) -> Option<PreparedImage> {
    let img = decode_oriented(bytes)?;
    let (ow, oh) = (img.width(), img.height());
    let encoded_len = bytes.len().div_ceil(3) * 4;
    if ow <= MAX_DIMENSION && oh <= MAX_DIMENSION && encoded_len < MAX_ENCODED_BYTES {
        return Some(PreparedImage {
            data: b64(bytes),
            mime_type: mime_type.to_string(),
            original_width: ow,
            original_height: oh,
            width: ow,
            height: oh,
            was_resized: false,
        });
    }
    let (mut w, mut h) = (ow, oh);
    if w > MAX_DIMENSION {
        h = ((f64::from(h) * f64::from(MAX_DIMENSION)) / f64::from(w)).round() as u32;
        w = MAX_DIMENSION;
    }
    if h > MAX_DIMENSION {
        w = ((f64::from(w) * f64::from(MAX_DIMENSION)) / f64::from(h)).round() as u32;
        h = MAX_DIMENSION;
    }
    let (mut w, mut h) = (w.max(1), h.max(1));
    loop {
        let resized = img.resize_exact(w, h, FilterType::Lanczos3);
        let mut candidates: Vec<(Vec<u8>, &str)> = Vec::new();
        if let Some(png) = encode_png(&resized) {
            candidates.push((png, "image/png"));
        }
        for quality in [80u8, 85, 70, 55, 40] {
            if let Some(jpeg) = encode_jpeg(&resized, quality) {
                candidates.push((jpeg, "image/jpeg"));
            }
        }
        for (data, mime) in candidates {
            let data = b64(&data);
            if data.len() < MAX_ENCODED_BYTES {
                return Some(PreparedImage {
                    data,
                    mime_type: mime.to_string(),
                    original_width: ow,
                    original_height: oh,
                    width: w,
                    height: h,
                    was_resized: true,
                });
            }
        }
        if w == 1 && h == 1 {
            return None;
        }
        let nw = if w == 1 {
            1
        } else {
            ((f64::from(w) * 0.75).floor() as u32).max(1)
        };
        let nh = if h == 1 {
            1
        } else {
            ((f64::from(h) * 0.75).floor() as u32).max(1)
        };
        if nw == w && nh == h {
            return None;
        }
        w = nw;
        h = nh;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png_of(w: u32, h: u32) -> Vec<u8> {
        let img = DynamicImage::new_rgb8(w, h);
        encode_png(&img).expect("png")
    }

    #[test]
    fn magic_bytes_decide_the_type() {
        assert_eq!(detect_image_mime(&png_of(2, 2)), Some("image/png"));
        assert_eq!(detect_image_mime(&[0xFF, 0xD8, 0xFF, 0xE0]), Some("image/jpeg"));
        assert_eq!(detect_image_mime(b"GIF89a...."), Some("image/gif"));
        assert_eq!(detect_image_mime(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(detect_image_mime(b"hello world"), None);
    }

    #[test]
    fn small_images_pass_through_unchanged() {
        let png = png_of(10, 5);
        let p = prepare_image(&png, "image/png").expect("image");
        assert!(!p.was_resized);
        assert_eq!(p.data, b64(&png));
        assert_eq!(p.dimension_note(), None);
    }

    #[test]
    fn large_images_are_scaled_into_the_box() {
        let png = png_of(4000, 1000);
        let p = prepare_image(&png, "image/png").expect("image");
        assert!(p.was_resized);
        assert_eq!((p.width, p.height), (2000, 500));
        assert_eq!(
            p.dimension_note().as_deref(),
            Some("[Image: original 4000x1000, displayed at 2000x500. Multiply coordinates by 2.00 to map to original image.]")
        );
    }

    #[test]
    fn undecodable_images_give_none() {
        assert!(prepare_image(b"\x89PNG\r\n\x1a\nbroken", "image/png").is_none());
    }
}
