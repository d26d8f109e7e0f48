//! Text for people: names from an input made visible (every control character escaped, so a
//! kernel name can neither start a line nor drive the terminal), lines fitted to a width, and
//! numbers rounded as people read them (counts, shares, message numbers: every format's).
//! Every human-readable exporter (table, markdown, CSV cells, the gate's table) escapes through
//! [`visible`], and so does every message on stderr: one place (`messages.rs`, which may depend
//! on nothing) decides what a name may carry onto a screen.

pub(crate) use crate::messages::visible;

/// A markdown table cell or inline code span: [`visible`], `|` escaped (GFM needs it even in
/// code), a backtick turned into `'` (it would end the span), whitespace collapsed.
pub(crate) fn markdown(s: &str) -> String {
    visible(s).replace('|', "\\|").replace('`', "'").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The width of `s` on a terminal, counted in characters (its widest line).
pub(crate) fn width(s: &str) -> usize {
    s.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// `s` in at most `max` characters, cut in the middle (`cub::Device…Kernel<…>`): both ends of a
/// long C++ name tell it apart.
pub(crate) fn cut_middle(s: &str, max: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= max {
        return s.to_string();
    }
    if max < 2 {
        return "…".chars().take(max).collect();
    }
    let head = (max - 1).div_ceil(2);
    let tail = max - 1 - head;
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[chars.len() - tail..]);
    out
}

/// `s` in at most `max` characters, cut at the end (`…` last).
pub(crate) fn cut_end(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    if max > 0 {
        out.push('…');
    }
    out
}

/// A location in at most `max` characters, elided from the left (`…/src/conv_kernels.cu:44`):
/// the file name and what follows it (line, offset) are never cut, even past `max`.
pub(crate) fn elide_left(location: &str, max: usize) -> String {
    let n = location.chars().count();
    if n <= max {
        return location.to_string();
    }
    // The file name starts after the last `/` before the `:line` (a Windows path's `\` too).
    let colon = location.rfind(':').unwrap_or(location.len());
    let start = location[..colon].rfind(['/', '\\']).map_or(0, |i| i + 1);
    let keep = location[start..].chars().count();
    if keep + 1 >= max || start == 0 {
        return if start == 0 { location.to_string() } else { format!("…{}", &location[start - 1..]) };
    }
    let tail: String = location.chars().skip(n - (max - 1)).collect();
    format!("…{tail}")
}

/// `text` wrapped at spaces into lines of at most `width` characters (a word longer than a line
/// is cut there), the first line starting with `first`, the others with `indent`. Newlines in
/// `text` end a line; nothing is escaped here (escape names first). Each line ends in `\n`.
pub(crate) fn wrap(text: &str, width: Option<usize>, first: &str, indent: &str) -> String {
    let Some(width) = width else {
        return text
            .lines()
            .enumerate()
            .map(|(i, l)| format!("{}{l}\n", if i == 0 { first } else { indent }))
            .collect();
    };
    let mut out = String::new();
    let mut prefix = first;
    for paragraph in text.split('\n') {
        // A line that fits keeps its own spacing (aligned labels).
        if prefix.chars().count() + paragraph.chars().count() <= width {
            out.push_str(format!("{prefix}{paragraph}").trim_end());
            out.push('\n');
            prefix = indent;
            continue;
        }
        let mut line = prefix.to_string();
        let mut len = prefix.chars().count();
        let mut empty = true;
        for word in paragraph.split(' ').filter(|w| !w.is_empty()) {
            let mut word = word.to_string();
            let mut wlen = word.chars().count();
            if !empty && len + 1 + wlen > width {
                out.push_str(&line);
                out.push('\n');
                line = indent.to_string();
                len = indent.chars().count();
                empty = true;
            }
            // A word that fills a line by itself is split at the width.
            while empty && len + wlen > width && width > len {
                let room = width - len;
                let head: String = word.chars().take(room).collect();
                out.push_str(&line);
                out.push_str(&head);
                out.push('\n');
                word = word.chars().skip(room).collect();
                wlen -= room;
                line = indent.to_string();
                len = indent.chars().count();
            }
            if !empty {
                line.push(' ');
                len += 1;
            }
            line.push_str(&word);
            len += wlen;
            empty = false;
        }
        out.push_str(line.trim_end());
        out.push('\n');
        prefix = indent;
    }
    out
}

/// `8388608` → `8,388,608`: counts as people read them (every format and SARIF message).
pub fn thousands(n: i128) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        out.insert(0, '-');
    }
    out
}

