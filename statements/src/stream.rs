//! A statement written a piece at a time, for files too long to hold at once (Kobo's
//! background exports): [`Format::head`], then [`Format::lines`] for each run of lines in
//! order, then [`Format::tail`]. Joined, the pieces are the bytes the format's `statement`
//! writes of the whole statement (the tests hold it), so a file written in pieces, by one
//! process or by several one after another, is the same file. Each piece needs only the
//! statement's figures (its `lines` are not read) and the lines it writes.
//!
//! PDF is not among them: its pages and cross-reference table are laid out over the whole
//! document.

use crate::xml::Writer;
use crate::{camt053, csv, ofx, Line, Statement};

/// A format a statement can be written in pieces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Csv,
    Ofx,
    Camt053,
}

impl Format {
    /// Everything before the first line.
    pub fn head(self, statement: &Statement) -> String {
        match self {
            Format::Csv => csv::header(false),
            Format::Ofx | Format::Camt053 => self.opened(statement).take(),
        }
    }

    /// `lines`, the next ones of the statement, oldest first.
    pub fn lines(self, statement: &Statement, lines: &[Line]) -> String {
        match self {
            Format::Csv => {
                let mut out = String::new();
                csv::rows(&mut out, lines);
                out
            }
            Format::Ofx => {
                let mut xml = self.after_head(statement);
                for line in lines {
                    ofx::transaction(&mut xml, line);
                }
                xml.take()
            }
            Format::Camt053 => {
                let mut xml = self.after_head(statement);
                for line in lines {
                    camt053::entry(&mut xml, statement, line);
                }
                xml.take()
            }
        }
    }

    /// Everything after the last line.
    pub fn tail(self, statement: &Statement) -> String {
        match self {
            Format::Csv => String::new(),
            Format::Ofx => {
                let mut xml = self.after_head(statement);
                ofx::tail(&mut xml, statement);
                xml.finish()
            }
            Format::Camt053 => {
                let mut xml = self.after_head(statement);
                camt053::tail(&mut xml);
                xml.finish()
            }
        }
    }

    /// An XML writer past the head: its elements open, its text taken (what follows the head).
    fn after_head(self, statement: &Statement) -> Writer {
        let mut xml = self.opened(statement);
        xml.take();
        xml
    }

    /// An XML writer with the head written, its elements open.
    fn opened(self, statement: &Statement) -> Writer {
        let mut xml = Writer::new(&[]);
        match self {
            Format::Ofx => ofx::head(&mut xml, statement),
            Format::Camt053 => camt053::head(&mut xml, statement),
            Format::Csv => {}
        }
        xml
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample;

    /// Head, lines in runs of every size, and tail join into the whole document.
    #[test]
    fn pieces_join_into_the_whole_document() {
        for seed in 0..20 {
            let statement = sample::statement(seed, (seed as usize * 7) % 40);
            let figures = Statement {
                lines: Vec::new(),
                ..statement.clone()
            };
            for format in [Format::Csv, Format::Ofx, Format::Camt053] {
                let whole = match format {
                    Format::Csv => csv::statement(&statement),
                    Format::Ofx => ofx::statement(&statement),
                    Format::Camt053 => camt053::statement(&statement),
                };
                for run in [1, 3, 50] {
                    let mut pieces = format.head(&figures);
                    for lines in statement.lines.chunks(run) {
                        pieces.push_str(&format.lines(&figures, lines));
                    }
                    pieces.push_str(&format.tail(&figures));
                    assert_eq!(pieces, whole, "{format:?}, seed {seed}, runs of {run}");
                }
            }
        }
    }
}
