//! `Image`: inline images through the kitty graphics protocol or iTerm2's OSC 1337 when the
//! terminal supports them, else a one-line text placeholder. Sizes come from the file headers.

use base64::Engine as _;

use crate::component::{Component, Frame, LineCache};
use crate::style::Style;
use crate::width::truncate_to_width;

/// Which inline image protocol the terminal speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageProtocol {
    Kitty,
    ITerm2,
}

/// Capabilities forced by the `terminal.images`, `terminal.hyperlinks` and
/// `terminal.trueColor` settings (`None` leaves detection and the environment to decide).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CapabilityOverrides {
    /// `Some(None)` turns images off (`terminal.images: false`).
    pub images: Option<Option<ImageProtocol>>,
    pub hyperlinks: Option<bool>,
    pub true_color: Option<bool>,
}

/// What the terminal can do, detected from the environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    pub images: Option<ImageProtocol>,
    pub true_color: bool,
    pub hyperlinks: bool,
}

impl Capabilities {
    /// Detect from `TERM_PROGRAM`, `TERM`, `KITTY_WINDOW_ID`, `GHOSTTY_RESOURCES_DIR`,
    /// `WEZTERM_PANE`, `ITERM_SESSION_ID`, `COLORTERM`, `TMUX`.
    pub fn detect() -> Self {
        Self::from_env(|k| std::env::var(k).ok())
    }

    /// Detect from the environment, with `PI_IMAGE_PROTOCOL` (`kitty`, `iterm2`, `none`/`0`;
    /// anything else detects), `PI_HYPERLINKS` and `PI_TRUE_COLOR` (`1`/`0`) forcing what they
    /// name.
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Self {
        let mut caps = Self::detected_from_env(&get);
        match get("PI_IMAGE_PROTOCOL").unwrap_or_default().to_lowercase().as_str() {
            "kitty" => caps.images = Some(ImageProtocol::Kitty),
            "iterm2" => caps.images = Some(ImageProtocol::ITerm2),
            "none" | "0" => caps.images = None,
            _ => {}
        }
        let flag = |k: &str| match get(k).as_deref() {
            Some("1") => Some(true),
            Some("0") => Some(false),
            _ => None,
        };
        if let Some(on) = flag("PI_HYPERLINKS") {
            caps.hyperlinks = on;
        }
        if let Some(on) = flag("PI_TRUE_COLOR") {
            caps.true_color = on;
        }
        caps
    }

    /// Detection and environment overrides, then the `terminal.*` settings, which win.
    pub fn detect_with(overrides: CapabilityOverrides) -> Self {
        Self::detect().overridden(overrides)
    }

    /// These capabilities with what `overrides` forces.
    #[must_use]
    pub fn overridden(mut self, overrides: CapabilityOverrides) -> Self {
        if let Some(images) = overrides.images {
            self.images = images;
        }
        if let Some(on) = overrides.hyperlinks {
            self.hyperlinks = on;
        }
        if let Some(on) = overrides.true_color {
            self.true_color = on;
        }
        self
    }

