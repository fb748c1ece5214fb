//! The real terminal: raw mode, bracketed paste, the kitty keyboard protocol (or the
//! modifyOtherKeys fallback), title/progress sequences, size, a stdin reader thread, a resize
//! watcher, and restoring everything on stop, on drop and on panic.

use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Once;
use std::time::Duration;

/// Flags pushed when the terminal answers the kitty query: disambiguate, report event types,
/// report alternate keys.
pub const KITTY_FLAGS: u32 = 7;

const BRACKETED_PASTE_ON: &str = "\x1b[?2004h";
const BRACKETED_PASTE_OFF: &str = "\x1b[?2004l";
const KITTY_QUERY: &str = "\x1b[?u";
const KITTY_POP: &str = "\x1b[<u";
const MOK_ON: &str = "\x1b[>4;2m";
const MOK_OFF: &str = "\x1b[>4;0m";
const CURSOR_HIDE: &str = "\x1b[?25l";
const CURSOR_SHOW: &str = "\x1b[?25h";

// What the panic hook must undo (the terminal object itself may be unreachable then).
static ACTIVE: AtomicBool = AtomicBool::new(false);
const MODE_KITTY: u8 = 1;
const MODE_MOK: u8 = 2;
const MODE_FULLSCREEN: u8 = 4;
const MODE_COLOR_SCHEME: u8 = 8;
/// Colour scheme change notifications (mode 2031: `CSI ? 997 ; 1|2 n` on a dark/light switch).
const COLOR_SCHEME_ON: &str = "\x1b[?2031h";
const COLOR_SCHEME_OFF: &str = "\x1b[?2031l";
static MODES: AtomicU8 = AtomicU8::new(0);
static HOOK: Once = Once::new();

/// Alternate screen, autowrap off, mouse buttons + drag (+ any motion) + focus, SGR encoding.
fn fullscreen_on(any_motion: bool) -> String {
    let motion = if any_motion { "\x1b[?1003h" } else { "" };
    format!("\x1b[?1049h\x1b[?7l\x1b[?1000h\x1b[?1002h{motion}\x1b[?1004h\x1b[?1006h\x1b[2J\x1b[H{CURSOR_HIDE}")
}

/// Mouse and focus reporting off, autowrap on, back to the normal screen.
const FULLSCREEN_OFF: &str = "\x1b[?1006l\x1b[?1004l\x1b[?1003l\x1b[?1002l\x1b[?1000l\x1b[?7h\x1b[?1049l";

/// Multiplexers forward any-motion reports badly: there only button motion is asked for.
pub fn in_multiplexer() -> bool {
    let set = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
    let term = std::env::var("TERM").unwrap_or_default();
    set("TMUX") || set("STY") || set("ZELLIJ") || term.starts_with("tmux") || term.starts_with("screen")
}

fn set_mode(bit: u8, on: bool) {
    if on {
        MODES.fetch_or(bit, Ordering::SeqCst);
    } else {
        MODES.fetch_and(!bit, Ordering::SeqCst);
    }
}

fn restore_sequence(modes: u8) -> String {
    let mut s = String::new();
    if modes & MODE_FULLSCREEN != 0 {
        s.push_str(FULLSCREEN_OFF);
    }
    if modes & MODE_KITTY != 0 {
        s.push_str(KITTY_POP);
    }
    if modes & MODE_MOK != 0 {
        s.push_str(MOK_OFF);
    }
    if modes & MODE_COLOR_SCHEME != 0 {
        s.push_str(COLOR_SCHEME_OFF);
    }
    s.push_str(BRACKETED_PASTE_OFF);
    s.push_str("\x1b[?2026l");
    s.push_str(CURSOR_SHOW);
    s
}

/// Put the terminal back as it was (raw mode off, modes undone). For paths that cannot reach
/// the [`Terminal`]: signal handlers, emergency exits. Idempotent.
pub fn restore_now() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let modes = MODES.swap(0, Ordering::SeqCst);
        let mut out = io::stdout();
        let _ = out.write_all(restore_sequence(modes).as_bytes());
        let _ = out.flush();
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

fn install_panic_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore_now();
            previous(info);
        }));
    });
}

