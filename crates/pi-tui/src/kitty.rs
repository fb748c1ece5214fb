//! Kitty graphics bookkeeping: image ids and the sizes they were drawn at, reading an image
//! line back (rows covered, columns), cropping a placement, placement-only redraws of images
//! already transmitted, and the deletions the fullscreen renderer writes.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use crate::width::visible_width;

pub const KITTY_PREFIX: &str = "\x1b_G";
const ITERM2_PREFIX: &str = "\x1b]1337;File=";
/// Remove every placement on the screen but keep the transmitted image data.
pub const DELETE_ALL_PLACEMENTS: &str = "\x1b_Ga=d,d=a,q=2\x1b\\";
/// Remove every placement and free the image data.
pub const DELETE_ALL_IMAGES: &str = "\x1b_Ga=d,d=A,q=2\x1b\\";

/// Free the data of image `id` (and its placements).
pub fn delete_image(id: u32) -> String {
    format!("\x1b_Ga=d,d=I,i={id},q=2\x1b\\")
}

/// How an image was last drawn: its cells, its pixels and which transmission that was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageMeta {
    pub id: u32,
    pub cols: usize,
    pub rows: usize,
    pub width_px: u32,
    pub height_px: u32,
    pub generation: u64,
}

#[derive(Default)]
struct Registry {
    images: HashMap<u32, ImageMeta>,
    order: VecDeque<u32>,
    generation: u64,
    max_rows: usize,
}

/// Bounded as pi bounds it: the oldest of more than 1000 entries is forgotten.
const REGISTRY_LIMIT: usize = 1000;

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);
static NEXT_ID: AtomicU32 = AtomicU32::new(0);

/// A fresh image id. Ids start at a time-derived value so images from another program
/// sharing the terminal (an extension's own output) are unlikely to collide.
pub fn next_image_id() -> u32 {
    let _ = NEXT_ID.compare_exchange(0, seed(), Ordering::Relaxed, Ordering::Relaxed);
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    if id == 0 {
        NEXT_ID.fetch_add(1, Ordering::Relaxed)
    } else {
        id
    }
}

fn seed() -> u32 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.subsec_nanos() ^ (d.as_secs() as u32).rotate_left(16));
    (nanos ^ std::process::id().rotate_left(8)) | 1
}

/// Record that image `id` is transmitted at `cols` x `rows` cells; every registration is a
/// new transmission (its data must be sent again before it can be placed).
pub fn register(id: u32, cols: usize, rows: usize, width_px: u32, height_px: u32) {
    let Ok(mut guard) = REGISTRY.lock() else { return };
    let reg = guard.get_or_insert_with(Registry::default);
    reg.generation += 1;
    reg.max_rows = reg.max_rows.max(rows);
    if reg.images.contains_key(&id) {
        reg.order.retain(|&i| i != id);
    }
    reg.images.insert(
        id,
        ImageMeta {
            id,
            cols,
            rows,
            width_px,
            height_px,
            generation: reg.generation,
        },
    );
    reg.order.push_back(id);
    if reg.order.len() > REGISTRY_LIMIT {
        if let Some(old) = reg.order.pop_front() {
            reg.images.remove(&old);
        }
    }
}

/// Rows of the tallest image registered: how far above the viewport an image line can be
/// and still reach into it.
pub fn max_rows() -> usize {
    REGISTRY
        .lock()
        .ok()
        .and_then(|g| g.as_ref().map(|r| r.max_rows))
        .unwrap_or(0)
}

fn lookup(id: u32) -> Option<ImageMeta> {
    REGISTRY.lock().ok()?.as_ref()?.images.get(&id).copied()
}

/// The line carries a Kitty or iTerm2 image sequence.
pub fn is_image_line(line: &str) -> bool {
    line.contains(KITTY_PREFIX) || line.contains(ITERM2_PREFIX)
}

/// Byte offset of the first Kitty command and its control keys (between `ESC _ G` and `;`).
fn first_command(line: &str) -> Option<(usize, &str)> {
    let start = line.find(KITTY_PREFIX)?;
    let rest = &line[start + KITTY_PREFIX.len()..];
    let end = rest.find(';')?;
    // A control list never holds an escape: a `;` beyond the command's end is not its own.
    let controls = &rest[..end];
    (!controls.contains('\x1b')).then_some((start, controls))
}

