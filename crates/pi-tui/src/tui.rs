//! The TUI: renders a root component plus an overlay stack through the diff renderer, and
//! routes input to the top capturing overlay or the root.

use std::io::{self, Write};

use crate::component::{Component, Frame};
use crate::input::InputEvent;
use crate::renderer::{FrameStats, Renderer};
use crate::width::{slice_columns, truncate_to_width, visible_width};

/// A size given in cells or as a percentage of the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeValue {
    Cells(usize),
    Percent(u8),
}

impl SizeValue {
    fn resolve(self, total: usize) -> usize {
        match self {
            SizeValue::Cells(n) => n,
            SizeValue::Percent(p) => total * p.min(100) as usize / 100,
        }
    }
}

/// Where an overlay sits on the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Anchor {
    Center,
    TopLeft,
    TopRight,
    BottomLeft,
    BottomRight,
    TopCenter,
    #[default]
    BottomCenter,
    LeftCenter,
    RightCenter,
}

/// Space kept free around an overlay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Margin {
    pub top: usize,
    pub right: usize,
    pub bottom: usize,
    pub left: usize,
}

impl Margin {
    pub fn all(n: usize) -> Self {
        Margin {
            top: n,
            right: n,
            bottom: n,
            left: n,
        }
    }
}

/// Placement and sizing of an overlay.
#[derive(Debug, Clone, Copy, Default)]
pub struct OverlayOptions {
    /// Width (default: the full width inside the margins).
    pub width: Option<SizeValue>,
    pub min_width: Option<usize>,
    pub max_height: Option<SizeValue>,
    pub anchor: Anchor,
    pub offset_x: isize,
    pub offset_y: isize,
    /// Absolute row/column (override the anchor on that axis).
    pub row: Option<SizeValue>,
    pub col: Option<SizeValue>,
    pub margin: Margin,
    /// Shown but does not take input.
    pub non_capturing: bool,
    /// Hide when the terminal is smaller than this (columns, rows).
    pub min_terminal: Option<(usize, usize)>,
}

/// Handle for a shown overlay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OverlayId(u64);

struct OverlayEntry {
    id: OverlayId,
    component: Box<dyn Component>,
    options: OverlayOptions,
    hidden: bool,
}

/// Root rendering and input routing for one terminal.
pub struct Tui {
    renderer: Renderer,
    overlays: Vec<OverlayEntry>,
    next_id: u64,
    width: usize,
    height: usize,
    root_focused: Option<bool>,
    show_hardware_cursor: bool,
    /// `terminal.clearOnShrink`, kept here so a new inline renderer gets it too.
    clear_on_shrink: bool,
    /// Set in fullscreen: the layout state and the alternate-screen renderer.
    fullscreen: Option<crate::fullscreen::Fullscreen>,
    /// Bytes for the terminal that are not part of a frame (OSC 52), written before the next.
    raw: String,
    /// Fullscreen: where the editor (or the dialogs in its place) was in the last frame.
    editor_area: Option<EditorArea>,
}

/// The editor's section of the last fullscreen frame, for the mouse.
#[derive(Debug, Clone, Default)]
struct EditorArea {
    /// Screen rows.
    rows: std::ops::Range<usize>,
    /// Lines of the section cut above its first row (a tall section keeps its cursor in view).
    skipped: usize,
    /// The docked dialogs drawn there, top to bottom, with their heights; empty when the
    /// editor itself was.
    docked: Vec<(OverlayId, usize)>,
}

/// What the application draws in fullscreen, top to bottom.
pub struct ScreenParts {
    /// The whole transcript; only the rows in view are copied.
    pub transcript: Frame,
    /// Queued messages, status and widgets above the editor, one entry per section (each
    /// gives up rows on its own when the dock is taller than the screen).
    pub above_editor: Vec<Vec<String>>,
    /// The editor; the top overlay is shown in its place.
    pub editor: Vec<String>,
    /// Widgets below the editor and the footer, one entry per section.
    pub below_editor: Vec<Vec<String>>,
}

impl Tui {
    pub fn new(width: usize, height: usize) -> Self {
        Tui {
            renderer: Renderer::new(),
            overlays: Vec::new(),
            next_id: 1,
            width: width.max(1),
            height: height.max(1),
            root_focused: None,
            show_hardware_cursor: false,
            clear_on_shrink: false,
            fullscreen: None,
            raw: String::new(),
            editor_area: None,
        }
    }

