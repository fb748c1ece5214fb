//! A pseudo-terminal driving the real `pi` binary, with a vt100 screen of what it drew.

use std::fs::File;
use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
use rustix::termios::{tcsetwinsize, Winsize};

pub struct Pty {
    master: File,
    child: Child,
    screen: Arc<Mutex<vt100::Parser>>,
    raw: Arc<Mutex<Vec<u8>>>,
}

fn winsize(rows: u16, cols: u16) -> Winsize {
    Winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    }
}

impl Pty {
    /// Start `pi` with `args` in `cwd`, its agent folder `agent_dir`, on a `cols`×`rows` screen.
    pub fn spawn(args: &[&str], cwd: &std::path::Path, agent_dir: &std::path::Path, rows: u16, cols: u16) -> Pty {
        Self::spawn_env(args, cwd, agent_dir, rows, cols, &[])
    }

    /// [`Pty::spawn`] with extra environment variables. `PI_TEST_BIN` names another binary
    /// to drive (a copy, when the build directory is shared).
    pub fn spawn_env(
        args: &[&str],
        cwd: &std::path::Path,
        agent_dir: &std::path::Path,
        rows: u16,
        cols: u16,
        env: &[(&str, &str)],
    ) -> Pty {
        Self::spawn_unset(args, cwd, agent_dir, rows, cols, env, &[])
    }