fn control(controls: &str, key: &str) -> Option<u32> {
    controls
        .split(',')
        .find_map(|c| c.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
        .and_then(|v| v.parse().ok())
}

/// The registered image a line places.
pub fn meta_of(line: &str) -> Option<ImageMeta> {
    let (_, controls) = first_command(line)?;
    lookup(control(controls, "i")?)
}

/// Rows the line's Kitty placement covers (its `r=`, else the registered height).
pub fn placement_rows(line: &str) -> Option<usize> {
    let (_, controls) = first_command(line)?;
    match control(controls, "r") {
        Some(r) if r > 0 => Some(r as usize),
        _ => lookup(control(controls, "i")?).map(|m| m.rows),
    }
}

/// The cells an image line draws over, relative to its own row: Kitty images extend down
/// from the line, iTerm2 lines move up first and end on it. `(first_row, last_row, from, to)`.
pub fn extent(line: &str) -> Option<(isize, isize, usize, usize)> {
    if let Some((start, controls)) = first_command(line) {
        let cols = control(controls, "c")
            .map(|c| c as usize)
            .or_else(|| lookup(control(controls, "i")?).map(|m| m.cols))
            .unwrap_or(usize::MAX / 2);
        let from = visible_width(&line[..start]);
        let rows = placement_rows(line).unwrap_or(1).max(1);
        return Some((0, rows as isize - 1, from, from.saturating_add(cols)));
    }
    let start = line.find(ITERM2_PREFIX)?;
    let before = &line[..start];
    let (text, up) = split_cursor_up(before);
    let from = visible_width(text);
    let width = line[start..]
        .split([';', ':'])
        .find_map(|p| p.strip_prefix("width="))
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(usize::MAX / 2);
    Some((-(up as isize), 0, from, from.saturating_add(width)))
}

/// `before` without a trailing `CSI n A`, and `n`.
fn split_cursor_up(before: &str) -> (&str, usize) {
    if let Some(body) = before.strip_suffix('A') {
        if let Some(pos) = body.rfind("\x1b[") {
            if let Ok(n) = body[pos + 2..].parse::<usize>() {
                return (&before[..pos], n);
            }
        }
    }
    (before, 0)
}

/// The line without its image sequences (an iTerm2 image's cursor-up included), keeping
/// the text: the image is not drawn, the row is.
pub fn strip_images(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    loop {
        let kitty = rest.find(KITTY_PREFIX);
        let iterm = rest.find(ITERM2_PREFIX);
        let (at, is_kitty) = match (kitty, iterm) {
            (Some(k), Some(i)) => (k.min(i), k < i),
            (Some(k), None) => (k, true),
            (None, Some(i)) => (i, false),
            (None, None) => break,
        };
        let head = &rest[..at];
        if is_kitty {
            out.push_str(head);
            rest = rest[at..].find("\x1b\\").map_or("", |e| &rest[at + e + 2..]);
        } else {
            out.push_str(split_cursor_up(head).0);
            rest = rest[at..].find('\x07').map_or("", |e| &rest[at + e + 1..]);
        }
    }
    out.push_str(rest);
    out
}

/// The line with its Kitty placement showing only `visible` rows from row `hidden` of the
/// image (source rows chosen from the image's pixel height).
pub fn crop(line: &str, hidden: usize, visible: usize) -> String {
    let (Some(meta), Some((start, controls))) = (meta_of(line), first_command(line)) else {
        return line.to_string();
    };
    if hidden >= meta.rows || visible == 0 {
        return line.to_string();
    }
    let rows = visible.min(meta.rows - hidden);
    if hidden == 0 && rows == meta.rows {
        return line.to_string();
    }
    let h = meta.height_px as u64;
    let y = h * hidden as u64 / meta.rows as u64;
    let end = (h * (hidden + rows) as u64).div_ceil(meta.rows as u64);
    let height = (end.min(h).saturating_sub(y)).max(1);
    let mut kept: Vec<String> = controls
        .split(',')
        .filter(|c| !(c.starts_with("y=") || c.starts_with("h=") || c.starts_with("r=")))
        .map(str::to_string)
        .collect();
    kept.extend([format!("y={y}"), format!("h={height}"), format!("r={rows}")]);
    let after = start + KITTY_PREFIX.len() + controls.len();
    format!("{}{KITTY_PREFIX}{}{}", &line[..start], kept.join(","), &line[after..])
}

/// Control keys a placement (`a=p`) takes over from the transmission.
const PLACEMENT_KEYS: &[&str] = &[
    "i", "p", "x", "y", "w", "h", "X", "Y", "c", "r", "C", "U", "z", "P", "Q", "H", "V",
];

/// A transmitting image line as a placement of data already sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub id: u32,
    pub generation: u64,
    /// Bytes of the transmission (all chunks).
    pub transmission_bytes: usize,
    /// What the terminal holds decoded: width x height x 4.
    pub decoded_bytes: u64,
    /// The line with the transmission replaced by `a=p` with the same placement keys.
    pub replacement: String,
}