/// Terminal size in cells: the tty, else `COLUMNS`/`LINES`, else 80x24.
pub fn terminal_size() -> (usize, usize) {
    if let Ok((w, h)) = crossterm::terminal::size() {
        if w > 0 && h > 0 {
            return (w as usize, h as usize);
        }
    }
    let env = |k: &str| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .filter(|&n| n > 0)
    };
    (env("COLUMNS").unwrap_or(80), env("LINES").unwrap_or(24))
}

/// Where `PI_TUI_WRITE_LOG` asks every terminal write to be copied: a file, or inside a
/// directory one `tui-<unix seconds>-<pid>.log` per process.
fn write_log_from_env() -> Option<std::fs::File> {
    let v = std::env::var_os("PI_TUI_WRITE_LOG").filter(|v| !v.is_empty())?;
    let mut path = std::path::PathBuf::from(v);
    if path.is_dir() {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        path = path.join(format!("tui-{secs}-{}.log", std::process::id()));
    }
    std::fs::OpenOptions::new().create(true).append(true).open(path).ok()
}

/// The process's terminal in interactive mode. Writes go to stdout.
pub struct Terminal {
    out: io::Stdout,
    log: Option<std::fs::File>,
    kitty: bool,
    modify_other_keys: bool,
    fullscreen: bool,
    started: bool,
    program_status: ProgramStatusLink,
    /// The progress indicator is on: when it was last sent (terminals drop it after a while
    /// without news, so it is sent again every second).
    progress: Option<std::time::Instant>,
}

/// OSC 9;4 progress: on (indeterminate), and off.
const PROGRESS_ON: &str = "\x1b]9;4;3\x07";
const PROGRESS_OFF: &str = "\x1b]9;4;0\x07";
/// How often the progress indicator is sent again while on.
const PROGRESS_KEEPALIVE: std::time::Duration = std::time::Duration::from_secs(1);

/// Program status (OSC 7501) on this terminal: whether it may be sent, and the last report,
/// sent again once support is confirmed or after a restart.
#[derive(Debug, Default, Clone)]
struct ProgramStatusLink {
    supported: bool,
    query_pending: bool,
    last: Option<String>,
}

impl Terminal {
    /// Enter raw mode, turn on bracketed paste, hide the cursor and query the kitty protocol.
    /// Feed the reply (`InputEvent::KittyFlags`) to [`Terminal::enable_kitty`]; if none comes
    /// within ~150 ms call [`Terminal::enable_fallback_keys`].
    pub fn start() -> io::Result<Terminal> {
        install_panic_hook();
        crossterm::terminal::enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        let mut t = Terminal {
            out: io::stdout(),
            log: write_log_from_env(),
            kitty: false,
            modify_other_keys: false,
            fullscreen: false,
            started: true,
            program_status: ProgramStatusLink::default(),
            progress: None,
        };
        // `PI_PROGRAM_STATUS=1` or `0` decides without asking the terminal.
        let forced = std::env::var("PI_PROGRAM_STATUS").ok();
        t.program_status.supported = forced.as_deref() == Some("1");
        t.program_status.query_pending = !matches!(forced.as_deref(), Some("1" | "0"));
        let query = if t.program_status.query_pending {
            crate::program_status::PROGRAM_STATUS_QUERY
        } else {
            ""
        };
        t.out
            .write_all(format!("{BRACKETED_PASTE_ON}{CURSOR_HIDE}{KITTY_QUERY}{query}").as_bytes())?;
        t.out.flush()?;
        Ok(t)
    }

    pub fn kitty_active(&self) -> bool {
        self.kitty
    }

    /// The terminal answered the program status query: from now on reports are sent, the
    /// latest one right away.
    pub fn program_status_confirmed(&mut self) -> io::Result<()> {
        if !self.program_status.query_pending {
            return Ok(());
        }
        self.program_status.query_pending = false;
        self.program_status.supported = true;
        self.write_program_status()
    }