/// A counter's value (a float) rounded and grouped: `1234.6` → `1,235`.
pub(crate) fn count(v: f64) -> String {
    thousands(v.round() as i128)
}

/// A ratio to two decimals: `4.0` → `4.00` (sectors per request and the like).
pub(crate) fn ratio(v: f64) -> String {
    format!("{v:.2}")
}

/// A share (0..1) as a whole percentage: `0.934` → `93%`.
pub(crate) fn percent(share: f64) -> String {
    format!("{:.0}%", share * 100.0)
}

/// A number for messages and the gate's outputs: up to 4 significant digits, no trailing zeros
/// (`4.5`, `32`, `1.235`, `1.500e12`).
pub(crate) fn fmt_num(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let mag = v.abs().log10().floor() as i32;
    if !(-4..=9).contains(&mag) {
        return format!("{v:.3e}");
    }
    let decimals = (3 - mag).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_people_read_them() {
        assert_eq!(thousands(-1_234_567), "-1,234,567");
        assert_eq!(count(1234.6), "1,235");
        assert_eq!(ratio(4.0), "4.00");
        assert_eq!(percent(0.934), "93%");
        assert_eq!(
            (fmt_num(1.23456), fmt_num(32.0), fmt_num(1.5e12)),
            ("1.235".into(), "32".into(), "1.500e12".into())
        );
    }

    #[test]
    fn control_characters_become_visible_escapes() {
        assert_eq!(visible("evil\n::warning::injected"), "evil\\n::warning::injected");
        assert_eq!(visible("\x1b]0;title\x07\x1b[2J"), "\\x1b]0;title\\x07\\x1b[2J");
        assert_eq!(visible("a\tb\r\u{9b}c\u{7f}"), "a\\tb\\r\\x9bc\\x7f");
        assert_eq!(visible("ab\u{202e}cd\u{2028}"), "ab\\u{202e}cd\\u{2028}");
        assert!(matches!(visible("void k<float>(int *)"), std::borrow::Cow::Borrowed(_)));
        assert_eq!(visible("µs · ünïcode"), "µs · ünïcode");
    }

    #[test]
    fn markdown_cells_cannot_break_their_table() {
        assert_eq!(markdown("a|b `c`\nd"), "a\\|b 'c'\\nd");
    }

    #[test]
    fn cuts_keep_to_the_width() {
        assert_eq!(cut_middle("abcdefghij", 5), "ab…ij");
        assert_eq!(cut_middle("abc", 5), "abc");
        assert_eq!(cut_end("abcdefghij", 5), "abcd…");
        for max in 1..12 {
            assert!(cut_middle("abcdefghijklmno", max).chars().count() <= max, "{max}");
        }
    }

    #[test]
    fn locations_lose_their_directories_never_their_file() {
        let loc = "/data5/home/numairs/cuda/conv/conv_kernels.cu:44";
        assert_eq!(elide_left(loc, 100), loc);
        assert_eq!(elide_left(loc, 25), "…/conv/conv_kernels.cu:44");
        assert_eq!(elide_left(loc, 10), "…/conv_kernels.cu:44");
        assert_eq!(elide_left("conv_kernels.cu:44", 5), "conv_kernels.cu:44");
        assert!(elide_left(loc, 25).chars().count() <= 25);
    }

    #[test]
    fn wrapping_keeps_lines_within_the_width() {
        let text = "lanes spread over 8 128-byte lines: a strided walk; make consecutive lanes read consecutive words";
        let out = wrap(text, Some(40), "  k.cu:4: ", "      ");
        assert!(out.lines().all(|l| l.chars().count() <= 40), "{out}");
        assert!(out.starts_with("  k.cu:4: lanes"), "{out}");
        assert_eq!(out.split_whitespace().skip(1).collect::<Vec<_>>().join(" "), text);
        let long = wrap(&"x".repeat(50), Some(20), "", "  ");
        assert!(long.lines().all(|l| l.chars().count() <= 20), "{long}");
        assert_eq!(long.replace(['\n', ' '], ""), "x".repeat(50));
        assert_eq!(wrap("a b", None, "- ", "  "), "- a b\n");
    }
}
