//! The alternate-screen renderer: every frame is exactly the window's rows; only rows that
//! changed are rewritten (each addressed absolutely), inside synchronized output.

use std::io::{self, Write};

use crate::component::CURSOR_MARKER;
use crate::components::ImageProtocol;
use crate::kitty::{is_image_line, placement_rows, Uploads, DELETE_ALL_IMAGES, DELETE_ALL_PLACEMENTS};
use crate::renderer::{push_line, FrameStats};
use crate::width::visible_width;

const SYNC_BEGIN: &str = "\x1b[?2026h";
const SYNC_END: &str = "\x1b[?2026l";
/// Every row ends with the style and the hyperlink closed, so nothing bleeds into the next.
const ROW_END: &str = "\x1b[0m\x1b]8;;\x07";

/// Row-diff renderer for a screen the application owns entirely.
#[derive(Debug, Default)]
pub struct AltScreen {
    prev: Vec<String>,
    width: usize,
    height: usize,
    started: bool,
    force_full: bool,
    show_hardware_cursor: bool,
    cursor_shown: bool,
    stats: FrameStats,
    /// The image protocol frames are drawn with (Kitty images are placed again from data
    /// already sent; iTerm2 is not used in fullscreen).
    images: Option<ImageProtocol>,
    uploads: Uploads,
}

impl AltScreen {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn set_show_hardware_cursor(&mut self, on: bool) {
        self.show_hardware_cursor = on;
    }

    /// Make the next frame a full redraw (after a suspend, or when the screen was disturbed).
    pub fn request_full_redraw(&mut self) {
        self.force_full = true;
    }

    pub fn set_image_protocol(&mut self, images: Option<ImageProtocol>) {
        self.images = images;
    }