    /// Report the program's status (sent only where the terminal supports it).
    pub fn set_program_status(&mut self, status: &crate::program_status::ProgramStatus) -> io::Result<()> {
        let encoded = status.encode();
        self.program_status.last =
            (status.state != crate::program_status::ProgramState::Clear).then(|| encoded.clone());
        if !self.program_status.supported {
            return Ok(());
        }
        self.out.write_all(encoded.as_bytes())?;
        self.out.flush()
    }

    /// As a stop and a start do to the program status: the shown one is cleared, and the
    /// terminal is asked again whether it takes reports (the last report is sent once it
    /// says yes, or at once with `PI_PROGRAM_STATUS=1`).
    pub fn requery_program_status(&mut self) -> io::Result<()> {
        let mut out = String::new();
        if self.program_status.supported && self.program_status.last.is_some() {
            let clear = crate::program_status::ProgramStatus::new(crate::program_status::ProgramState::Clear);
            out.push_str(&clear.encode());
        }
        let forced = std::env::var("PI_PROGRAM_STATUS").ok();
        self.program_status.supported = forced.as_deref() == Some("1");
        self.program_status.query_pending = !matches!(forced.as_deref(), Some("1" | "0"));
        if self.program_status.query_pending {
            out.push_str(crate::program_status::PROGRAM_STATUS_QUERY);
        }
        self.out.write_all(out.as_bytes())?;
        self.out.flush()?;
        self.write_program_status()
    }

    fn write_program_status(&mut self) -> io::Result<()> {
        if let (true, Some(last)) = (self.program_status.supported, self.program_status.last.as_ref()) {
            self.out.write_all(last.as_bytes())?;
            self.out.flush()?;
        }
        Ok(())
    }

    /// The terminal answered the kitty query: push our flags.
    pub fn enable_kitty(&mut self) -> io::Result<()> {
        if self.kitty {
            return Ok(());
        }
        if self.modify_other_keys {
            self.out.write_all(MOK_OFF.as_bytes())?;
            self.modify_other_keys = false;
        }
        self.out.write_all(format!("\x1b[>{KITTY_FLAGS}u").as_bytes())?;
        self.out.flush()?;
        self.kitty = true;
        set_mode(MODE_KITTY, true);
        Ok(())
    }

    /// No kitty reply: ask for xterm modifyOtherKeys mode 2 instead.
    pub fn enable_fallback_keys(&mut self) -> io::Result<()> {
        if self.kitty || self.modify_other_keys {
            return Ok(());
        }
        self.out.write_all(MOK_ON.as_bytes())?;
        self.out.flush()?;
        self.modify_other_keys = true;
        set_mode(MODE_MOK, true);
        Ok(())
    }

    pub fn size(&self) -> (usize, usize) {
        terminal_size()
    }

    /// Window title (OSC 0).
    pub fn set_title(&mut self, title: &str) -> io::Result<()> {
        let clean: String = title.chars().filter(|c| !c.is_control()).collect();
        self.out.write_all(format!("\x1b]0;{clean}\x07").as_bytes())?;
        self.out.flush()
    }

    /// Taskbar/tab progress indicator (OSC 9;4): busy, or cleared.
    pub fn set_progress(&mut self, active: bool) -> io::Result<()> {
        self.progress = active.then(std::time::Instant::now);
        self.out
            .write_all(if active { PROGRESS_ON } else { PROGRESS_OFF }.as_bytes())?;
        self.out.flush()
    }

    /// Whether the progress indicator is on (as last sent).
    pub fn progress_active(&self) -> bool {
        self.progress.is_some()
    }

    /// Send the progress indicator again when it is on and a second went by since.
    pub fn keep_progress_alive(&mut self) -> io::Result<()> {
        match self.progress {
            Some(sent) if sent.elapsed() >= PROGRESS_KEEPALIVE => self.set_progress(true),
            _ => Ok(()),
        }
    }