    /// Switch between the inline renderer and fullscreen (the caller switches the terminal).
    pub fn set_fullscreen(&mut self, on: bool) {
        if on == self.fullscreen.is_some() {
            return;
        }
        if on {
            let mut fs = crate::fullscreen::Fullscreen::new();
            fs.screen_mut().set_show_hardware_cursor(self.show_hardware_cursor);
            self.fullscreen = Some(fs);
        } else {
            // The inline renderer sat unused meanwhile; it goes on from its last frame on the
            // main screen the terminal kept (a fresh one when the run began in fullscreen).
            self.fullscreen = None;
            self.renderer.resume_main_screen();
            self.renderer.set_show_hardware_cursor(self.show_hardware_cursor);
            self.renderer.set_clear_on_shrink(self.clear_on_shrink);
        }
    }

    pub fn fullscreen(&self) -> Option<&crate::fullscreen::Fullscreen> {
        self.fullscreen.as_ref()
    }

    pub fn fullscreen_mut(&mut self) -> Option<&mut crate::fullscreen::Fullscreen> {
        self.fullscreen.as_mut()
    }

    /// Write `bytes` to the terminal before the next frame (e.g. an OSC 52 copy).
    pub fn queue_raw(&mut self, bytes: &str) {
        self.raw.push_str(bytes);
    }

    /// Give focus to the top capturing overlay, else to `root` (whose cursor then shows).
    pub fn sync_focus(&mut self, root: &mut dyn Component) {
        let focused = self.focused_overlay();
        let root_focus = focused.is_none();
        if self.root_focused != Some(root_focus) {
            root.set_focused(root_focus);
            self.root_focused = Some(root_focus);
        }
        for o in &mut self.overlays {
            o.component.set_focused(Some(o.id) == focused);
        }
    }

    /// Render a fullscreen frame of exactly the window's rows (call [`Tui::sync_focus`]
    /// with the root first).
    pub fn render_fullscreen<W: Write + ?Sized>(&mut self, parts: ScreenParts, out: &mut W) -> io::Result<()> {
        let (w, h) = (self.width, self.height);
        // Docked overlays (the default placement) take the editor's place; others float.
        let mut docked: Vec<String> = Vec::new();
        let mut docked_parts = Vec::new();
        let mut floating = false;
        for i in 0..self.overlays.len() {
            if !self.visible(&self.overlays[i]) {
                continue;
            }
            let o = &mut self.overlays[i];
            if is_docked(&o.options) {
                let lines = crate::component::render_lines(o.component.as_mut(), w);
                docked_parts.push((o.id, lines.len()));
                docked.extend(lines);
            } else {
                floating = true;
            }
        }
        use crate::fullscreen::dock::{fit_placed, DockSection};
        let mut sections: Vec<DockSection> = parts.above_editor.into_iter().map(|l| DockSection::new(l, 0)).collect();
        let editor_section = sections.len();
        let has_docked = !docked.is_empty();
        let editor = if has_docked { docked } else { parts.editor };
        // The editor (or what stands in its place) keeps three rows, as in pi 1.6.
        sections.push(DockSection::new(editor, 3));
        sections.extend(parts.below_editor.into_iter().map(|l| DockSection::new(l, 0)));
        let (dock, spans, skipped) = fit_placed(sections, h);
        // Where the editor or the dialogs in its place sit on the screen, for the mouse.
        let top = h.saturating_sub(dock.len());
        self.editor_area = spans.get(editor_section).map(|r| EditorArea {
            rows: top + r.start..top + r.end,
            skipped: skipped.get(editor_section).copied().unwrap_or(0),
            docked: if has_docked { docked_parts } else { Vec::new() },
        });
        if !self.raw.is_empty() {
            out.write_all(std::mem::take(&mut self.raw).as_bytes())?;
        }
        let Some(fs) = self.fullscreen.as_mut() else {
            return Ok(());
        };
        let mut rows = fs.compose(parts.transcript, dock, w, h);
        if floating {
            let mut f = Frame::new();
            f.extend_lines(rows);
            rows = self.composite_floating(f.sealed()).to_vec();
        }
        match self.fullscreen.as_mut() {
            Some(fs) => fs.screen_mut().render(rows, w, h, out),
            None => Ok(()),
        }
    }

