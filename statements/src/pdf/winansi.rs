//! Text for the standard Helvetica fonts: Unicode to WinAnsiEncoding bytes, and the widths of
//! those bytes (from the fonts' published metrics), to right-align and truncate.
//!
//! WinAnsi is Latin-1 plus a few typographic characters, so most of Nigeria's names survive,
//! but not all: a combining accent is composed onto the letter before it where Latin-1 has the
//! result (`e` + U+0301 is `é`) and dropped otherwise; the underdotted letters of Yoruba and
//! Igbo and the hooked letters of Hausa become their base letter (`ọ` is `o`, `ẹ` `e`, `ṣ` `s`,
//! `ɓ` `b`), so `Adébáyọ̀` reads `Adébáyò`; `₦` becomes `NGN` (`₦5` is `NGN 5`); anything else
//! becomes `?`.

/// The two standard fonts the documents use, neither embedded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::pdf) enum Font {
    Regular,
    Bold,
}

/// The ellipsis, `…`, in WinAnsi.
pub(super) const ELLIPSIS: u8 = 0x85;

/// `text` in WinAnsi, on one line (tabs and line breaks become spaces).
pub(super) fn encode(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    // Whether the last byte came from a letter that a combining accent may still change.
    let mut composable = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if ('\u{300}'..='\u{36F}').contains(&c) {
            if composable {
                if let Some(composed) = out.last().and_then(|&base| compose(base, c)) {
                    *out.last_mut().expect("a last byte") = composed;
                    composable = false;
                }
            }
            continue;
        }
        composable = false;
        match c {
            '\t' | '\n' | '\r' => out.push(b' '),
            ' '..='~' => {
                out.push(c as u8);
                composable = c.is_ascii_alphabetic();
            }
            '\u{A0}'..='\u{FF}' => out.push(c as u32 as u8),
            '₦' => {
                out.extend_from_slice(b"NGN");
                if chars.peek().is_some_and(char::is_ascii_digit) {
                    out.push(b' ');
                }
            }
            c => match special(c) {
                Some(byte) => out.push(byte),
                None => match fold(c) {
                    Some(base) => {
                        out.push(base);
                        composable = true;
                    }
                    None => out.push(b'?'),
                },
            },
        }
    }
    out
}

/// WinAnsi's characters outside Latin-1, at 0x80 to 0x9F.
fn special(c: char) -> Option<u8> {
    Some(match c {
        '€' => 0x80,
        '‚' => 0x82,
        'ƒ' => 0x83,
        '„' => 0x84,
        '…' => 0x85,
        '†' => 0x86,
        '‡' => 0x87,
        'ˆ' => 0x88,
        '‰' => 0x89,
        'Š' => 0x8A,
        '‹' => 0x8B,
        'Œ' => 0x8C,
        'Ž' => 0x8E,
        '\u{2018}' => 0x91,
        '\u{2019}' => 0x92,
        '\u{201C}' => 0x93,
        '\u{201D}' => 0x94,
        '•' => 0x95,
        '–' => 0x96,
        '—' => 0x97,
        '˜' => 0x98,
        '™' => 0x99,
        'š' => 0x9A,
        '›' => 0x9B,
        'œ' => 0x9C,
        'ž' => 0x9E,
        'Ÿ' => 0x9F,
        _ => return None,
    })
}

/// The base letter of the Nigerian languages' letters that WinAnsi lacks.
fn fold(c: char) -> Option<u8> {
    Some(match c {
        'ẹ' => b'e',
        'Ẹ' => b'E',
        'ọ' => b'o',
        'Ọ' => b'O',
        'ṣ' => b's',
        'Ṣ' => b'S',
        'ị' => b'i',
        'Ị' => b'I',
        'ụ' => b'u',
        'Ụ' => b'U',
        'ń' | 'ǹ' | 'ṅ' => b'n',
        'Ń' | 'Ǹ' | 'Ṅ' => b'N',
        'ḿ' => b'm',
        'Ḿ' => b'M',
        'ɓ' => b'b',
        'Ɓ' => b'B',
        'ɗ' => b'd',
        'Ɗ' => b'D',
        'ƙ' => b'k',
        'Ƙ' => b'K',
        'ƴ' => b'y',
        'Ƴ' => b'Y',
        _ => return None,
    })
}