    fn detected_from_env(get: &impl Fn(&str) -> Option<String>) -> Self {
        let lower = |k: &str| get(k).unwrap_or_default().to_lowercase();
        let program = lower("TERM_PROGRAM");
        let term = lower("TERM");
        let colorterm = lower("COLORTERM");
        let true_color = colorterm == "truecolor" || colorterm == "24bit" || term.ends_with("-direct");
        let set = |k: &str| get(k).is_some_and(|v| !v.is_empty());
        // tmux/screen swallow OSC 8 and image protocols unless specially configured.
        if set("TMUX") || term.starts_with("tmux") || term.starts_with("screen") {
            return Capabilities {
                images: None,
                true_color,
                hyperlinks: false,
            };
        }
        if set("CMUX_SOCKET_PATH") || program == "cmux" {
            return Capabilities {
                images: None,
                true_color: true,
                hyperlinks: true,
            };
        }
        // Multiplexer-like hosts speaking Kitty graphics come first: the outer terminal's
        // variables can leak into their panes.
        if program == "herdr" {
            return Capabilities {
                images: Some(ImageProtocol::Kitty),
                true_color,
                hyperlinks: true,
            };
        }
        // Orca advertises its Kitty graphics only through ORCA_IMAGE_PROTOCOL.
        let orca = program == "orca" && get("ORCA_IMAGE_PROTOCOL").as_deref() == Some("kitty");
        // Warp and rex take the Kitty graphics protocol and 24-bit colour.
        let warp = program == "warpterminal" || set("WARP_SESSION_ID") || set("WARP_TERMINAL_SESSION_UUID");
        let kitty_like = program == "rex"
            || orca
            || warp
            || set("KITTY_WINDOW_ID")
            || program == "kitty"
            || program == "ghostty"
            || term.contains("ghostty")
            || set("GHOSTTY_RESOURCES_DIR")
            || set("WEZTERM_PANE")
            || program == "wezterm";
        if kitty_like {
            return Capabilities {
                images: Some(ImageProtocol::Kitty),
                true_color: true,
                hyperlinks: true,
            };
        }
        if set("ITERM_SESSION_ID") || program == "iterm.app" {
            return Capabilities {
                images: Some(ImageProtocol::ITerm2),
                true_color: true,
                hyperlinks: true,
            };
        }
        if set("WT_SESSION") {
            return Capabilities {
                images: None,
                true_color: true,
                hyperlinks: true,
            };
        }
        // Alacritty sets TERM=alacritty (with its terminfo) or ALACRITTY_WINDOW_ID.
        let alacritty = program == "alacritty" || term.starts_with("alacritty") || set("ALACRITTY_WINDOW_ID");
        if alacritty || program == "vscode" || program == "zed" {
            return Capabilities {
                images: None,
                true_color: true,
                hyperlinks: true,
            };
        }
        if lower("TERMINAL_EMULATOR") == "jetbrains-jediterm" {
            return Capabilities {
                images: None,
                true_color: true,
                hyperlinks: false,
            };
        }
        Capabilities {
            images: None,
            true_color,
            hyperlinks: false,
        }
    }
}