    /// The screen rows of the editor in the last fullscreen frame, with the editor's own row
    /// shown first; `None` when a dialog stood in its place.
    pub fn editor_rows(&self) -> Option<(std::ops::Range<usize>, usize)> {
        let area = self.editor_area.as_ref().filter(|a| a.docked.is_empty())?;
        Some((area.rows.clone(), area.skipped))
    }

    /// Hand a mouse report at screen `(row, column)` to the dialog docked in the editor's
    /// place that was drawn there in the last frame, in its own rows. `None` when no docked
    /// dialog was there; else which dialog it was and whether it took the report.
    pub fn docked_mouse(
        &mut self,
        row: usize,
        column: usize,
        kind: crate::component_mouse::ComponentMouseKind,
    ) -> Option<(OverlayId, bool)> {
        let area = self.editor_area.as_ref()?;
        if area.docked.is_empty() || !area.rows.contains(&row) {
            return None;
        }
        let mut local = row - area.rows.start + area.skipped;
        let mut target = None;
        for &(id, height) in &area.docked {
            if local < height {
                target = Some(id);
                break;
            }
            local -= height;
        }
        let id = target?;
        let o = self.overlays.iter_mut().find(|o| o.id == id)?;
        let m = crate::component_mouse::ComponentMouse::new(kind, local, column);
        Some((id, o.component.handle_mouse(&m)))
    }

    pub fn size(&self) -> (usize, usize) {
        (self.width, self.height)
    }

    /// New terminal size; the next render redraws fully.
    pub fn set_size(&mut self, width: usize, height: usize) {
        self.width = width.max(1);
        self.height = height.max(1);
    }

    pub fn set_show_hardware_cursor(&mut self, on: bool) {
        self.show_hardware_cursor = on;
        self.renderer.set_show_hardware_cursor(on);
        if let Some(fs) = self.fullscreen.as_mut() {
            fs.screen_mut().set_show_hardware_cursor(on);
        }
    }

    /// `terminal.clearOnShrink` for the inline renderer (fullscreen redraws its own screen).
    pub fn set_clear_on_shrink(&mut self, on: bool) {
        self.clear_on_shrink = on;
        self.renderer.set_clear_on_shrink(on);
    }

    pub fn request_full_redraw(&mut self) {
        self.renderer.request_full_redraw();
        if let Some(fs) = self.fullscreen.as_mut() {
            fs.screen_mut().request_full_redraw();
        }
    }

    pub fn stats(&self) -> FrameStats {
        self.renderer.stats()
    }

    pub fn renderer(&self) -> &Renderer {
        &self.renderer
    }

    /// Show `component` over the frame; it takes input unless `non_capturing`.
    pub fn show_overlay(&mut self, component: Box<dyn Component>, options: OverlayOptions) -> OverlayId {
        let id = OverlayId(self.next_id);
        self.next_id += 1;
        self.overlays.push(OverlayEntry {
            id,
            component,
            options,
            hidden: false,
        });
        id
    }

    /// Remove an overlay, giving the component back.
    pub fn hide_overlay(&mut self, id: OverlayId) -> Option<Box<dyn Component>> {
        let pos = self.overlays.iter().position(|o| o.id == id)?;
        let mut entry = self.overlays.remove(pos);
        entry.component.set_focused(false);
        Some(entry.component)
    }

    /// Remove the topmost overlay.
    pub fn pop_overlay(&mut self) -> Option<Box<dyn Component>> {
        let id = self.overlays.last()?.id;
        self.hide_overlay(id)
    }

    /// Bring an overlay to the top (it then receives input if capturing).
    pub fn focus_overlay(&mut self, id: OverlayId) {
        if let Some(pos) = self.overlays.iter().position(|o| o.id == id) {
            let entry = self.overlays.remove(pos);
            self.overlays.push(entry);
        }
    }

    pub fn set_overlay_hidden(&mut self, id: OverlayId, hidden: bool) {
        if let Some(o) = self.overlays.iter_mut().find(|o| o.id == id) {
            o.hidden = hidden;
        }
    }

    /// Bring an overlay to the front and give it the keys (a non-capturing one too), as
    /// pi-tui's `OverlayHandle.focus()` does.
    pub fn raise_overlay(&mut self, id: OverlayId) {
        if let Some(i) = self.overlays.iter().position(|o| o.id == id) {
            let mut o = self.overlays.remove(i);
            o.options.non_capturing = false;
            self.overlays.push(o);
        }
    }