/// Read the transmission on `line` (chunks included) as a placement-only command.
pub fn placement(line: &str) -> Option<Placement> {
    let (start, controls) = first_command(line)?;
    let meta = lookup(control(controls, "i")?)?;
    // Follow the chunks (`m=1` means more follow) to the end of the transmission.
    let mut at = start;
    let mut cmd_controls = controls;
    let end = loop {
        let term = line[at + KITTY_PREFIX.len()..].find("\x1b\\")? + at + KITTY_PREFIX.len() + 2;
        if !cmd_controls.split(',').any(|c| c == "m=1") {
            break term;
        }
        at = term;
        let rest = line.get(at..)?.strip_prefix(KITTY_PREFIX)?;
        cmd_controls = &rest[..rest.find(';')?];
    };
    let keys: Vec<&str> = controls
        .split(',')
        .filter(|c| PLACEMENT_KEYS.contains(&c.split('=').next().unwrap_or("")))
        .collect();
    let seq = format!("{KITTY_PREFIX}a=p,q=2,{}\x1b\\", keys.join(","));
    Some(Placement {
        id: meta.id,
        generation: meta.generation,
        transmission_bytes: end - start,
        decoded_bytes: meta.width_px as u64 * meta.height_px as u64 * 4,
        replacement: format!("{}{seq}{}", &line[..start], &line[end..]),
    })
}

/// Remove the images whose cells meet the box at `top`..`top + height`, `left`..`left +
/// width` (row indexes of `rows`); their rows' text stays. Terminals draw images above text, so a
/// box drawn over one would not show.
pub fn hide_under(rows: &mut [String], top: usize, height: usize, left: usize, width: usize) {
    if height == 0 || width == 0 {
        return;
    }
    let (top, bottom) = (top as isize, (top + height) as isize);
    for (i, row) in rows.iter_mut().enumerate() {
        let Some((first, last, from, to)) = extent(row) else {
            continue;
        };
        let (first, last) = (i as isize + first, i as isize + last);
        if first < bottom && last >= top && from < left + width && to > left {
            *row = strip_images(row);
        }
    }
}

/// Images kept by the terminal that are not on screen, at most (as pi keeps them).
pub const MAX_OFFSCREEN_IMAGES: usize = 16;
pub const MAX_OFFSCREEN_TRANSMITTED: usize = 32 * 1024 * 1024;
pub const MAX_OFFSCREEN_DECODED: u64 = 64 * 1024 * 1024;

#[derive(Debug, Clone, Copy)]
struct Uploaded {
    id: u32,
    generation: u64,
    transmission_bytes: usize,
    decoded_bytes: u64,
}

/// The images the terminal holds, least recently shown first.
#[derive(Debug, Default)]
pub struct Uploads {
    held: Vec<Uploaded>,
}

impl Uploads {
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    pub fn clear(&mut self) {
        self.held.clear();
    }

