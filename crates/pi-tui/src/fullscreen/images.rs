//! Images in the transcript viewport: Kitty placements cut to the rows in view (an image
//! partly above the viewport is placed on its first row, cropped).

use crate::component::Frame;
use crate::kitty::{crop, is_image_line, max_rows, meta_of};

/// Fit the images of the visible transcript `rows` (transcript lines from `first`) to the
/// viewport: those running past its bottom are cut, and one starting above it is placed,
/// cropped, on its first row.
pub(super) fn fit_to_viewport(transcript: &Frame, first: usize, rows: &mut [String]) {
    let height = rows.len();
    for (k, row) in rows.iter_mut().enumerate() {
        if let Some(meta) = meta_of(row) {
            if k + meta.rows > height {
                *row = crop(row, 0, height - k);
            }
        }
    }
    if first == 0 || height == 0 {
        return;
    }
    // The nearest image line above the viewport; lines further up than the tallest image
    // cannot reach into it.
    let from = first.saturating_sub(max_rows());
    let above: Vec<&String> = transcript.iter_from(from).take(first - from).collect();
    for (k, line) in above.iter().enumerate().rev() {
        if !is_image_line(line) {
            continue;
        }
        let Some(meta) = meta_of(line) else { continue };
        let hidden = first - (from + k);
        if hidden < meta.rows {
            rows[0] = crop(line, hidden, height.min(meta.rows - hidden));
        }
        break;
    }
}

#[cfg(test)]
mod tests {
    use crate::component::Frame;
    use crate::components::encode_kitty;
    use crate::fullscreen::Fullscreen;
    use crate::kitty::register;

    /// A transcript of `before` text lines, a 4-row image (36 x 72 px), then `after` lines.
    fn transcript(id: u32, before: usize, after: usize) -> (Frame, String) {
        register(id, 4, 4, 36, 72);
        let img = encode_kitty("QUJD", 4, 4, Some(id));
        let mut f = Frame::new();
        f.extend_lines((0..before).map(|i| format!("line {i}")));
        f.push_line(img.clone());
        f.extend_lines((0..3).map(|_| String::new()));
        f.extend_lines((0..after).map(|i| format!("after {i}")));
        (f.sealed(), img)
    }

    #[test]
    fn an_image_partly_above_the_view_is_placed_cropped_on_its_first_row() {
        let (t, _) = transcript(940_001, 2, 10);
        let mut fs = Fullscreen::new();
        // 17 lines, 5 rows: scroll so the image's first row (line 2) is one above the view.
        fs.viewport_mut().layout(t.len(), 5);
        fs.viewport_mut().scroll_to(3);
        let rows = fs.compose(t, Vec::new(), 20, 5);
        assert_eq!(
            rows[0],
            "\x1b_Ga=T,f=100,q=2,C=1,c=4,r=4,i=940001,y=18,h=54,r=3;QUJD\x1b\\".replace(",r=4", "")
        );
        assert!(rows[3].contains("after 0"), "{rows:?}");
    }

    #[test]
    fn an_image_past_the_bottom_of_the_view_is_cut() {
        let (t, _) = transcript(940_002, 1, 0);
        let mut fs = Fullscreen::new();
        // 5 lines in 3 transcript rows above a 2-row dock, shown from the top: the image
        // starts on row 1 and only 2 of its 4 rows are in view.
        fs.viewport_mut().layout(t.len(), 3);
        fs.viewport_mut().to_top();
        let rows = fs.compose(t, vec!["dock".into(), "dock".into()], 20, 5);
        assert!(rows[1].ends_with("i=940002,y=0,h=36,r=2;QUJD\x1b\\"), "{rows:?}");
        assert_eq!(rows[3], "dock");
    }

    #[test]
    fn the_search_box_hides_the_images_under_it_only() {
        let (t, img) = transcript(940_003, 0, 0);
        let mut fs = Fullscreen::new();
        let rows = fs.compose(t.clone(), Vec::new(), 80, 6);
        assert_eq!(rows[0], img);
        fs.toggle_search();
        let rows = fs.compose(t, Vec::new(), 80, 6);
        // The box is at the right, the image 4 columns wide at the left: it stays.
        assert_eq!(rows[0], img);
        let (t, _) = transcript(940_004, 0, 0);
        let rows = fs.compose(t, Vec::new(), 34, 6);
        assert!(!rows.iter().any(|r| crate::kitty::is_image_line(r)), "{rows:?}");
    }
}
