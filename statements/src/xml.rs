//! What the two XML formats (OFX 2.2 and camt.053) share: escaping, clipping to a field's
//! length, and a small writer of indented elements.

/// Element text: `&`, `<`, `>`, `"` and `'` escaped; tabs and line breaks made spaces (every
/// field we write is one line); characters XML 1.0 forbids (other control characters, U+FFFE,
/// U+FFFF) replaced by `?`.
pub(crate) fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 8);
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(' '),
            c if c < ' ' || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

/// At most `max` characters of `value` with surrounding whitespace trimmed: schemas limit
/// lengths in characters, before escaping. Line breaks count as the spaces they become.
pub(crate) fn clip(value: &str, max: usize) -> String {
    let clipped: String = value.trim().chars().take(max).collect();
    clipped.trim_end().to_string()
}

/// Writes elements one a line, indented by depth.
pub(crate) struct Writer {
    out: String,
    open: Vec<&'static str>,
}

impl Writer {
    /// Starts a document with its prolog lines (declarations), written as given.
    pub(crate) fn new(prolog: &[&str]) -> Writer {
        let mut out = String::new();
        for line in prolog {
            out.push_str(line);
            out.push('\n');
        }
        Writer {
            out,
            open: Vec::new(),
        }
    }

    /// Writes `lines` (the XML declaration and processing instructions) before the root.
    pub(crate) fn prolog(&mut self, lines: &[&str]) {
        for line in lines {
            self.out.push_str(line);
            self.out.push('\n');
        }
    }

    fn indent(&mut self) {
        for _ in 0..self.open.len() {
            self.out.push_str("  ");
        }
    }

    /// `<tag>`, to be closed by [`Writer::close`].
    pub(crate) fn open(&mut self, tag: &'static str) {
        self.open_with(tag, &[]);
    }

    /// `<tag name="value" ...>`, values escaped.
    pub(crate) fn open_with(&mut self, tag: &'static str, attributes: &[(&str, &str)]) {
        self.indent();
        self.out.push('<');
        self.out.push_str(tag);
        self.attributes(attributes);
        self.out.push_str(">\n");
        self.open.push(tag);
    }

    /// Closes the innermost open element.
    pub(crate) fn close(&mut self) {
        let tag = self.open.pop().expect("an open element to close");
        self.indent();
        self.out.push_str("</");
        self.out.push_str(tag);
        self.out.push_str(">\n");
    }

    /// `<tag>text</tag>`, text escaped.
    pub(crate) fn leaf(&mut self, tag: &str, text: &str) {
        self.leaf_with(tag, &[], text);
    }

    /// `<tag name="value">text</tag>`.
    pub(crate) fn leaf_with(&mut self, tag: &str, attributes: &[(&str, &str)], text: &str) {
        self.indent();
        self.out.push('<');
        self.out.push_str(tag);
        self.attributes(attributes);
        self.out.push('>');
        self.out.push_str(&escape(text));
        self.out.push_str("</");
        self.out.push_str(tag);
        self.out.push_str(">\n");
    }

    /// [`Writer::leaf`] of `text` clipped to `max` characters, or nothing when that is empty
    /// (the schemas' text types are at least one character long).
    pub(crate) fn text(&mut self, tag: &str, text: &str, max: usize) {
        let text = clip(text, max);
        if !text.is_empty() {
            self.leaf(tag, &text);
        }
    }

    fn attributes(&mut self, attributes: &[(&str, &str)]) {
        for (name, value) in attributes {
            self.out.push(' ');
            self.out.push_str(name);
            self.out.push_str("=\"");
            self.out.push_str(&escape(value));
            self.out.push('"');
        }
    }

    /// The document, every element closed.
    /// What was written since the last `take`, the open elements kept: a piece of a document
    /// written a piece at a time ([`crate::stream`]).
    pub(crate) fn take(&mut self) -> String {
        std::mem::take(&mut self.out)
    }

    pub(crate) fn finish(self) -> String {
        assert!(self.open.is_empty(), "unclosed elements: {:?}", self.open);
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_control_characters() {
        assert_eq!(
            escape(r#"Chukwu & Sons <supplies> "big" O'Neil"#),
            "Chukwu &amp; Sons &lt;supplies&gt; &quot;big&quot; O&apos;Neil"
        );
        assert_eq!(escape("a\tb\r\nc"), "a b  c");
        assert_eq!(escape("bell\u{7}\u{FFFF}"), "bell??");
        assert_eq!(escape("Adébáyọ̀ ₦"), "Adébáyọ̀ ₦");
        // Already-escaped text is escaped again: what we write reads back as it was given.
        assert_eq!(escape("&amp;"), "&amp;amp;");
    }

    #[test]
    fn clips_by_characters() {
        assert_eq!(clip("  Adébáyọ̀  ", 5), "Adébá");
        assert_eq!(clip("ab cd", 3), "ab");
        assert_eq!(clip("   ", 10), "");
    }

    #[test]
    fn writes_nested_elements() {
        let mut xml = Writer::new(&["<?xml version=\"1.0\"?>"]);
        xml.open_with("A", &[("x", "1 & 2")]);
        xml.leaf("B", "<b>");
        xml.text("C", "   ", 10);
        xml.text("D", "abcdef", 3);
        xml.close();
        assert_eq!(
            xml.finish(),
            "<?xml version=\"1.0\"?>\n<A x=\"1 &amp; 2\">\n  <B>&lt;b&gt;</B>\n  <D>abc</D>\n</A>\n"
        );
    }
}
