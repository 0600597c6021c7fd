//! The PDF file itself: numbered objects, a cross-reference table of their byte offsets, the
//! trailer; and the drawing operators of a page's content stream.
//!
//! Everything written is ASCII except the four bytes of the binary comment on the second line
//! (which tells transfer programs the file is binary): string bytes outside printable ASCII are
//! written as octal escapes.

use super::winansi;

/// A4 in points.
pub(super) const PAGE_WIDTH: f32 = 595.28;
pub(super) const PAGE_HEIGHT: f32 = 841.89;

pub(super) use super::winansi::Font;

/// The name a page's resources give `font`.
fn resource(font: Font) -> &'static str {
    match font {
        Font::Regular => "/F1",
        Font::Bold => "/F2",
    }
}

/// How a piece of text looks: font, size in points, and gray level (0 is black).
#[derive(Clone, Copy, Debug)]
pub(super) struct Style {
    pub font: Font,
    pub size: f32,
    pub gray: f32,
}

impl Style {
    pub(super) const fn new(font: Font, size: f32) -> Style {
        Style {
            font,
            size,
            gray: 0.0,
        }
    }

    pub(super) const fn gray(self, gray: f32) -> Style {
        Style { gray, ..self }
    }

    /// The width of WinAnsi `text` in this style, in points.
    pub(super) fn width(&self, text: &[u8]) -> f32 {
        winansi::width(self.font, self.size, text)
    }
}

/// One page's drawing operators.
#[derive(Default)]
pub(super) struct Content {
    ops: String,
}

impl Content {
    /// Text with its baseline starting at (`x`, `y`); `text` is Unicode, written in WinAnsi.
    pub(super) fn text(&mut self, style: Style, x: f32, y: f32, text: &str) {
        self.bytes(style, x, y, &winansi::encode(text));
    }

    /// Text already in WinAnsi.
    pub(super) fn bytes(&mut self, style: Style, x: f32, y: f32, text: &[u8]) {
        self.ops.push_str(&format!(
            "BT {:.3} g {} {:.2} Tf {x:.2} {y:.2} Td {} Tj ET\n",
            style.gray,
            resource(style.font),
            style.size,
            string(text)
        ));
    }

    /// Text ending at `right`.
    pub(super) fn text_right(&mut self, style: Style, right: f32, y: f32, text: &str) {
        let bytes = winansi::encode(text);
        self.bytes(style, right - style.width(&bytes), y, &bytes);
    }

    /// Text cut to `max` points with `…` if it is wider.
    pub(super) fn text_fit(&mut self, style: Style, x: f32, y: f32, text: &str, max: f32) {
        let bytes = winansi::fit(style.font, style.size, &winansi::encode(text), max);
        self.bytes(style, x, y, &bytes);
    }

    /// Text set smaller than `style` if that is what it takes to fit `max` points whole.
    pub(super) fn text_shrink(&mut self, style: Style, x: f32, y: f32, text: &str, max: f32) {
        let bytes = winansi::encode(text);
        let width = style.width(&bytes);
        let style = if width > max {
            Style {
                size: style.size * max / width,
                ..style
            }
        } else {
            style
        };
        self.bytes(style, x, y, &bytes);
    }

    /// A filled rectangle in `gray`.
    pub(super) fn fill(&mut self, gray: f32, x: f32, y: f32, width: f32, height: f32) {
        self.ops.push_str(&format!(
            "{gray:.3} g {x:.2} {y:.2} {width:.2} {height:.2} re f 0 g\n"
        ));
    }

    /// A straight line `width` points thick.
    pub(super) fn rule(&mut self, x1: f32, y1: f32, x2: f32, y2: f32, width: f32) {
        self.ops.push_str(&format!(
            "{width:.2} w 0.6 G {x1:.2} {y1:.2} m {x2:.2} {y2:.2} l S 0 G\n"
        ));
    }
}

/// A PDF literal string of WinAnsi bytes: `(`, `)` and `\` escaped, bytes outside printable
/// ASCII as three-digit octal.
pub(super) fn string(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('(');
    for &byte in bytes {
        match byte {
            b'(' | b')' | b'\\' => {
                out.push('\\');
                out.push(char::from(byte));
            }
            0x20..=0x7E => out.push(char::from(byte)),
            _ => out.push_str(&format!("\\{byte:03o}")),
        }
    }
    out.push(')');
    out
}