/// A letter with a combining grave, acute, circumflex, tilde or diaeresis, where Latin-1 has it.
fn compose(base: u8, accent: char) -> Option<u8> {
    let (from, to): (&[u8], &[u8]) = match accent {
        '\u{300}' => (b"AEIOUaeiou", b"\xC0\xC8\xCC\xD2\xD9\xE0\xE8\xEC\xF2\xF9"),
        '\u{301}' => (
            b"AEIOUYaeiouy",
            b"\xC1\xC9\xCD\xD3\xDA\xDD\xE1\xE9\xED\xF3\xFA\xFD",
        ),
        '\u{302}' => (b"AEIOUaeiou", b"\xC2\xCA\xCE\xD4\xDB\xE2\xEA\xEE\xF4\xFB"),
        '\u{303}' => (b"ANOano", b"\xC3\xD1\xD5\xE3\xF1\xF5"),
        '\u{308}' => (
            b"AEIOUaeiouy",
            b"\xC4\xCB\xCF\xD6\xDC\xE4\xEB\xEF\xF6\xFC\xFF",
        ),
        _ => return None,
    };
    from.iter()
        .position(|&letter| letter == base)
        .map(|index| to[index])
}

/// Widths of 0x20..=0x7E in Helvetica, in thousandths of the font size (WinAnsi: 0x27 is
/// `quotesingle`, 0x60 `grave`).
const HELVETICA: [u16; 95] = [
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278,
    278, // space to /
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, // 0 to ?
    1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778, // @ to O
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556, // P to _
    333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556, // ` to o
    556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584, // p to ~
];

/// The same for Helvetica-Bold.
const HELVETICA_BOLD: [u16; 95] = [
    278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278,
    278, // space to /
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 333, 333, 584, 584, 584, 611, // 0 to ?
    975, 722, 722, 722, 722, 667, 611, 778, 722, 278, 556, 722, 611, 833, 722, 778, // @ to O
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333, 278, 333, 584, 556, // P to _
    333, 556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556, 278, 889, 611, 611, // ` to o
    611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389, 280, 389, 584, // p to ~
];

/// The width of one byte, in thousandths of the font size. Above 0x7E an accented letter is as
/// wide as its base letter; the few wide signs are 1000; the rest are taken as 556, a digit.
fn byte_width(font: Font, byte: u8) -> u16 {
    let table = match font {
        Font::Regular => &HELVETICA,
        Font::Bold => &HELVETICA_BOLD,
    };
    let ascii = |b: u8| table[usize::from(b - 0x20)];
    match byte {
        0x20..=0x7E => ascii(byte),
        0x85 | 0x89 | 0x8C | 0x97 | 0x99 | 0xC6 => 1000,
        0xA0 => ascii(b' '),
        0xC0..=0xC5 => ascii(b'A'),
        0xC7 => ascii(b'C'),
        0xC8..=0xCB => ascii(b'E'),
        0xCC..=0xCF | 0xEC..=0xEF => ascii(b'I').max(278),
        0xD1 => ascii(b'N'),
        0xD2..=0xD6 | 0xD8 => ascii(b'O'),
        0xD9..=0xDC => ascii(b'U'),
        0xDD => ascii(b'Y'),
        0xE0..=0xE5 => ascii(b'a'),
        0xE6 => 889,
        0xE7 => ascii(b'c'),
        0xE8..=0xEB => ascii(b'e'),
        0xF1 => ascii(b'n'),
        0xF2..=0xF6 | 0xF8 => ascii(b'o'),
        0xF9..=0xFC => ascii(b'u'),
        0xFD | 0xFF => ascii(b'y'),
        _ => 556,
    }
}

/// The width of `text` at `size` points.
pub(super) fn width(font: Font, size: f32, text: &[u8]) -> f32 {
    let thousandths: u32 = text
        .iter()
        .map(|&byte| u32::from(byte_width(font, byte)))
        .sum();
    thousandths as f32 * size / 1000.0
}