    /// The rows to write for a frame: images already transmitted (same generation) become
    /// placements; the rest transmit and are remembered. Also the deletions of off-screen
    /// images past the cache limits, oldest first.
    pub fn prepare(&mut self, rows: &[String]) -> (Vec<String>, String) {
        let mut shown: Vec<u32> = Vec::new();
        let lines = rows
            .iter()
            .map(|line| {
                let Some(p) = placement(line) else {
                    return line.clone();
                };
                shown.push(p.id);
                let before = self.held.iter().position(|u| u.id == p.id).map(|i| self.held.remove(i));
                self.held.push(Uploaded {
                    id: p.id,
                    generation: p.generation,
                    transmission_bytes: p.transmission_bytes,
                    decoded_bytes: p.decoded_bytes,
                });
                if before.is_some_and(|b| b.generation == p.generation) {
                    p.replacement
                } else {
                    line.clone()
                }
            })
            .collect();
        let offscreen = |h: &[Uploaded]| {
            h.iter()
                .filter(|u| !shown.contains(&u.id))
                .fold((0, 0, 0), |(n, t, d), u| {
                    (n + 1, t + u.transmission_bytes, d + u.decoded_bytes)
                })
        };
        let (mut n, mut t, mut d) = offscreen(&self.held);
        let mut deletions = String::new();
        let mut i = 0;
        while i < self.held.len()
            && (n > MAX_OFFSCREEN_IMAGES || t > MAX_OFFSCREEN_TRANSMITTED || d > MAX_OFFSCREEN_DECODED)
        {
            let u = self.held[i];
            if shown.contains(&u.id) {
                i += 1;
                continue;
            }
            deletions.push_str(&delete_image(u.id));
            self.held.remove(i);
            n -= 1;
            t -= u.transmission_bytes;
            d -= u.decoded_bytes;
        }
        (lines, deletions)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An image line as `Image` draws it: id `id`, `rows` rows of a 90 x `18 * rows` px image.
    fn image_line(id: u32, rows: usize, payload: &str) -> String {
        register(id, 10, rows, 90, 18 * rows as u32);
        crate::components::encode_kitty(payload, 10, rows, Some(id))
    }

    #[test]
    fn a_transmission_becomes_a_placement_of_the_same_cells() {
        let line = format!("  {}", image_line(910_001, 3, &"A".repeat(5000)));
        let p = placement(&line).expect("registered image");
        assert_eq!(p.id, 910_001);
        assert_eq!(p.replacement, "  \x1b_Ga=p,q=2,C=1,c=10,r=3,i=910001\x1b\\");
        assert_eq!(p.transmission_bytes, line.len() - 2, "both chunks");
        assert_eq!(p.decoded_bytes, 90 * 54 * 4);
        assert_eq!(extent(&line), Some((0, 2, 2, 12)));
        // Unregistered images are left alone.
        assert_eq!(placement("\x1b_Ga=T,f=100,i=5;AAAA\x1b\\"), None);
    }

    #[test]
    fn cropping_picks_the_source_rows_in_view() {
        let line = image_line(910_002, 4, "AAAA");
        assert_eq!(
            crop(&line, 1, 2),
            "\x1b_Ga=T,f=100,q=2,C=1,c=10,i=910002,y=18,h=36,r=2;AAAA\x1b\\"
        );
        assert_eq!(crop(&line, 0, 4), line, "nothing hidden");
        assert_eq!(
            crop(&line, 3, 9),
            "\x1b_Ga=T,f=100,q=2,C=1,c=10,i=910002,y=54,h=18,r=1;AAAA\x1b\\"
        );
        assert_eq!(placement_rows(&crop(&line, 1, 2)), Some(2));
    }

    #[test]
    fn stripping_keeps_the_text() {
        let line = format!("ab{}cd", image_line(910_003, 2, &"B".repeat(9000)));
        assert_eq!(strip_images(&line), "abcd");
        let iterm = "x\x1b[2A\x1b]1337;File=inline=1;width=5;height=auto:QUJD\x07y";
        assert_eq!(strip_images(iterm), "xy");
        assert_eq!(extent(iterm), Some((-2, 0, 1, 6)));
        let mut rows = vec![line.clone(), String::new(), "z".to_string()];
        hide_under(&mut rows, 1, 1, 20, 5);
        assert_eq!(rows[0], line, "the box is beside the image");
        hide_under(&mut rows, 1, 1, 5, 5);
        assert_eq!(rows[0], "abcd");
    }

    #[test]
    fn uploads_are_placed_again_and_evicted_past_the_limit() {
        let mut uploads = Uploads::default();
        let first = image_line(920_000, 2, "CCCC");
        let (lines, del) = uploads.prepare(std::slice::from_ref(&first));
        assert_eq!((lines[0].as_str(), del.as_str()), (first.as_str(), ""));
        let (lines, _) = uploads.prepare(&[String::new(), first.clone()]);
        assert_eq!(lines[1], "\x1b_Ga=p,q=2,C=1,c=10,r=2,i=920000\x1b\\");
        // Drawn again at another size: a new transmission, sent whole.
        let redrawn = image_line(920_000, 2, "CCCC");
        assert_eq!(uploads.prepare(std::slice::from_ref(&redrawn)).0[0], redrawn);
        // 17 more images shown one after the other: the oldest off-screen one goes.
        let mut deleted = String::new();
        for k in 1..=MAX_OFFSCREEN_IMAGES + 1 {
            let line = image_line(920_000 + k as u32, 1, "DD");
            deleted.push_str(&uploads.prepare(&[line]).1);
        }
        assert_eq!(deleted, delete_image(920_000));
        assert_eq!(uploads.held.len(), MAX_OFFSCREEN_IMAGES + 1);
    }
}