static HYPERLINKS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Say whether the terminal takes OSC 8 links ([`Capabilities::hyperlinks`] with the
/// overrides applied): Markdown links are then written as links instead of `text (url)`.
pub fn set_hyperlinks(on: bool) {
    HYPERLINKS.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Whether links go out as OSC 8 (see [`set_hyperlinks`]).
pub fn hyperlinks() -> bool {
    HYPERLINKS.load(std::sync::atomic::Ordering::Relaxed)
}

static IMAGE_WIDTH: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(60);

/// The widest new images are drawn, in columns (`terminal.imageWidthCells`; 60 by default).
pub fn set_image_width(cols: usize) {
    IMAGE_WIDTH.store(cols.max(1), std::sync::atomic::Ordering::Relaxed);
}

/// Pixel size of an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageSize {
    pub width: u32,
    pub height: u32,
}

/// Read the pixel size from PNG, JPEG, GIF or WebP bytes.
pub fn image_size(data: &[u8]) -> Option<ImageSize> {
    let be32 = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    let le16 = |b: &[u8]| u16::from_le_bytes([b[0], b[1]]) as u32;
    if data.len() >= 24 && data.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some(ImageSize {
            width: be32(&data[16..20]),
            height: be32(&data[20..24]),
        });
    }
    if data.len() >= 10 && (data.starts_with(b"GIF87a") || data.starts_with(b"GIF89a")) {
        return Some(ImageSize {
            width: le16(&data[6..8]),
            height: le16(&data[8..10]),
        });
    }
    if data.len() >= 30 && data.starts_with(b"RIFF") && &data[8..12] == b"WEBP" {
        let chunk = &data[12..16];
        return match chunk {
            b"VP8 " => Some(ImageSize {
                width: le16(&data[26..28]) & 0x3fff,
                height: le16(&data[28..30]) & 0x3fff,
            }),
            b"VP8L" => {
                let b = &data[21..25];
                let bits = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                Some(ImageSize {
                    width: (bits & 0x3fff) + 1,
                    height: ((bits >> 14) & 0x3fff) + 1,
                })
            }
            b"VP8X" => {
                let w = u32::from_le_bytes([data[24], data[25], data[26], 0]) + 1;
                let h = u32::from_le_bytes([data[27], data[28], data[29], 0]) + 1;
                Some(ImageSize { width: w, height: h })
            }
            _ => None,
        };
    }
    if data.len() >= 4 && data[0] == 0xff && data[1] == 0xd8 {
        let mut i = 2;
        while i + 9 < data.len() {
            if data[i] != 0xff {
                i += 1;
                continue;
            }
            let marker = data[i + 1];
            if marker == 0xd8 || marker == 0x01 || (0xd0..=0xd7).contains(&marker) {
                i += 2;
                continue;
            }
            let len = u16::from_be_bytes([data[i + 2], data[i + 3]]) as usize;
            // Start-of-frame markers carry the size (not DHT/JPG/DAC).
            if (0xc0..=0xcf).contains(&marker) && ![0xc4, 0xc8, 0xcc].contains(&marker) {
                let h = u16::from_be_bytes([data[i + 5], data[i + 6]]) as u32;
                let w = u16::from_be_bytes([data[i + 7], data[i + 8]]) as u32;
                return Some(ImageSize { width: w, height: h });
            }
            i += 2 + len;
        }
    }
    None
}

/// Rows an image of `size` takes at `cols` columns, for a cell of `cell` pixels (w, h).
pub fn image_rows(size: ImageSize, cols: usize, cell: (u32, u32)) -> usize {
    if size.width == 0 {
        return 1;
    }
    let target_w = cols as f64 * cell.0 as f64;
    let scaled_h = size.height as f64 * target_w / size.width as f64;
    ((scaled_h / cell.1 as f64).ceil() as usize).max(1)
}

/// Columns and rows an image takes fitted into `max_cols` x `max_rows` cells of `cell`
/// pixels, keeping its aspect ratio. With `snap`, the dimension the fit did not pin is
/// rounded to whichever whole cell count distorts the image less (Kitty scales an image to
/// fill its cells exactly).
pub fn image_cells(size: ImageSize, max_cols: usize, max_rows: usize, cell: (u32, u32), snap: bool) -> (usize, usize) {
    let max_cols = max_cols.max(1);
    let max_rows = max_rows.max(1);
    let (iw, ih) = (size.width.max(1) as f64, size.height.max(1) as f64);
    let (cw, ch) = (cell.0.max(1) as f64, cell.1.max(1) as f64);
    let by_width = max_cols as f64 * cw / iw;
    let by_height = max_rows as f64 * ch / ih;
    let scale = by_width.min(by_height);
    let mut cols = ((iw * scale / cw).ceil() as usize).clamp(1, max_cols);
    let mut rows = ((ih * scale / ch).ceil() as usize).clamp(1, max_rows);
    if snap {
        // Of `upper` and `upper - 1`, the count nearer to `ideal` by ratio.
        let nearer = |upper: usize, ideal: f64| {
            if upper <= 1 {
                return upper;
            }
            let off = |n: usize| (n as f64 / ideal).max(ideal / n as f64);
            if off(upper - 1) < off(upper) {
                upper - 1
            } else {
                upper
            }
        };
        if by_width <= by_height {
            rows = nearer(rows, cols as f64 * cw * ih / (iw * ch));
        } else {
            cols = nearer(cols, rows as f64 * ch * iw / (ih * cw));
        }
    }
    (cols, rows)
}