    /// What to write before leaving the alternate screen: the Kitty images are freed.
    pub fn exit_sequence(&mut self) -> &'static str {
        self.uploads.clear();
        if self.images == Some(ImageProtocol::Kitty) {
            DELETE_ALL_IMAGES
        } else {
            ""
        }
    }

    pub fn stats(&self) -> FrameStats {
        self.stats
    }

    /// The rows of the last frame.
    pub fn previous(&self) -> &[String] {
        &self.prev
    }

    /// Draw `rows` (cut or padded to `height`) on a `width` x `height` screen.
    pub fn render<W: Write + ?Sized>(
        &mut self,
        mut rows: Vec<String>,
        width: usize,
        height: usize,
        out: &mut W,
    ) -> io::Result<()> {
        use std::fmt::Write as _;
        let width = width.max(1);
        let height = height.max(1);
        rows.resize(height, String::new());
        self.stats = FrameStats::default();
        let full = !self.started || self.force_full || width != self.width || height != self.height;
        let kitty = self.images == Some(ImageProtocol::Kitty);
        let changed: Vec<bool> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| full || self.prev.get(i) != Some(r))
            .collect();
        // An image line that changed, appeared or went away, or text written over the cells
        // of an image, makes every image on the screen be drawn again (after the text).
        let anchors = rows
            .iter()
            .enumerate()
            .any(|(i, r)| changed[i] && (is_image_line(r) || self.prev.get(i).is_some_and(|p| is_image_line(p))));
        let cells = !anchors
            && kitty
            && changed.iter().any(|&c| c)
            && rows
                .iter()
                .enumerate()
                .any(|(i, r)| placement_rows(r).is_some_and(|n| changed.iter().skip(i).take(n).any(|&c| c)));
        let images_redraw = anchors || cells;
        let redraw_images = full || images_redraw;
        let had_uploads = !self.uploads.is_empty();
        let (lines, evictions) = if redraw_images && kitty {
            self.uploads.prepare(&rows)
        } else {
            (rows.clone(), String::new())
        };
        let mut buf = String::new();
        if full {
            self.stats.full_redraw = true;
            if kitty && had_uploads {
                // ED 2 frees Kitty images without placements, which would undo the uploads
                // kept for placing again; every row is erased below anyway.
                buf.push_str(DELETE_ALL_PLACEMENTS);
            } else {
                if kitty {
                    buf.push_str(DELETE_ALL_IMAGES);
                }
                buf.push_str("\x1b[2J");
            }
        } else if images_redraw {
            match self.images {
                Some(ImageProtocol::Kitty) => buf.push_str(DELETE_ALL_PLACEMENTS),
                Some(ImageProtocol::ITerm2) => buf.push_str("\x1b[2J"),
                None => {}
            }
        }
        buf.push_str(&evictions);
        let write_all = full || images_redraw;
        let to_write = |i: usize| write_all || changed[i];
        if redraw_images && kitty && lines.iter().any(|l| is_image_line(l)) {
            // Some terminals keep Kitty images in the cells they cover: erase and write the
            // text first, then place the images, so nothing written later cuts into them.
            for i in (0..lines.len()).filter(|&i| to_write(i)) {
                let _ = write!(buf, "\x1b[{};1H\x1b[2K", i + 1);
            }
            for image_pass in [false, true] {
                for (i, row) in lines.iter().enumerate() {
                    if !to_write(i) || is_image_line(row) != image_pass {
                        continue;
                    }
                    let _ = write!(buf, "\x1b[{};1H", i + 1);
                    push_line(&mut buf, row, width);
                    buf.push_str(ROW_END);
                    self.stats.first_written.get_or_insert(i);
                    self.stats.lines_written += 1;
                }
            }
        } else {
            for (i, row) in lines.iter().enumerate() {
                if !to_write(i) {
                    continue;
                }
                let _ = write!(buf, "\x1b[{};1H\x1b[2K", i + 1);
                push_line(&mut buf, row, width);
                buf.push_str(ROW_END);
                self.stats.first_written.get_or_insert(i);
                self.stats.lines_written += 1;
            }
        }
        let cursor = rows.iter().enumerate().find_map(|(i, r)| {
            r.find(CURSOR_MARKER)
                .map(|pos| (i, visible_width(&r[..pos]).min(width - 1)))
        });
        match cursor {
            Some((row, col)) => {
                let _ = write!(buf, "\x1b[{};{}H", row + 1, col + 1);
                if self.show_hardware_cursor && !self.cursor_shown {
                    buf.push_str("\x1b[?25h");
                    self.cursor_shown = true;
                }
            }
            None => {
                if self.cursor_shown {
                    buf.push_str("\x1b[?25l");
                    self.cursor_shown = false;
                }
            }
        }
        if !self.show_hardware_cursor && self.cursor_shown {
            buf.push_str("\x1b[?25l");
            self.cursor_shown = false;
        }
        self.width = width;
        self.height = height;
        self.started = true;
        self.force_full = false;
        self.prev = rows;
        if self.stats.lines_written == 0 && cursor.is_none() {
            return Ok(());
        }
        out.write_all(SYNC_BEGIN.as_bytes())?;
        out.write_all(buf.as_bytes())?;
        out.write_all(SYNC_END.as_bytes())?;
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn first_frame_clears_then_only_changed_rows_are_written() {
        let mut s = AltScreen::new();
        let mut out = Vec::new();
        s.render(rows(&["a", "b", "c"]), 10, 4, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("\x1b[2J"));
        assert!(text.contains("\x1b[1;1H\x1b[2Ka\x1b[0m"));
        assert_eq!(s.stats().lines_written, 4, "padded to the height");

        let mut out = Vec::new();
        s.render(rows(&["a", "B", "c"]), 10, 4, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains("\x1b[2J"));
        assert!(text.contains("\x1b[2;1H\x1b[2KB"));
        assert!(!text.contains("\x1b[1;1H\x1b[2K"));
        assert_eq!(s.stats().lines_written, 1);

        let mut out = Vec::new();
        s.render(rows(&["a", "B", "c"]), 10, 4, &mut out).unwrap();
        assert!(out.is_empty(), "nothing changed, nothing written");
    }

    #[test]
    fn a_size_change_redraws_everything_and_long_rows_are_cut() {
        let mut s = AltScreen::new();
        s.render(rows(&["abc"]), 10, 2, &mut Vec::new()).unwrap();
        let mut out = Vec::new();
        s.render(rows(&["abcdefgh"]), 4, 2, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("\x1b[2J") && text.contains("abcd\x1b[0m") && !text.contains("abcde"));
    }

    #[test]
    fn cursor_marker_places_the_cursor() {
        let mut s = AltScreen::new();
        let mut out = Vec::new();
        s.render(vec![String::new(), format!("> ab{CURSOR_MARKER}")], 10, 3, &mut out)
            .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("\x1b[2;5H"), "{text:?}");
        assert!(!text.contains(CURSOR_MARKER));
    }

    /// A 2-row Kitty image line drawn the way `Image` draws it, and its payload.
    fn kitty_image(id: u32) -> (String, String) {
        let payload = "P".repeat(64);
        crate::kitty::register(id, 4, 2, 36, 36);
        (crate::components::encode_kitty(&payload, 4, 2, Some(id)), payload)
    }

    #[test]
    fn kitty_images_are_sent_once_then_placed_after_the_text() {
        let (img, payload) = kitty_image(930_001);
        let mut s = AltScreen::new();
        s.set_image_protocol(Some(ImageProtocol::Kitty));
        let mut out = Vec::new();
        s.render(rows(&["top", &img, "", "below"]), 10, 4, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches(&payload).count(), 1, "{text:?}");
        assert!(
            text.contains("\x1b_Ga=d,d=A,q=2\x1b\\\x1b[2J"),
            "first frame frees and clears"
        );
        // The image is written after every text row.
        let image_at = text.find("\x1b[2;1H\x1b_G").expect("image row");
        assert!(text.find("below").unwrap() < image_at, "{text:?}");

        // Scrolled by one row: the placements are removed and the image placed again
        // without its data.
        let mut out = Vec::new();
        s.render(rows(&[&img, "", "below", "new"]), 10, 4, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains(&payload), "{text:?}");
        assert!(text.starts_with("\x1b[?2026h\x1b_Ga=d,d=a,q=2\x1b\\"), "{text:?}");
        assert!(
            text.contains("\x1b[1;1H\x1b_Ga=p,q=2,C=1,c=4,r=2,i=930001\x1b\\"),
            "{text:?}"
        );

        // Text changing outside the image's cells leaves the image alone.
        let mut out = Vec::new();
        s.render(rows(&[&img, "", "below", "newer"]), 10, 4, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains("\x1b_G"), "{text:?}");
        assert_eq!(s.stats().lines_written, 1);
        // Text written into its cells makes it be placed again over the new text.
        let mut out = Vec::new();
        s.render(rows(&[&img, "x", "below", "newer"]), 10, 4, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("a=d,d=a") && text.contains("a=p,q=2"), "{text:?}");

        // The image scrolled away: nothing of it is written, and leaving frees it.
        let mut out = Vec::new();
        s.render(rows(&["a", "b", "c", "d"]), 10, 4, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("a=d,d=a") && !text.contains("a=p"), "{text:?}");
        assert_eq!(s.exit_sequence(), "\x1b_Ga=d,d=A,q=2\x1b\\");
    }

    #[test]
    fn a_full_redraw_keeps_the_uploads() {
        let (img, payload) = kitty_image(930_002);
        let mut s = AltScreen::new();
        s.set_image_protocol(Some(ImageProtocol::Kitty));
        s.render(rows(&[&img, ""]), 10, 3, &mut Vec::new()).unwrap();
        let mut out = Vec::new();
        s.render(rows(&[&img, ""]), 12, 3, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        // ED 2 would free the data: only the placements go, and the image is placed again.
        assert!(!text.contains("\x1b[2J") && !text.contains(&payload), "{text:?}");
        assert!(text.contains("a=d,d=a") && text.contains("a=p,q=2"), "{text:?}");
    }
}