    pub fn is_overlay_hidden(&self, id: OverlayId) -> Option<bool> {
        self.overlays.iter().find(|o| o.id == id).map(|o| o.hidden)
    }

    pub fn has_overlays(&self) -> bool {
        !self.overlays.is_empty()
    }

    /// Whether an overlay floats over the screen (rather than standing in the editor's place,
    /// as dialogs and menus do); hidden ones count too, they come back.
    pub fn has_floating_overlays(&self) -> bool {
        self.overlays.iter().any(|o| !is_docked(&o.options))
    }

    /// The overlay's component as its concrete type.
    pub fn overlay_mut<T: Component>(&mut self, id: OverlayId) -> Option<&mut T> {
        let o = self.overlays.iter_mut().find(|o| o.id == id)?;
        o.component.as_mut().downcast_mut::<T>()
    }

    fn visible(&self, o: &OverlayEntry) -> bool {
        if o.hidden {
            return false;
        }
        match o.options.min_terminal {
            Some((w, h)) => self.width >= w && self.height >= h,
            None => true,
        }
    }

    /// The overlay that receives input, if any.
    pub fn focused_overlay(&self) -> Option<OverlayId> {
        self.overlays
            .iter()
            .rev()
            .find(|o| !o.options.non_capturing && self.visible(o))
            .map(|o| o.id)
    }

    /// Route input: the top capturing overlay gets it, else the root. Key releases are
    /// dropped unless the receiver asked for them. Returns whether it was consumed.
    pub fn handle_input(&mut self, event: &InputEvent, root: &mut dyn Component) -> bool {
        let target: &mut dyn Component = match self.focused_overlay() {
            Some(id) => match self.overlays.iter_mut().find(|o| o.id == id) {
                Some(o) => o.component.as_mut(),
                None => root,
            },
            None => root,
        };
        if let InputEvent::Key(k) = event {
            if k.is_release() && !target.wants_key_release() {
                return false;
            }
        }
        target.handle_input(event)
    }

    /// Drop every render cache (theme change) and redraw fully next time.
    pub fn invalidate(&mut self, root: &mut dyn Component) {
        root.invalidate();
        for o in &mut self.overlays {
            o.component.invalidate();
        }
        self.renderer.request_full_redraw();
    }

    /// Render the root and overlays and write the difference to `out`.
    pub fn render<W: Write + ?Sized>(&mut self, root: &mut dyn Component, out: &mut W) -> io::Result<()> {
        self.sync_focus(root);
        if !self.raw.is_empty() {
            out.write_all(std::mem::take(&mut self.raw).as_bytes())?;
        }
        let mut frame = Frame::new();
        root.render(self.width, &mut frame);
        let frame = self.composite(frame.sealed());
        self.renderer.set_has_overlays(!self.overlays.is_empty());
        self.renderer.render(frame, self.width, self.height, out)
    }

    /// Render the screen's parts inline (regular mode), as pi 1.6 lays them out: a docked
    /// dialog (a picker, /settings) in the editor's place, between the content above it and
    /// the footer; floating overlays over the frame. Call [`Tui::sync_focus`] first.
    pub fn render_parts<W: Write + ?Sized>(&mut self, parts: ScreenParts, out: &mut W) -> io::Result<()> {
        if !self.raw.is_empty() {
            out.write_all(std::mem::take(&mut self.raw).as_bytes())?;
        }
        let w = self.width;
        let mut docked: Vec<String> = Vec::new();
        let mut floating = false;
        for i in 0..self.overlays.len() {
            if !self.visible(&self.overlays[i]) {
                continue;
            }
            let o = &mut self.overlays[i];
            if is_docked(&o.options) {
                docked.extend(crate::component::render_lines(o.component.as_mut(), w));
            } else {
                floating = true;
            }
        }
        let mut frame = parts.transcript;
        for section in parts.above_editor {
            frame.extend_lines(section);
        }
        frame.extend_lines(if docked.is_empty() { parts.editor } else { docked });
        for section in parts.below_editor {
            frame.extend_lines(section);
        }
        let frame = self.composite_floating(frame.sealed());
        // Floating overlays need the rows below the content; docked ones are content.
        self.renderer.set_has_overlays(floating);
        self.renderer.render(frame, self.width, self.height, out)
    }

    /// Move the cursor below the content and show it (call before exiting).
    pub fn finish<W: Write + ?Sized>(&mut self, out: &mut W) -> io::Result<()> {
        self.renderer.finish(out)
    }