/// Kitty graphics transmission of PNG data (base64), chunked at 4096 bytes, placed at
/// `cols` x `rows` cells without moving the cursor.
pub fn encode_kitty(b64: &str, cols: usize, rows: usize, id: Option<u32>) -> String {
    const CHUNK: usize = 4096;
    let mut params = format!("a=T,f=100,q=2,C=1,c={cols},r={rows}");
    if let Some(id) = id {
        params.push_str(&format!(",i={id}"));
    }
    if b64.len() <= CHUNK {
        return format!("\x1b_G{params};{b64}\x1b\\");
    }
    let mut out = String::with_capacity(b64.len() + b64.len() / CHUNK * 16 + 64);
    let bytes = b64.as_bytes();
    let mut off = 0;
    while off < bytes.len() {
        let end = (off + CHUNK).min(bytes.len());
        // Valid base64 is ASCII; anything else was rejected by the caller.
        let chunk = std::str::from_utf8(&bytes[off..end]).unwrap_or("");
        let more = if end < bytes.len() { 1 } else { 0 };
        if off == 0 {
            out.push_str(&format!("\x1b_G{params},m={more};{chunk}\x1b\\"));
        } else {
            out.push_str(&format!("\x1b_Gm={more};{chunk}\x1b\\"));
        }
        off = end;
    }
    out
}

/// iTerm2 inline image (OSC 1337) `cols` cells wide.
pub fn encode_iterm2(b64: &str, cols: usize) -> String {
    format!("\x1b]1337;File=inline=1;width={cols};height=auto;preserveAspectRatio=1:{b64}\x07")
}

/// `[Image: name [mime] WxH]`.
pub fn image_fallback(mime: &str, size: Option<ImageSize>, name: Option<&str>) -> String {
    let mut parts = Vec::new();
    if let Some(n) = name {
        parts.push(n.to_string());
    }
    parts.push(format!("[{mime}]"));
    if let Some(s) = size {
        parts.push(format!("{}x{}", s.width, s.height));
    }
    format!("[Image: {}]", parts.join(" "))
}

/// An inline image (base64 data as stored in messages).
#[derive(Debug, Clone)]
pub struct Image {
    b64: String,
    mime: String,
    name: Option<String>,
    size: Option<ImageSize>,
    caps: Capabilities,
    max_cols: usize,
    cell: (u32, u32),
    fallback_style: Style,
    cache: LineCache,
    /// The Kitty image id, allocated when first drawn.
    id: Option<u32>,
}

impl Image {
    pub fn new(b64: impl Into<String>, mime: impl Into<String>, caps: Capabilities) -> Self {
        let b64 = b64.into();
        // Only the header is needed for the size; decode a prefix.
        let head_len = b64.len().min(64 * 1024) / 4 * 4;
        let head = base64::engine::general_purpose::STANDARD
            .decode(&b64.as_bytes()[..head_len])
            .unwrap_or_default();
        let size = image_size(&head);
        Image {
            b64,
            mime: mime.into(),
            name: None,
            size,
            caps,
            max_cols: IMAGE_WIDTH.load(std::sync::atomic::Ordering::Relaxed),
            cell: (9, 18),
            fallback_style: Style::new(),
            cache: LineCache::default(),
            id: None,
        }
    }

    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    #[must_use]
    pub fn with_max_cols(mut self, cols: usize) -> Self {
        self.max_cols = cols.max(1);
        self
    }

    /// A new widest size (`terminal.imageWidthCells` changed): drawn again, as a new image.
    pub fn set_max_cols(&mut self, cols: usize) {
        let cols = cols.max(1);
        if cols != self.max_cols {
            self.max_cols = cols;
            self.id = None;
            self.cache.clear();
        }
    }

    #[must_use]
    pub fn with_fallback_style(mut self, style: Style) -> Self {
        self.fallback_style = style;
        self
    }