    /// Ask for the foreground and background colours (OSC 10 / 11; replies:
    /// `InputEvent::TerminalColor`), with `palette` the 16 ANSI colours too (OSC 4;
    /// `InputEvent::PaletteColor`), then for the device attributes (`InputEvent::
    /// DeviceAttributes`), whose answer comes after every colour the terminal will report.
    /// Also (once) asks to be told when the terminal switches between dark and light (mode
    /// 2031; `InputEvent::ColorScheme`), as pi 1.6 does. Nothing here waits for the replies:
    /// see [`read_stdin_for`].
    pub fn query_colors(&mut self, palette: bool) -> io::Result<()> {
        if MODES.load(Ordering::SeqCst) & MODE_COLOR_SCHEME == 0 {
            self.out.write_all(COLOR_SCHEME_ON.as_bytes())?;
            set_mode(MODE_COLOR_SCHEME, true);
        }
        let mut query = String::from("\x1b]10;?\x07\x1b]11;?\x07");
        if palette {
            for i in 0..16 {
                query.push_str(&format!("\x1b]4;{i};?\x07"));
            }
        }
        query.push_str("\x1b[c");
        self.out.write_all(query.as_bytes())?;
        self.out.flush()
    }

    /// Ask for the cell size in pixels (reply: `InputEvent::CellSize`).
    pub fn query_cell_size(&mut self) -> io::Result<()> {
        self.out.write_all(b"\x1b[16t")?;
        self.out.flush()
    }

    /// Turn off the kitty protocol / modifyOtherKeys only. Call this, keep reading (and
    /// discarding) input until it has been quiet for ~50 ms, then `stop`: late key-release
    /// sequences are then not left for the shell to print.
    pub fn disable_key_protocols(&mut self) -> io::Result<()> {
        let mut s = String::new();
        if self.kitty {
            s.push_str(KITTY_POP);
        }
        if self.modify_other_keys {
            s.push_str(MOK_OFF);
        }
        self.kitty = false;
        self.modify_other_keys = false;
        set_mode(MODE_KITTY | MODE_MOK, false);
        self.out.write_all(s.as_bytes())?;
        self.out.flush()
    }

    /// Take over the whole window: the alternate screen with mouse and focus reporting.
    /// Undone by [`Terminal::leave_fullscreen`], `stop`, drop, a panic or [`restore_now`].
    pub fn enter_fullscreen(&mut self) -> io::Result<()> {
        if self.fullscreen {
            return Ok(());
        }
        self.out.write_all(fullscreen_on(!in_multiplexer()).as_bytes())?;
        self.out.flush()?;
        self.fullscreen = true;
        set_mode(MODE_FULLSCREEN, true);
        Ok(())
    }

    /// Back to the normal screen (mouse reporting off, autowrap on).
    pub fn leave_fullscreen(&mut self) -> io::Result<()> {
        if !self.fullscreen {
            return Ok(());
        }
        self.fullscreen = false;
        set_mode(MODE_FULLSCREEN, false);
        self.out.write_all(FULLSCREEN_OFF.as_bytes())?;
        self.out.flush()
    }

    pub fn is_fullscreen(&self) -> bool {
        self.fullscreen
    }

    /// Restore the terminal (idempotent). Call before suspending or exiting.
    pub fn stop(&mut self) -> io::Result<()> {
        if !self.started {
            return Ok(());
        }
        self.started = false;
        // Stopped (exit, suspend): the indicator goes, as pi clears it.
        if self.progress.take().is_some() {
            self.out.write_all(PROGRESS_OFF.as_bytes())?;
        }
        if self.program_status.supported && self.program_status.last.is_some() {
            let clear = crate::program_status::ProgramStatus::new(crate::program_status::ProgramState::Clear);
            self.out.write_all(clear.encode().as_bytes())?;
        }
        self.program_status.supported = false;
        self.program_status.query_pending = false;
        // The panic hook may have restored everything already.
        if !ACTIVE.swap(false, Ordering::SeqCst) {
            return Ok(());
        }
        let mut modes = 0;
        if self.kitty {
            modes |= MODE_KITTY;
        }
        if self.modify_other_keys {
            modes |= MODE_MOK;
        }
        if self.fullscreen {
            modes |= MODE_FULLSCREEN;
        }
        modes |= MODES.load(Ordering::SeqCst) & MODE_COLOR_SCHEME;
        self.kitty = false;
        self.modify_other_keys = false;
        self.fullscreen = false;
        MODES.store(0, Ordering::SeqCst);
        self.out.write_all(restore_sequence(modes).as_bytes())?;
        self.out.flush()?;
        crossterm::terminal::disable_raw_mode()
    }

