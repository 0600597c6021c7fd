//! Where a JSON pointer sits in the spec's YAML text, so a problem names a line and column.
//!
//! serde_norway keeps no positions, so this walks the text: block mappings and sequences by
//! indentation, a flow mapping (`{type: strng}`) by its keys on the line. The spec is hand-written
//! block YAML with short flow collections, which this reads; where it cannot follow a segment
//! (inside a flow sequence, a multi-line flow collection, an anchor) it stops at the deepest node
//! it found, which is still the right neighbourhood.

use std::fmt;

/// A 1-based line and column in the document's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// The position of the key (or sequence item) `pointer` (`#/a/b` or `/a/b`) names in `text`, or
/// the deepest one found on the way; `None` for the root or a pointer whose first segment is not
/// there.
pub fn position(text: &str, pointer: &str) -> Option<Position> {
    let pointer = pointer.strip_prefix('#').unwrap_or(pointer);
    let segments: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|segment| segment.replace("~1", "/").replace("~0", "~"))
        .collect();
    let lines: Vec<&str> = text.lines().collect();
    let mut node = Node::ROOT;
    let mut found = None;
    for segment in &segments {
        let Some(next) = child(&lines, node, segment) else {
            break;
        };
        found = Some(Position {
            line: next.line + 1,
            column: next.column + 1,
        });
        node = next;
    }
    found
}

/// A node of the text: the line and column of its key (or of the `-` of a sequence item), and
/// the column its value starts at on that line.
#[derive(Debug, Clone, Copy)]
struct Node {
    line: usize,
    column: usize,
    value_column: usize,
    /// The root, whose children start at the first line.
    root: bool,
}

impl Node {
    const ROOT: Node = Node {
        line: 0,
        column: 0,
        value_column: 0,
        root: true,
    };
}

fn child(lines: &[&str], node: Node, segment: &str) -> Option<Node> {
    let rest = if node.root {
        ""
    } else {
        lines[node.line].get(node.value_column..).unwrap_or("")
    };
    let trimmed = rest.trim_start();
    let column = node.value_column + (rest.len() - trimmed.len());
    if trimmed.starts_with('{') {
        return flow_key(lines[node.line], column, segment, node.line);
    }
    if trimmed.starts_with('[') {
        return None;
    }
    // A sequence item whose mapping starts on its own line: `- key: value`.
    if !node.root && !trimmed.is_empty() && !trimmed.starts_with('#') {
        if let Some(found) = key_at(lines[node.line], column, segment, node.line) {
            return Some(found);
        }
    }
    let first = if node.root { 0 } else { node.line + 1 };
    let mut child_indent = None;
    let mut index = 0usize;
    for (number, line) in lines.iter().enumerate().skip(first) {
        let content = line.trim_start();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let indent = line.len() - content.len();
        if !node.root && indent <= node.column {
            break;
        }
        let expected = *child_indent.get_or_insert(indent);
        if indent < expected {
            break;
        }
        if indent > expected {
            continue;
        }
        if let Some(item) = content.strip_prefix('-') {
            if item.is_empty() || item.starts_with(' ') {
                if segment.parse() == Ok(index) {
                    let value_column = indent + 1 + (item.len() - item.trim_start().len());
                    return Some(Node {
                        line: number,
                        column: indent,
                        value_column,
                        root: false,
                    });
                }
                index += 1;
                continue;
            }
        }
        if let Some(found) = key_at(line, indent, segment, number) {
            return Some(found);
        }
    }
    None
}

/// The key `segment` starting at `column` of `line` (plain, single- or double-quoted).
fn key_at(line: &str, column: usize, segment: &str, number: usize) -> Option<Node> {
    let content = line.get(column..)?;
    for quote in ["", "'", "\""] {
        let written = format!("{quote}{segment}{quote}:");
        if let Some(after) = content.strip_prefix(&written) {
            if after.is_empty() || after.starts_with([' ', '\t']) {
                return Some(Node {
                    line: number,
                    column,
                    value_column: column + written.len(),
                    root: false,
                });
            }
        }
    }
    None
}

/// The key `segment` of the flow mapping opening at `column` of `line`, at its first level.
fn flow_key(line: &str, column: usize, segment: &str, number: usize) -> Option<Node> {
    let bytes = line.as_bytes();
    let mut depth = 0usize;
    let mut expect_key = false;
    let mut quote = None;
    for (at, &byte) in bytes.iter().enumerate().skip(column) {
        if let Some(open) = quote {
            if byte == open {
                quote = None;
            }
            continue;
        }
        match byte {
            b'{' | b'[' => {
                depth += 1;
                expect_key = byte == b'{' && depth == 1;
                continue;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return None;
                }
            }
            b',' if depth == 1 => {
                expect_key = true;
                continue;
            }
            b' ' | b'\t' => continue,
            _ => {}
        }
        if expect_key && depth == 1 {
            expect_key = false;
            if let Some(found) = key_at(line, at, segment, number) {
                return Some(found);
            }
        }
        if byte == b'\'' || byte == b'"' {
            quote = Some(byte);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
openapi: 3.0.3
# a comment
components:
  schemas:
    Hold:
      type: object
      description: |
        reason: not a key
      properties:
        amount: {type: integer}
        reason: {description: 'a, b', type: strng}
      allOf:
        - $ref: '#/components/schemas/A'
        - type: object
          required: [x]
";

    fn at(pointer: &str) -> Option<(usize, usize)> {
        position(TEXT, pointer).map(|found| (found.line, found.column))
    }

    #[test]
    fn block_keys_are_found_by_indentation() {
        assert_eq!(at("#/openapi"), Some((1, 1)));
        assert_eq!(at("#/components/schemas/Hold"), Some((5, 5)));
        assert_eq!(at("#/components/schemas/Hold/properties"), Some((9, 7)));
    }

    #[test]
    fn flow_mapping_keys_are_found_on_their_line() {
        assert_eq!(
            at("#/components/schemas/Hold/properties/reason/type"),
            Some((11, 39))
        );
        assert_eq!(
            at("#/components/schemas/Hold/properties/amount/type"),
            Some((10, 18))
        );
    }

    #[test]
    fn sequence_items_and_their_keys() {
        assert_eq!(at("#/components/schemas/Hold/allOf/1"), Some((14, 9)));
        assert_eq!(
            at("#/components/schemas/Hold/allOf/1/required"),
            Some((15, 11))
        );
        assert_eq!(at("#/components/schemas/Hold/allOf/0/$ref"), Some((13, 11)));
    }

    #[test]
    fn a_missing_segment_stops_at_the_deepest_node_found() {
        assert_eq!(at("#/components/schemas/Hold/nope"), Some((5, 5)));
        assert_eq!(at("#/nope"), None);
    }
}