    /// [`Pty::spawn_env`] without the variables named in `unset` (`PI_OFFLINE` for a pi that
    /// may reach the model catalogues).
    pub fn spawn_unset(
        args: &[&str],
        cwd: &std::path::Path,
        agent_dir: &std::path::Path,
        rows: u16,
        cols: u16,
        env: &[(&str, &str)],
        unset: &[&str],
    ) -> Pty {
        let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("openpt");
        grantpt(&master).expect("grantpt");
        unlockpt(&master).expect("unlockpt");
        tcsetwinsize(&master, winsize(rows, cols)).expect("winsize");
        let name = ptsname(&master, Vec::new()).expect("ptsname");
        let name = name.to_str().expect("utf8 name").to_string();
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&name)
            .expect("open slave");
        // Offline, pi warns in the chat when fd or ripgrep is missing; placeholders in the
        // managed-binaries folder keep that warning off every screen but those of the tests
        // about it (which make the folder themselves).
        let bin = agent_dir.join("bin");
        if !bin.exists() && std::fs::create_dir_all(&bin).is_ok() {
            for tool in ["fd", "rg"] {
                let _ = std::fs::write(bin.join(tool), "");
            }
        }
        // `setsid --ctty` makes the pty the child's controlling terminal.
        let mut cmd = Command::new("setsid");
        cmd.arg("--ctty")
            .arg(std::env::var("PI_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_pi").to_string()))
            .args(args)
            .current_dir(cwd)
            .env("PI_CODING_AGENT_DIR", agent_dir)
            .env("PI_OFFLINE", "1")
            .env("TERM", "xterm-256color")
            // 24-bit colours unless a test says otherwise (colour tests read RGB cells).
            .env("COLORTERM", "truecolor")
            .env("HOME", agent_dir)
            .env_remove("COLORFGBG")
            .envs(env.iter().copied());
        for name in unset {
            cmd.env_remove(name);
        }
        cmd.stdin(Stdio::from(slave.try_clone().expect("clone")))
            .stdout(Stdio::from(slave.try_clone().expect("clone")))
            .stderr(Stdio::from(slave));
        let child = cmd.spawn().expect("spawn pi");
        drop(cmd);
        let master = File::from(master);
        let screen = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 1000)));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let mut reader = master.try_clone().expect("clone master");
        let (s2, r2) = (screen.clone(), raw.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        s2.lock().expect("screen").process(&buf[..n]);
                        r2.lock().expect("raw").extend_from_slice(&buf[..n]);
                    }
                }
            }
        });
        Pty {
            master,
            child,
            screen,
            raw,
        }
    }

    pub fn send(&mut self, bytes: &str) {
        self.master.write_all(bytes.as_bytes()).expect("write");
        self.master.flush().expect("flush");
    }

    /// Type text one small chunk at a time (as a person would), then wait a little.
    pub fn type_text(&mut self, text: &str) {
        self.send(text);
        std::thread::sleep(Duration::from_millis(50));
    }

    pub fn contents(&self) -> String {
        self.screen.lock().expect("screen").screen().contents()
    }

    /// Everything written, scrollback included (rows of the vt100 screen plus the raw log).
    pub fn raw(&self) -> Vec<u8> {
        self.raw.lock().expect("raw").clone()
    }

    /// The foreground colour of the cell at `row`, `col`.
    pub fn fg_at(&self, row: u16, col: u16) -> Option<vt100::Color> {
        let p = self.screen.lock().expect("screen");
        p.screen().cell(row, col).map(|c| c.fgcolor())
    }

    /// The background colour of the cell at `row`, `col`.
    pub fn bg_at(&self, row: u16, col: u16) -> Option<vt100::Color> {
        let p = self.screen.lock().expect("screen");
        p.screen().cell(row, col).map(|c| c.bgcolor())
    }

    /// The cell at `row`, `col` (text and every attribute).
    pub fn cell_at(&self, row: u16, col: u16) -> Option<vt100::Cell> {
        let p = self.screen.lock().expect("screen");
        p.screen().cell(row, col).cloned()
    }

    /// Whether the alternate screen (fullscreen) is in use.
    pub fn alternate_screen(&self) -> bool {
        self.screen.lock().expect("screen").screen().alternate_screen()
    }

    /// The main screen's lines scrolled off the top, then the rows on screen, oldest first.
    pub fn history(&self) -> Vec<String> {
        let mut p = self.screen.lock().expect("screen");
        p.screen_mut().set_scrollback(usize::MAX);
        let depth = p.screen().scrollback();
        let (_, cols) = p.screen().size();
        let mut out = Vec::new();
        // At offset k the view's top row is the k-th line above the screen.
        for k in (1..=depth).rev() {
            p.screen_mut().set_scrollback(k);
            out.extend(p.screen().rows(0, cols).take(1));
        }
        p.screen_mut().set_scrollback(0);
        out.extend(p.screen().rows(0, cols));
        out
    }

    pub fn rows(&self) -> Vec<String> {
        let p = self.screen.lock().expect("screen");
        let (_, cols) = p.screen().size();
        p.screen().rows(0, cols).collect()
    }

    /// Wait until the screen satisfies `f`; panics with the screen after `timeout`.
    pub fn wait_for(&self, what: &str, timeout: Duration, f: impl Fn(&str) -> bool) {
        let start = Instant::now();
        loop {
            let c = self.contents();
            if f(&c) {
                return;
            }
            if start.elapsed() > timeout {
                panic!("timed out waiting for {what}; screen:\n{c}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Wait until the screen has not changed for `quiet` (a reply finished streaming, the
    /// footer caught up); panics with the screen after 10 s.
    pub fn wait_stable(&self, quiet: Duration) {
        let start = Instant::now();
        let mut last = self.contents();
        let mut since = Instant::now();
        while since.elapsed() < quiet {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "the screen kept changing:\n{last}"
            );
            std::thread::sleep(Duration::from_millis(20));
            let now = self.contents();
            if now != last {
                last = now;
                since = Instant::now();
            }
        }
    }

    pub fn wait_text(&self, text: &str) {
        self.wait_for(text, Duration::from_secs(30), |c| c.contains(text));
    }

    pub fn resize(&mut self, rows: u16, cols: u16) {
        tcsetwinsize(&self.master, winsize(rows, cols)).expect("winsize");
        self.screen.lock().expect("screen").screen_mut().set_size(rows, cols);
    }

    /// The process id of `pi` (`setsid` execs it in place).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Wait for the process to end; its exit code.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        let start = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            if start.elapsed() > timeout {
                let _ = self.child.kill();
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