    /// Cell size in pixels (from the terminal's `CSI 16 t` reply).
    pub fn set_cell_size(&mut self, width: u32, height: u32) {
        if width > 0 && height > 0 {
            self.cell = (width, height);
            self.cache.clear();
        }
    }

    pub fn size(&self) -> Option<ImageSize> {
        self.size
    }

    fn build(&mut self, width: usize) -> Vec<String> {
        let fallback = || {
            vec![self.fallback_style.paint(&truncate_to_width(
                &image_fallback(&self.mime, self.size, self.name.as_deref()),
                width,
                "...",
            ))]
        };
        let (Some(proto), Some(size)) = (self.caps.images, self.size) else {
            return fallback();
        };
        if !self.b64.is_ascii() {
            return fallback();
        }
        // Kitty's f=100 is PNG only; other formats need converting first.
        if proto == ImageProtocol::Kitty && self.mime != "image/png" {
            return fallback();
        }
        // At most as wide as allowed and as tall as a square of that width, as pi fits them.
        let max_cols = width.saturating_sub(2).min(self.max_cols).max(1);
        let max_rows = ((max_cols as u64 * self.cell.0 as u64).div_ceil(self.cell.1.max(1) as u64)).max(1) as usize;
        let (cols, rows) = image_cells(size, max_cols, max_rows, self.cell, proto == ImageProtocol::Kitty);
        if proto == ImageProtocol::Kitty {
            // The sequence goes on the first row and covers the rows below it without moving
            // the cursor (C=1); the id lets a fullscreen frame place it again without
            // sending the data twice.
            let id = *self.id.get_or_insert_with(crate::kitty::next_image_id);
            crate::kitty::register(id, cols, rows, size.width, size.height);
            let mut lines = vec![encode_kitty(&self.b64, cols, rows, Some(id))];
            lines.resize(rows, String::new());
            return lines;
        }
        // iTerm2: reserve `rows` lines; the last one moves up and draws the image over them.
        let mut lines = vec![String::new(); rows - 1];
        let up = if rows > 1 {
            format!("\x1b[{}A", rows - 1)
        } else {
            String::new()
        };
        lines.push(format!("{up}{}", encode_iterm2(&self.b64, cols)));
        lines
    }
}

impl Component for Image {
    fn render(&mut self, width: usize, out: &mut Frame) {
        if let Some(l) = self.cache.get(width) {
            out.push(l);
            return;
        }
        let lines = self.build(width);
        out.push(self.cache.set(width, lines));
    }

