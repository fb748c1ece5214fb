//! Keys as the bytes a terminal sends, for extension components: pi hands their
//! `handleInput(data)` the raw sequence, and our parser has already decoded it, so it is
//! encoded again (legacy xterm sequences where they exist, kitty `CSI u` for the rest).

use pi_tui::{Key, KeyEvent};

/// The xterm modifier parameter (1 + bits) for `CSI 1;<m>X` sequences.
fn modifier_param(k: &KeyEvent) -> u8 {
    1 + (k.mods.0 & 0x0f)
}

fn csi_letter(k: &KeyEvent, letter: char) -> String {
    if k.mods.is_empty() {
        format!("\x1b[{letter}")
    } else {
        format!("\x1b[1;{}{letter}", modifier_param(k))
    }
}

fn csi_tilde(k: &KeyEvent, code: u8) -> String {
    if k.mods.is_empty() {
        format!("\x1b[{code}~")
    } else {
        format!("\x1b[{code};{}~", modifier_param(k))
    }
}

fn kitty(k: &KeyEvent, code: u32) -> String {
    format!("\x1b[{code};{}u", modifier_param(k))
}

/// The sequence a terminal sends for `k`; `None` for key releases.
pub fn encode_key(k: &KeyEvent) -> Option<String> {
    if k.is_release() {
        return None;
    }
    let plain = k.mods.is_empty();
    let only_shift = k.mods.shift() && !k.mods.ctrl() && !k.mods.alt() && !k.mods.super_();
    Some(match k.key {
        Key::Char(_) if k.text().is_some() => k.text()?.to_string(),
        Key::Char(c) => {
            let ctrl = k.mods.ctrl();
            let alt = k.mods.alt();
            if k.mods.super_() || (ctrl && k.mods.shift()) {
                kitty(k, u32::from(c))
            } else if ctrl && c.is_ascii_alphabetic() {
                let byte = (c.to_ascii_lowercase() as u8 - b'a' + 1) as char;
                if alt {
                    format!("\x1b{byte}")
                } else {
                    byte.to_string()
                }
            } else if ctrl {
                match c {
                    ' ' | '@' => "\x00".into(),
                    '[' => "\x1b".into(),
                    '\\' => "\x1c".into(),
                    ']' => "\x1d".into(),
                    '^' => "\x1e".into(),
                    '_' | '-' => "\x1f".into(),
                    _ => kitty(k, u32::from(c)),
                }
            } else if alt {
                let c = if k.mods.shift() {
                    k.shifted.unwrap_or(c.to_ascii_uppercase())
                } else {
                    c
                };
                format!("\x1b{c}")
            } else {
                c.to_string()
            }
        }
        Key::Enter if plain => "\r".into(),
        Key::Enter if k.mods.alt() && !k.mods.ctrl() && !k.mods.shift() => "\x1b\r".into(),
        Key::Enter => kitty(k, 13),
        Key::Tab if plain => "\t".into(),
        Key::Tab if only_shift => "\x1b[Z".into(),
        Key::Tab => kitty(k, 9),
        Key::Backspace if plain => "\x7f".into(),
        Key::Backspace if k.mods.alt() && !k.mods.ctrl() => "\x1b\x7f".into(),
        Key::Backspace => kitty(k, 127),
        Key::Escape if plain => "\x1b".into(),
        Key::Escape => kitty(k, 27),
        Key::Up => csi_letter(k, 'A'),
        Key::Down => csi_letter(k, 'B'),
        Key::Right => csi_letter(k, 'C'),
        Key::Left => csi_letter(k, 'D'),
        Key::Home => csi_letter(k, 'H'),
        Key::End => csi_letter(k, 'F'),
        Key::Clear => csi_letter(k, 'E'),
        Key::Insert => csi_tilde(k, 2),
        Key::Delete => csi_tilde(k, 3),
        Key::PageUp => csi_tilde(k, 5),
        Key::PageDown => csi_tilde(k, 6),
        Key::F(n @ 1..=4) => {
            let letter = (b'P' + n - 1) as char;
            if plain {
                format!("\x1bO{letter}")
            } else {
                csi_letter(k, letter)
            }
        }
        Key::F(n) => {
            let code = match n {
                5 => 15,
                6 => 17,
                7 => 18,
                8 => 19,
                9 => 20,
                10 => 21,
                11 => 23,
                12 => 24,
                _ => return None,
            };
            csi_tilde(k, code)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every encoded key decodes back to itself: the component sees what was pressed.
    #[test]
    fn encoded_keys_parse_back_to_the_same_key() {
        let ids = [
            "a",
            "shift+a",
            "enter",
            "escape",
            "tab",
            "shift+tab",
            "backspace",
            "up",
            "down",
            "left",
            "right",
            "ctrl+c",
            "ctrl+x",
            "alt+b",
            "home",
            "end",
            "pageUp",
            "pageDown",
            "delete",
            "f1",
            "f5",
            "shift+up",
            "ctrl+left",
            "shift+enter",
            "ctrl+shift+p",
            "alt+enter",
            "space",
        ];
        for id in ids {
            let key_id = pi_tui::KeyId::parse(id).unwrap_or_else(|| panic!("{id} parses"));
            let event = KeyEvent::new(key_id.key, key_id.mods);
            let bytes = encode_key(&event).unwrap_or_else(|| panic!("{id} encodes"));
            let kitty = bytes.starts_with("\x1b[") && bytes.ends_with('u');
            let back = pi_tui::parse_key(&bytes, kitty).unwrap_or_else(|| panic!("{id}: {bytes:?} parses"));
            assert!(back.matches(id), "{id}: {bytes:?} came back as {:?}", back.id());
        }
    }

    #[test]
    fn typed_text_and_releases() {
        let q = KeyEvent::plain(Key::Char('q'));
        assert_eq!(encode_key(&q).as_deref(), Some("q"));
        assert_eq!(encode_key(&KeyEvent::plain(Key::Up)).as_deref(), Some("\x1b[A"));
        let mut release = KeyEvent::plain(Key::Char('q'));
        release.kind = pi_tui::KeyEventKind::Release;
        assert_eq!(encode_key(&release), None);
    }
}
