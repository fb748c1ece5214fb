//! The first prompt of a non-interactive run: piped stdin, `@file` text and the first message.

use pi_ai::ImageContent;

/// The first prompt and the prompts that follow it, each a full run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InitialPrompts {
    pub first: Option<String>,
    pub images: Vec<ImageContent>,
    pub rest: Vec<String>,
}

/// pi 0.73 joins stdin, the file text and the first message with no separator at all (so
/// `echo hi | pi -p there` sends `hithere`); the remaining messages become separate prompts.
pub fn build_initial_prompts(
    messages: &[String],
    file_text: &str,
    images: Vec<ImageContent>,
    stdin: Option<&str>,
) -> InitialPrompts {
    let mut first = String::new();
    let mut any = false;
    if let Some(s) = stdin {
        first.push_str(s);
        any = true;
    }
    if !file_text.is_empty() {
        first.push_str(file_text);
        any = true;
    }
    let mut rest = messages.iter();
    if let Some(m) = rest.next() {
        first.push_str(m);
        any = true;
    }
    InitialPrompts {
        first: any.then_some(first),
        images,
        rest: rest.cloned().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_without_separator_like_pi() {
        let p = build_initial_prompts(
            &["and this is the argument".into(), "second".into()],
            "",
            vec![],
            Some("hello from stdin"),
        );
        assert_eq!(p.first.as_deref(), Some("hello from stdinand this is the argument"));
        assert_eq!(p.rest, vec!["second"]);
    }

    #[test]
    fn file_text_comes_before_the_message() {
        let p = build_initial_prompts(&["q".into()], "<file name=\"/a\">\nx\n</file>\n", vec![], None);
        assert_eq!(p.first.as_deref(), Some("<file name=\"/a\">\nx\n</file>\nq"));
    }

    #[test]
    fn nothing_means_no_prompt() {
        assert_eq!(build_initial_prompts(&[], "", vec![], None).first, None);
        // Empty stdin that was read still counts as given (the caller drops empty stdin first).
        assert_eq!(
            build_initial_prompts(&[], "", vec![], Some("")).first.as_deref(),
            Some("")
        );
    }
}