/// A text string for the document information (title, author): UTF-16BE with its byte-order
/// mark, in hex, so that any Unicode survives.
pub(super) fn text_string(text: &str) -> String {
    let mut out = String::from("<FEFF");
    for unit in text.encode_utf16() {
        out.push_str(&format!("{unit:04X}"));
    }
    out.push('>');
    out
}

/// The document's metadata.
pub(super) struct Info {
    pub title: String,
    pub author: String,
    pub subject: String,
    /// `D:20261201090000+01'00'`.
    pub created: String,
}

/// Writes the pages into a PDF 1.4 file.
pub(super) fn assemble(pages: Vec<Content>, info: &Info) -> Vec<u8> {
    let mut objects: Vec<String> = Vec::new();
    let mut add = |body: String| {
        objects.push(body);
        objects.len()
    };
    // 1 catalog, 2 page tree, 3 and 4 fonts, then each page's content and page, then info.
    let catalog = add("<< /Type /Catalog /Pages 2 0 R >>".into());
    let tree = add(String::new());
    let regular = add(font("Helvetica"));
    let bold = add(font("Helvetica-Bold"));
    let mut kids = Vec::new();
    for page in &pages {
        let content = add(format!(
            "<< /Length {} >>\nstream\n{}\nendstream",
            page.ops.len(),
            page.ops
        ));
        kids.push(add(format!(
            "<< /Type /Page /Parent {tree} 0 R /MediaBox [0 0 {PAGE_WIDTH} {PAGE_HEIGHT}] \
             /Resources << /Font << /F1 {regular} 0 R /F2 {bold} 0 R >> >> /Contents {content} 0 R >>"
        )));
    }
    let information = add(format!(
        "<< /Title {} /Author {} /Subject {} /Creator {} /Producer {} /CreationDate {} >>",
        text_string(&info.title),
        text_string(&info.author),
        text_string(&info.subject),
        text_string("Kobo"),
        text_string("kobo-statements"),
        string(info.created.as_bytes())
    ));
    let kids: Vec<String> = kids.iter().map(|kid| format!("{kid} 0 R")).collect();
    objects[tree - 1] = format!(
        "<< /Type /Pages /Kids [{}] /Count {} >>",
        kids.join(" "),
        pages.len()
    );

    let mut out: Vec<u8> = b"%PDF-1.4\n%\xE2\xE3\xCF\xD3\n".to_vec();
    let mut offsets = Vec::with_capacity(objects.len());
    for (index, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", index + 1).as_bytes());
    }
    let xref = out.len();
    // Each entry is exactly 20 bytes: ten digits, space, five digits, space, n or f, space, LF.
    let mut table = format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1);
    for offset in offsets {
        table.push_str(&format!("{offset:010} 00000 n \n"));
    }
    table.push_str(&format!(
        "trailer\n<< /Size {} /Root {catalog} 0 R /Info {information} 0 R >>\nstartxref\n{xref}\n%%EOF\n",
        objects.len() + 1
    ));
    out.extend_from_slice(table.as_bytes());
    out
}

fn font(name: &str) -> String {
    format!("<< /Type /Font /Subtype /Type1 /BaseFont /{name} /Encoding /WinAnsiEncoding >>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_strings() {
        assert_eq!(string(b"Rent (Q4) \\ Lekki"), r"(Rent \(Q4\) \\ Lekki)");
        assert_eq!(string(b"Ad\xE9b\xE1y\xF2"), r"(Ad\351b\341y\362)");
        assert_eq!(string(b"a\nb"), r"(a\012b)");
        assert_eq!(text_string("Aé"), "<FEFF004100E9>");
    }

    #[test]
    fn a_stream_length_counts_its_bytes() {
        let mut page = Content::default();
        page.text(Style::new(Font::Regular, 9.0), 10.0, 20.0, "Adébáyọ̀ (x)");
        let pdf = assemble(
            vec![page],
            &Info {
                title: "t".into(),
                author: "a".into(),
                subject: "s".into(),
                created: "D:20260101000000+01'00'".into(),
            },
        );
        let text = String::from_utf8_lossy(&pdf);
        let start = text.find("stream\n").unwrap() + "stream\n".len();
        let end = text.find("endstream").unwrap();
        let declared: usize = text
            .split("/Length ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        // The line break before `endstream` is not part of the stream.
        assert_eq!(end - start - 1, declared);
        assert!(text[start..end].contains(r"(Ad\351b\341y\362 \(x\))"));
    }
}
