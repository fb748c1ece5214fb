//! What a rebuild of the chat for a new look (a theme change, images on or off) keeps: the
//! blocks the transcript cannot make again (notices, status lines, info blocks), each put
//! back after as many transcript blocks as came before it, drawn in the new theme.

use std::sync::Arc;

use pi_tui::{Component, Container};

use super::chat::{AssistantBlock, InfoBlock, Notice, UserBlock};
use super::extension_ui::message_block::MessageBlock;
use super::theme::UiTheme;
use super::tool_block::ToolBlock;

/// A chat block and the number of transcript blocks before it.
pub struct Loose {
    after: usize,
    block: Box<dyn Component>,
}

/// Whether a rebuild makes this block again from the session.
fn from_transcript(block: &mut Box<dyn Component>) -> bool {
    let b = block.as_mut();
    b.downcast_mut::<UserBlock>().is_some()
        || b.downcast_mut::<AssistantBlock>().is_some()
        || b.downcast_mut::<ToolBlock>().is_some()
        || b.downcast_mut::<MessageBlock>().is_some()
        || b.downcast_mut::<Notice>().is_some_and(|n| n.is_derived())
}

/// Take the blocks of `chat` a rebuild would lose; `header`: the first block is the
/// header, which the rebuild makes again.
pub fn take_loose(chat: &mut Container, header: bool) -> Vec<Loose> {
    let skip = usize::from(header);
    let mut out = Vec::new();
    let mut seen = 0;
    for (i, mut block) in std::mem::take(chat.children_mut()).into_iter().enumerate() {
        if i < skip {
            continue;
        }
        if from_transcript(&mut block) {
            seen += 1;
        } else {
            out.push(Loose { after: seen, block });
        }
    }
    out
}

/// Put `loose` back into the rebuilt `chat`, in `theme`. Returns where each block of the
/// rebuilt chat went, for the indexes callers keep (tool blocks by call id).
pub fn put_back(chat: &mut Container, header: bool, loose: Vec<Loose>, theme: &Arc<UiTheme>) -> Vec<usize> {
    let blocks = std::mem::take(chat.children_mut());
    let mut moved = Vec::with_capacity(blocks.len());
    let mut rebuilt: Vec<Box<dyn Component>> = Vec::with_capacity(blocks.len() + loose.len());
    let mut seen = 0;
    let mut loose = loose.into_iter().peekable();
    for (i, mut block) in blocks.into_iter().enumerate() {
        let counts = i >= usize::from(header) && from_transcript(&mut block);
        if counts {
            while loose.peek().is_some_and(|l| l.after <= seen) {
                if let Some(l) = loose.next() {
                    rebuilt.push(restyled(l.block, theme));
                }
            }
            seen += 1;
        }
        moved.push(rebuilt.len());
        rebuilt.push(block);
    }
    rebuilt.extend(loose.map(|l| restyled(l.block, theme)));
    // Only a message right under the header goes without its blank line: one that the
    // blocks put back now precede (the startup warnings) has it, as when it was first shown.
    let first = usize::from(header);
    for block in rebuilt.iter_mut().skip(first + 1) {
        if let Some(user) = block.as_mut().downcast_mut::<UserBlock>() {
            user.set_gap(true);
        }
    }
    *chat.children_mut() = rebuilt;
    moved
}

fn restyled(mut block: Box<dyn Component>, theme: &Arc<UiTheme>) -> Box<dyn Component> {
    if let Some(n) = block.as_mut().downcast_mut::<Notice>() {
        n.set_theme(theme.clone());
    } else if let Some(b) = block.as_mut().downcast_mut::<InfoBlock>() {
        b.set_theme(theme);
    }
    block
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_tui::render_lines;

    fn chat_text(chat: &mut Container) -> Vec<String> {
        let mut lines: Vec<String> = render_lines(chat, 40)
            .iter()
            .map(|l| pi_tui::strip_ansi(l).trim().to_string())
            .filter(|l| !l.is_empty())
            .collect();
        lines.dedup();
        lines
    }

    #[test]
    fn notices_go_back_after_the_transcript_blocks_they_followed() {
        let theme = Arc::new(UiTheme::fallback());
        let mut chat = Container::new();
        chat.push(Box::new(Notice::new("header", "text", theme.clone())));
        chat.push(Box::new(UserBlock::new("first", &theme)));
        chat.push(Box::new(Notice::new("after first", "dim", theme.clone())));
        chat.push(Box::new(UserBlock::new("second", &theme)));
        chat.push(Box::new(Notice::new("at the end", "dim", theme.clone())));
        let loose = take_loose(&mut chat, true);
        assert_eq!(loose.len(), 2);
        assert!(chat.is_empty());
        // The rebuild: a header and the transcript again.
        chat.push(Box::new(Notice::new("header", "text", theme.clone())));
        chat.push(Box::new(UserBlock::new("first", &theme)));
        chat.push(Box::new(UserBlock::new("second", &theme)));
        let moved = put_back(&mut chat, true, loose, &theme);
        assert_eq!(moved, [0, 1, 3]);
        assert_eq!(
            chat_text(&mut chat),
            ["header", "first", "after first", "second", "at the end"]
        );
    }

    #[test]
    fn a_message_under_a_block_put_back_gets_its_blank_line_again() {
        let theme = Arc::new(UiTheme::fallback());
        let mut chat = Container::new();
        chat.push(Box::new(Notice::new("header", "text", theme.clone())));
        chat.push(Box::new(Notice::new(
            "Warning: ripgrep not found",
            "warning",
            theme.clone(),
        )));
        chat.push(Box::new(UserBlock::new("first", &theme)));
        let loose = take_loose(&mut chat, true);
        // Rebuilt without the warning, the message sits right under the header: no gap.
        chat.push(Box::new(Notice::new("header", "text", theme.clone())));
        chat.push(Box::new(UserBlock::new("first", &theme).without_gap()));
        put_back(&mut chat, true, loose, &theme);
        let user = chat.child_mut::<UserBlock>(2).expect("the message after the warning");
        assert_eq!(user.mark_offset(), 1);
    }
}