    /// Re-enter raw mode after `stop` (e.g. after resuming from suspend).
    pub fn restart(&mut self) -> io::Result<()> {
        if self.started {
            return Ok(());
        }
        let last = self.program_status.last.take();
        *self = Terminal::start()?;
        self.program_status.last = last;
        self.write_program_status()
    }
}

impl Write for Terminal {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.out.write(buf)?;
        if let Some(log) = self.log.as_mut() {
            // Debug aid only: a failing log must not break the display.
            let _ = log.write_all(&buf[..n]);
        }
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// Read what arrives on stdin for at most `timeout`, stopping as soon as `done` accepts the
/// bytes read so far (the answer to a query, say). A terminal that never answers costs the
/// timeout and no more; the bytes are returned for the normal input handling (keys typed
/// meanwhile are not lost).
#[allow(unsafe_code)] // poll(2) and read(2) on stdin with a timeout; std has no way to wait.
pub fn read_stdin_for(timeout: Duration, done: impl Fn(&[u8]) -> bool) -> Vec<u8> {
    let deadline = std::time::Instant::now() + timeout;
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
        let mut fd = libc::pollfd {
            fd: libc::STDIN_FILENO,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd for the length given.
        let ready = unsafe { libc::poll(&mut fd, 1, ms) };
        if ready < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            break;
        }
        if ready == 0 || fd.revents & libc::POLLIN == 0 {
            break;
        }
        // SAFETY: reads into a buffer of the length given.
        let n = unsafe { libc::read(libc::STDIN_FILENO, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        got.extend_from_slice(&buf[..n as usize]);
        if done(&got) {
            break;
        }
    }
    got
}

/// Read stdin on a background thread, handing each chunk to `on_data`. The thread ends at
/// end of input (after calling `on_eof`) or when `on_data` returns false.
pub fn spawn_stdin_reader(
    mut on_data: impl FnMut(&[u8]) -> bool + Send + 'static,
    on_eof: impl FnOnce() + Send + 'static,
) -> io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new().name("pi-tui-stdin".into()).spawn(move || {
        let mut stdin = io::stdin();
        let mut buf = [0u8; 4096];
        loop {
            match stdin.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if !on_data(&buf[..n]) {
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        on_eof();
    })
}

/// Poll the terminal size every `interval` and call `on_resize(width, height)` on change,
/// until it returns false. (Applications with a signal handler for SIGWINCH can skip this.)
pub fn spawn_resize_watcher(
    interval: Duration,
    mut on_resize: impl FnMut(usize, usize) -> bool + Send + 'static,
) -> io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new().name("pi-tui-resize".into()).spawn(move || {
        let mut last = terminal_size();
        loop {
            std::thread::sleep(interval);
            let now = terminal_size();
            if now != last {
                last = now;
                if !on_resize(now.0, now.1) {
                    return;
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restore_sequence_undoes_what_was_enabled() {
        let s = restore_sequence(MODE_KITTY);
        assert!(s.starts_with(KITTY_POP));
        assert!(s.contains(BRACKETED_PASTE_OFF) && s.ends_with(CURSOR_SHOW));
        assert!(restore_sequence(MODE_MOK).starts_with(MOK_OFF));
        assert!(!restore_sequence(0).contains(KITTY_POP));
        assert!(restore_sequence(MODE_COLOR_SCHEME).starts_with(COLOR_SCHEME_OFF));
        assert!(!restore_sequence(0).contains(COLOR_SCHEME_OFF));
        let full = restore_sequence(MODE_FULLSCREEN);
        assert!(full.contains("\x1b[?1049l") && full.contains("\x1b[?1000l") && full.contains("\x1b[?7h"));
        assert!(!restore_sequence(0).contains("\x1b[?1049l"));
        assert!(fullscreen_on(true).contains("\x1b[?1003h"));
        assert!(!fullscreen_on(false).contains("\x1b[?1003h"));
    }

    #[test]
    fn size_falls_back_to_something_usable() {
        let (w, h) = terminal_size();
        assert!(w > 0 && h > 0);
    }
}