    /// Leave the screen at exit as pi 1.6 does (see [`Renderer::finish_spaced`]).
    pub fn finish_spaced<W: Write + ?Sized>(&mut self, out: &mut W) -> io::Result<()> {
        self.renderer.finish_spaced(out)
    }

    /// Overlays not docked in fullscreen, drawn over the screen rows.
    fn composite_floating(&mut self, base: Frame) -> Frame {
        self.composite_where(base, |o| !is_docked(o))
    }

    fn composite(&mut self, base: Frame) -> Frame {
        self.composite_where(base, |_| true)
    }

    fn composite_where(&mut self, base: Frame, take: impl Fn(&OverlayOptions) -> bool) -> Frame {
        let (w, h) = (self.width, self.height);
        let mut placed: Vec<(usize, usize, usize, Vec<String>)> = Vec::new();
        let visible: Vec<usize> = (0..self.overlays.len())
            .filter(|&i| self.visible(&self.overlays[i]) && take(&self.overlays[i].options))
            .collect();
        if visible.is_empty() {
            return base;
        }
        let mut rendered: Vec<(OverlayOptions, usize, Vec<String>)> = Vec::new();
        for i in visible {
            let o = &mut self.overlays[i];
            let opt = o.options;
            let m = opt.margin;
            let avail_w = w.saturating_sub(m.left + m.right).max(1);
            let avail_h = h.saturating_sub(m.top + m.bottom).max(1);
            let mut ow = opt.width.map_or(avail_w, |s| s.resolve(w));
            if let Some(min) = opt.min_width {
                ow = ow.max(min);
            }
            let ow = ow.clamp(1, avail_w);
            let mut lines = crate::component::render_lines(o.component.as_mut(), ow);
            let max_h = opt.max_height.map_or(avail_h, |s| s.resolve(h)).min(avail_h);
            lines.truncate(max_h);
            if !lines.is_empty() {
                rendered.push((opt, ow, lines));
            }
        }
        let total = base.len();
        // Overlays sit over the bottom of the frame: the area is the visible part of the
        // content, grown (up to the screen height) only as far as the tallest overlay needs.
        let tallest = rendered
            .iter()
            .map(|(o, _, l)| l.len() + o.margin.top + o.margin.bottom)
            .max()
            .unwrap_or(0);
        let area_h = h.min(total.max(tallest)).max(1);
        for (opt, ow, lines) in rendered {
            let (row, col) = position(&opt, w, area_h, ow, lines.len());
            placed.push((row, col, ow, lines));
        }
        let needed = placed.iter().map(|(r, _, _, l)| r + l.len()).max().unwrap_or(0);
        // Area row 0 is this content row; short content is padded so overlays fit.
        let top = total.saturating_sub(area_h);
        let (head, mut tail) = base.split_tail(top);
        while tail.len() < needed {
            tail.push(String::new());
        }
        for (row, col, ow, lines) in placed {
            // Images under the overlay are not drawn (the terminal would draw them over it).
            crate::kitty::hide_under(&mut tail, row, lines.len(), col, ow);
            for (k, ol) in lines.iter().enumerate() {
                let Some(base_line) = tail.get_mut(row + k) else { break };
                let left = slice_columns(base_line, 0, col);
                let right_w = w.saturating_sub(col + ow);
                let right = if right_w > 0 && visible_width(base_line) > col + ow {
                    slice_columns(base_line, col + ow, right_w)
                } else {
                    String::new()
                };
                let ol = truncate_to_width(ol, ow, "");
                let pad = ow.saturating_sub(visible_width(&ol));
                *base_line = format!("{left}\x1b[0m{ol}{}\x1b[0m{right}", " ".repeat(pad));
            }
        }
        let mut f = head;
        f.extend_lines(tail);
        f.sealed()
    }
}

/// Overlays with the default placement sit in the dock in fullscreen (as pi's selectors do).
fn is_docked(o: &OverlayOptions) -> bool {
    !o.non_capturing
        && o.anchor == Anchor::BottomCenter
        && o.width.is_none()
        && o.row.is_none()
        && o.col.is_none()
        && o.offset_x == 0
        && o.offset_y == 0
}