/// `text` cut to fit `max` points, ending in `…` when cut.
pub(super) fn fit(font: Font, size: f32, text: &[u8], max: f32) -> Vec<u8> {
    if width(font, size, text) <= max {
        return text.to_vec();
    }
    let room = max - width(font, size, &[ELLIPSIS]);
    let mut cut = text.to_vec();
    while !cut.is_empty() && width(font, size, &cut) > room {
        cut.pop();
    }
    while cut.last() == Some(&b' ') {
        cut.pop();
    }
    cut.push(ELLIPSIS);
    cut
}

/// `text` broken at spaces into lines of at most `max` points; a word wider than a line is
/// broken where it must be.
pub(super) fn wrap(font: Font, size: f32, text: &[u8], max: f32) -> Vec<Vec<u8>> {
    let mut lines: Vec<Vec<u8>> = Vec::new();
    let mut line: Vec<u8> = Vec::new();
    for word in text.split(|&b| b == b' ').filter(|word| !word.is_empty()) {
        let mut candidate = line.clone();
        if !candidate.is_empty() {
            candidate.push(b' ');
        }
        candidate.extend_from_slice(word);
        if width(font, size, &candidate) <= max {
            line = candidate;
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        let mut rest = word;
        while width(font, size, rest) > max {
            let mut take = rest.len();
            while take > 1 && width(font, size, &rest[..take]) > max {
                take -= 1;
            }
            lines.push(rest[..take].to_vec());
            rest = &rest[take..];
        }
        line = rest.to_vec();
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_latin1_and_folds_the_rest() {
        assert_eq!(encode("Adébáyọ̀"), b"Ad\xE9b\xE1y\xF2");
        assert_eq!(encode("Ògúnlẹ́yẹ"), b"\xD2g\xFAnl\xE9ye");
        // Decomposed: e + combining acute.
        assert_eq!(encode("Cafe\u{301}"), b"Caf\xE9");
        assert_eq!(encode("₦5,000 – “ok” €"), b"NGN 5,000 \x96 \x93ok\x94 \x80");
        assert_eq!(encode("₦ 5"), b"NGN 5");
        assert_eq!(encode("漢字 a\tb\nc"), b"?? a b c");
        // A second accent on a composed letter is dropped.
        assert_eq!(encode("e\u{301}\u{300}"), b"\xE9");
    }

    #[test]
    fn measures_with_the_font_metrics() {
        // "NGN 1,234.56": N G N = 722 778 722, space 278, 6 digits 556, comma 278, period 278.
        let expected = (722 + 778 + 722 + 278 + 6 * 556 + 278 + 278) as f32 * 10.0 / 1000.0;
        assert_eq!(width(Font::Regular, 10.0, b"NGN 1,234.56"), expected);
        assert!(width(Font::Bold, 10.0, b"Kobo") > width(Font::Regular, 10.0, b"Kobo"));
    }

    #[test]
    fn fits_and_wraps() {
        let text = b"Being payment for the supply of cement";
        let cut = fit(Font::Regular, 8.0, text, 60.0);
        assert!(width(Font::Regular, 8.0, &cut) <= 60.0);
        assert_eq!(cut.last(), Some(&ELLIPSIS));
        assert_eq!(fit(Font::Regular, 8.0, b"short", 60.0), b"short");

        let lines = wrap(Font::Regular, 10.0, text, 100.0);
        assert!(lines.len() > 1);
        for line in &lines {
            assert!(width(Font::Regular, 10.0, line) <= 100.0);
        }
        assert_eq!(lines.join(&b' '), text.to_vec());
        let long = wrap(Font::Regular, 10.0, &[b'W'; 40], 50.0);
        assert!(long.len() > 1);
        assert_eq!(long.concat(), vec![b'W'; 40]);
        assert_eq!(wrap(Font::Regular, 10.0, b"", 50.0), vec![Vec::<u8>::new()]);
    }
}