    fn invalidate(&mut self) {
        self.cache.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::component::render_lines;

    fn png(w: u32, h: u32) -> Vec<u8> {
        let mut v = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        v.extend_from_slice(&w.to_be_bytes());
        v.extend_from_slice(&h.to_be_bytes());
        v.extend_from_slice(&[8, 6, 0, 0, 0]);
        v
    }

    #[test]
    fn sizes_from_headers() {
        assert_eq!(
            image_size(&png(640, 480)),
            Some(ImageSize {
                width: 640,
                height: 480
            })
        );
        let gif = b"GIF89a\x10\x00\x20\x00rest";
        assert_eq!(image_size(gif), Some(ImageSize { width: 16, height: 32 }));
        let mut jpeg = vec![0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0, 0];
        jpeg.extend_from_slice(&[0xff, 0xc0, 0x00, 0x11, 0x08, 0x00, 0x64, 0x00, 0xc8, 0x03]);
        assert_eq!(
            image_size(&jpeg),
            Some(ImageSize {
                width: 200,
                height: 100
            })
        );
        let mut webp = b"RIFF\0\0\0\0WEBPVP8X\x0a\0\0\0\0\0\0\0".to_vec();
        webp.extend_from_slice(&[0x1f, 0x00, 0x00, 0x0f, 0x00, 0x00]);
        assert_eq!(image_size(&webp), Some(ImageSize { width: 32, height: 16 }));
        assert_eq!(image_size(b"nope"), None);
    }

    #[test]
    fn capability_detection() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(a, _)| *a == k).map(|(_, v)| v.to_string())
        };
        assert_eq!(
            Capabilities::from_env(env(&[("KITTY_WINDOW_ID", "1")])).images,
            Some(ImageProtocol::Kitty)
        );
        assert_eq!(
            Capabilities::from_env(env(&[("TERM_PROGRAM", "iTerm.app")])).images,
            Some(ImageProtocol::ITerm2)
        );
        let tmux = Capabilities::from_env(env(&[("KITTY_WINDOW_ID", "1"), ("TMUX", "/tmp/x")]));
        assert_eq!(tmux.images, None);
        assert!(!tmux.hyperlinks);
        assert_eq!(Capabilities::from_env(env(&[])).images, None);
        // 24-bit colour where pi 1.6 assumes it, 256 colours elsewhere without COLORTERM.
        for pairs in [
            &[("WT_SESSION", "x")][..],
            &[("TERM", "alacritty")],
            &[("TERM_PROGRAM", "zed")],
            &[("TERMINAL_EMULATOR", "JetBrains-JediTerm")],
            &[("TERM_PROGRAM", "WarpTerminal")],
            &[("COLORTERM", "truecolor")],
        ] {
            assert!(Capabilities::from_env(env(pairs)).true_color, "{pairs:?}");
        }
        assert!(!Capabilities::from_env(env(&[("TERM", "xterm-256color")])).true_color);
        // A Kitty-capable multiplexer in a kitty window, and Orca only when it says so.
        assert_eq!(
            Capabilities::from_env(env(&[("TERM_PROGRAM", "herdr"), ("ITERM_SESSION_ID", "x")])).images,
            Some(ImageProtocol::Kitty)
        );
        assert_eq!(Capabilities::from_env(env(&[("TERM_PROGRAM", "orca")])).images, None);
    }

    #[test]
    fn environment_and_settings_overrides() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(a, _)| *a == k).map(|(_, v)| v.to_string())
        };
        let kitty = [("KITTY_WINDOW_ID", "1")];
        let forced = |extra: &'static [(&'static str, &'static str)]| {
            let mut v = kitty.to_vec();
            v.extend_from_slice(extra);
            Capabilities::from_env(env(Box::leak(v.into_boxed_slice())))
        };
        assert_eq!(
            forced(&[("PI_IMAGE_PROTOCOL", "ITerm2")]).images,
            Some(ImageProtocol::ITerm2)
        );
        assert_eq!(forced(&[("PI_IMAGE_PROTOCOL", "none")]).images, None);
        assert_eq!(forced(&[("PI_IMAGE_PROTOCOL", "0")]).images, None);
        assert_eq!(
            forced(&[("PI_IMAGE_PROTOCOL", "auto")]).images,
            Some(ImageProtocol::Kitty)
        );
        assert_eq!(
            forced(&[("PI_IMAGE_PROTOCOL", "sixel")]).images,
            Some(ImageProtocol::Kitty)
        );
        assert!(!forced(&[("PI_HYPERLINKS", "0")]).hyperlinks);
        assert!(forced(&[("PI_HYPERLINKS", "true")]).hyperlinks, "only 1/0 count");
        assert!(!forced(&[("PI_TRUE_COLOR", "0")]).true_color);
        let plain = Capabilities::from_env(env(&[("PI_IMAGE_PROTOCOL", "kitty"), ("PI_HYPERLINKS", "1")]));
        assert_eq!((plain.images, plain.hyperlinks), (Some(ImageProtocol::Kitty), true));
        // Under tmux the environment still forces them.
        let tmux = Capabilities::from_env(env(&[("TMUX", "/t"), ("PI_IMAGE_PROTOCOL", "kitty")]));
        assert_eq!(tmux.images, Some(ImageProtocol::Kitty));
        // The settings win over the environment.
        let set = forced(&[("PI_IMAGE_PROTOCOL", "iterm2"), ("PI_HYPERLINKS", "1")]).overridden(CapabilityOverrides {
            images: Some(None),
            hyperlinks: Some(false),
            true_color: None,
        });
        assert_eq!((set.images, set.hyperlinks, set.true_color), (None, false, true));
        assert_eq!(plain.overridden(CapabilityOverrides::default()), plain);
    }

    #[test]
    fn renders_protocol_or_placeholder() {
        let b64 = base64::engine::general_purpose::STANDARD.encode(png(180, 36));
        let kitty = Capabilities {
            images: Some(ImageProtocol::Kitty),
            true_color: true,
            hyperlinks: true,
        };
        let mut img = Image::new(b64.clone(), "image/png", kitty).with_max_cols(20);
        let lines = render_lines(&mut img, 80);
        // 20 cols * 9 px = 180 px wide -> 36 px tall = 2 rows of 18 px.
        assert_eq!(lines.len(), 2);
        // The first row carries the image (with its id), the second is reserved.
        assert!(lines[0].starts_with("\x1b_Ga=T,f=100,q=2,C=1,c=20,r=2,i="), "{lines:?}");
        assert_eq!(lines[1], "");
        assert_eq!(crate::width::visible_width(&lines[0]), 0);
        let meta = crate::kitty::meta_of(&lines[0]).expect("registered");
        assert_eq!((meta.cols, meta.rows, meta.height_px), (20, 2, 36));
        let iterm = Capabilities {
            images: Some(ImageProtocol::ITerm2),
            ..kitty
        };
        let lines = render_lines(&mut Image::new(b64.clone(), "image/png", iterm).with_max_cols(20), 80);
        assert!(
            lines[1].starts_with("\x1b[1A\x1b]1337;File=inline=1;width=20;"),
            "{lines:?}"
        );
        let none = Capabilities {
            images: None,
            true_color: false,
            hyperlinks: false,
        };
        let mut img = Image::new(b64, "image/png", none).with_name("shot.png");
        assert_eq!(render_lines(&mut img, 80), ["[Image: shot.png [image/png] 180x36]"]);
    }

    #[test]
    fn non_base64_data_falls_back_without_panicking() {
        let kitty = Capabilities {
            images: Some(ImageProtocol::Kitty),
            true_color: true,
            hyperlinks: true,
        };
        let mut img = Image::new("ü".repeat(20_000), "image/png", kitty);
        assert_eq!(render_lines(&mut img, 80), ["[Image: [image/png]]"]);
    }

    #[test]
    fn cells_fit_the_width_and_a_square_height() {
        // As pi 1.6 sizes them in 60 columns (at most 30 rows) of 9 x 18 px cells.
        for ((w, h), cells) in [
            ((180, 36), (60, 6)),
            ((100, 1000), (6, 30)),
            ((1, 1), (60, 30)),
            ((640, 480), (60, 23)),
            ((300, 200), (60, 20)),
            ((1920, 1080), (60, 17)),
            ((50, 120), (25, 30)),
            ((10, 116), (5, 30)),
            ((10, 434), (1, 30)),
        ] {
            let size = ImageSize { width: w, height: h };
            assert_eq!(image_cells(size, 60, 30, (9, 18), true), cells, "{w}x{h}");
        }
        // Without snapping (iTerm2 keeps the reservation), the upper count stays.
        let narrow = ImageSize { width: 10, height: 116 };
        assert_eq!(image_cells(narrow, 60, 30, (9, 18), false), (6, 30));
    }

    #[test]
    fn kitty_chunks() {
        let data = "A".repeat(5000);
        let s = encode_kitty(&data, 10, 2, Some(7));
        assert!(s.starts_with("\x1b_Ga=T,f=100,q=2,C=1,c=10,r=2,i=7,m=1;"));
        assert!(s.contains("\x1b_Gm=0;"));
    }
}