fn position(opt: &OverlayOptions, w: usize, h: usize, ow: usize, oh: usize) -> (usize, usize) {
    let m = opt.margin;
    let top = m.top;
    let bottom = h.saturating_sub(m.bottom + oh).max(top);
    let vcenter = (top + bottom) / 2;
    let left = m.left;
    let right = w.saturating_sub(m.right + ow).max(left);
    let hcenter = (left + right) / 2;
    let (r, c) = match opt.anchor {
        Anchor::Center => (vcenter, hcenter),
        Anchor::TopLeft => (top, left),
        Anchor::TopRight => (top, right),
        Anchor::BottomLeft => (bottom, left),
        Anchor::BottomRight => (bottom, right),
        Anchor::TopCenter => (top, hcenter),
        Anchor::BottomCenter => (bottom, hcenter),
        Anchor::LeftCenter => (vcenter, left),
        Anchor::RightCenter => (vcenter, right),
    };
    // A percentage places the overlay within the room it has: 0% at the top (left) margin,
    // 100% flush with the bottom (right) one, as pi-tui resolves it.
    let within = |s: SizeValue, start: usize, end: usize| match s {
        SizeValue::Cells(n) => n,
        SizeValue::Percent(p) => start + end.saturating_sub(start) * p.min(100) as usize / 100,
    };
    let r = opt.row.map_or(r, |s| within(s, top, bottom));
    let c = opt.col.map_or(c, |s| within(s, left, right));
    let r = (r as isize + opt.offset_y).clamp(0, h.saturating_sub(oh) as isize) as usize;
    let c = (c as isize + opt.offset_x).clamp(0, w.saturating_sub(ow) as isize) as usize;
    (r, c)
}

#[cfg(test)]
mod position_tests {
    use super::*;

    #[test]
    fn percentages_place_an_overlay_within_the_room_it_has() {
        let at = |row: u8, col: u8, margin: Margin| {
            let opt = OverlayOptions {
                row: Some(SizeValue::Percent(row)),
                col: Some(SizeValue::Percent(col)),
                margin,
                ..OverlayOptions::default()
            };
            position(&opt, 100, 30, 30, 10)
        };
        // pi-tui at 100x30, a 30x10 overlay: 50% is the middle of the 70 free columns.
        assert_eq!(at(0, 50, Margin::default()), (0, 35));
        assert_eq!(at(100, 100, Margin::default()), (20, 70));
        assert_eq!(at(50, 0, Margin::default()), (10, 0));
        // Margins narrow the room: 0% starts at the margin, 100% ends at the other one.
        assert_eq!(at(0, 0, Margin::all(2)), (2, 2));
        assert_eq!(at(100, 100, Margin::all(2)), (18, 68));
    }
}

#[cfg(test)]
mod mouse_tests {
    use super::*;
    use crate::component_mouse::ComponentMouseKind;
    use crate::components::{SelectItem, SelectList};

    fn parts(editor: usize, footer: usize) -> ScreenParts {
        ScreenParts {
            transcript: Frame::new().sealed(),
            above_editor: vec![],
            editor: (0..editor).map(|i| format!("editor {i}")).collect(),
            below_editor: vec![(0..footer).map(|i| format!("footer {i}")).collect()],
        }
    }

    #[test]
    fn the_mouse_finds_the_editor_or_the_list_docked_in_its_place() {
        let mut tui = Tui::new(40, 20);
        tui.set_fullscreen(true);
        tui.render_fullscreen(parts(3, 2), &mut Vec::new()).expect("frame");
        // 20 rows: the editor's three rows sit above the two footer rows.
        assert_eq!(tui.editor_rows(), Some((15..18, 0)));
        assert_eq!(tui.docked_mouse(16, 0, ComponentMouseKind::Press), None);
        let items = ["a", "b", "c"].map(SelectItem::new).to_vec();
        let id = tui.show_overlay(
            Box::new(SelectList::new(items, 5, Default::default())),
            OverlayOptions::default(),
        );
        tui.render_fullscreen(parts(3, 2), &mut Vec::new()).expect("frame");
        // The list's three rows stand in the editor's place (it keeps three rows at least).
        assert_eq!(tui.editor_rows(), None);
        assert_eq!(tui.docked_mouse(19, 0, ComponentMouseKind::Press), None);
        assert_eq!(tui.docked_mouse(17, 2, ComponentMouseKind::Press), Some((id, true)));
        let list = tui.overlay_mut::<SelectList>(id).expect("list");
        assert_eq!(list.selected_item().map(|i| i.value.as_str()), Some("c"));
    }
}
