//! `@file` arguments: text files become `<file name="...">` blocks of the first message, images
//! become attachments (resized within the provider limits).

use std::path::Path;

use pi_ai::ImageContent;
use pi_tools::image::{detect_image_mime, prepare_image};
use pi_tools::paths::resolve_read_path;

/// The text and images the `@file` arguments contribute.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileArgs {
    pub text: String,
    pub images: Vec<ImageContent>,
}

/// Read every `@file` argument. An error is the message pi prints (after `Error: `).
pub fn process_file_args(files: &[String], cwd: &Path, auto_resize: bool) -> Result<FileArgs, String> {
    let mut out = FileArgs::default();
    for arg in files {
        let path = resolve_read_path(arg, cwd);
        let shown = path.display().to_string();
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(format!("File not found: {shown}")),
            Err(e) => return Err(format!("Could not read file {shown}: {e}")),
        };
        if bytes.is_empty() {
            continue;
        }
        let head = &bytes[..bytes.len().min(4100)];
        if let Some(mime) = detect_image_mime(head) {
            if !auto_resize {
                use base64::Engine as _;
                let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
                out.images.push(ImageContent {
                    data,
                    mime_type: mime.to_string(),
                    extra: Default::default(),
                });
                out.text.push_str(&format!("<file name=\"{shown}\"></file>\n"));
                continue;
            }
            match prepare_image(&bytes, mime) {
                Some(img) => {
                    let note = img.dimension_note().unwrap_or_default();
                    out.text.push_str(&format!("<file name=\"{shown}\">{note}</file>\n"));
                    out.images.push(ImageContent { data: img.data, mime_type: img.mime_type, extra: Default::default() });
                }
                None => out.text.push_str(&format!(
                    "<file name=\"{shown}\">[Image omitted: could not be resized below the inline image size limit.]</file>\n"
                )),
            }
            continue;
        }
        let text = String::from_utf8(bytes).map_err(|e| format!("Could not read file {shown}: {e}"))?;
        out.text
            .push_str(&format!("<file name=\"{shown}\">\n{text}\n</file>\n"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_files_become_blocks_and_empty_files_are_skipped() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("a.txt"), "hello").expect("write");
        std::fs::write(dir.path().join("empty.txt"), "").expect("write");
        let out = process_file_args(&["a.txt".into(), "empty.txt".into()], dir.path(), true).expect("files");
        let abs = dir.path().join("a.txt");
        assert_eq!(out.text, format!("<file name=\"{}\">\nhello\n</file>\n", abs.display()));
        assert!(out.images.is_empty());
    }

    #[test]
    fn missing_files_are_an_error_with_the_absolute_path() {
        let dir = tempfile::tempdir().expect("tempdir");
        let err = process_file_args(&["nope.txt".into()], dir.path(), true).expect_err("missing");
        assert_eq!(
            err,
            format!("File not found: {}", dir.path().join("nope.txt").display())
        );
    }
}
