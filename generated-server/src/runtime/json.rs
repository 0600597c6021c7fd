//! Request bodies as JSON, strictly: an object never gives a key twice.
//!
//! `serde_json` keeps the last of two equal keys, and other readers of the same bytes (a
//! gateway, a log pipeline, a WAF) may keep the first: `{"amount":"1.00","amount":"9000.00"}`
//! would be one request to them and another to the bank. RFC 8259 leaves duplicate names
//! undefined, so the only safe reading is none: the body is refused, naming the key.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Why a body is not strict JSON.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Not JSON at all (serde_json's description, with line and column).
    Syntax(String),
    /// The path of a key given twice in one object (`filters.start_date`, `items[2].id`).
    DuplicateKey(String),
}

/// Parses `body` as one JSON value whose objects have unique keys.
pub(crate) fn parse(body: &[u8]) -> Result<Value, Refusal> {
    let duplicate = RefCell::new(None);
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let seed = Strict {
        path: &Path::Root,
        duplicate: &duplicate,
    };
    let parsed = seed
        .deserialize(&mut deserializer)
        .and_then(|value| deserializer.end().map(|()| value));
    parsed.map_err(|error| match duplicate.into_inner() {
        Some(path) => Refusal::DuplicateKey(path),
        None => Refusal::Syntax(error.to_string()),
    })
}

/// Where a value sits in the body, as a chain up to the root (no allocation on the way down).
enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Root => Ok(()),
            Path::Key(Path::Root, key) => write!(f, "{key}"),
            Path::Key(parent, key) => write!(f, "{parent}.{key}"),
            Path::Index(parent, index) => write!(f, "{parent}[{index}]"),
        }
    }
}

/// Deserializes one value at `path`, noting the first duplicate key in `duplicate`.
#[derive(Clone, Copy)]
struct Strict<'a> {
    path: &'a Path<'a>,
    duplicate: &'a RefCell<Option<String>>,
}

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<Value, A::Error> {
        let mut values = Vec::new();
        while let Some(value) = items.next_element_seed(Strict {
            path: &Path::Index(self.path, values.len()),
            duplicate: self.duplicate,
        })? {
            values.push(value);
        }
        Ok(Value::Array(values))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut entries: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = entries.next_key::<String>()? {
            let path = Path::Key(self.path, &key);
            if object.contains_key(&key) {
                *self.duplicate.borrow_mut() = Some(path.to_string());
                return Err(de::Error::custom("a key given twice"));
            }
            let value = entries.next_value_seed(Strict {
                path: &path,
                duplicate: self.duplicate,
            })?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(body: &str, expect: Result<Value, Refusal>) {
        assert_eq!(parse(body.as_bytes()), expect, "{body}");
    }

    #[test]
    fn valid_json_reads_as_serde_json_reads_it() {
        for body in [
            r#"{"amount": "1.00", "page": 2, "ratio": 0.5, "on": true, "none": null}"#,
            r#"[1, -2, 18446744073709551615, "x", {"a": [{"b": 1}, {"b": 2}]}]"#,
            r#"{"a": {"x": 1}, "b": {"x": 1}}"#,
            r#""text""#,
            "  {}  ",
        ] {
            let expected: Value = serde_json::from_str(body).unwrap();
            check(body, Ok(expected));
        }
        // Key order is kept.
        let parsed = parse(br#"{"z": 1, "a": 2}"#).unwrap();
        assert_eq!(parsed.to_string(), json!({"z": 1, "a": 2}).to_string());
    }

    #[test]
    fn a_key_given_twice_is_named_by_its_path() {
        let duplicate = |path: &str| Err(Refusal::DuplicateKey(path.to_owned()));
        check(
            r#"{"amount":"1.00","amount":"9000.00"}"#,
            duplicate("amount"),
        );
        check(
            r#"{"filters": {"start_date": "a", "start_date": "b"}}"#,
            duplicate("filters.start_date"),
        );
        check(
            r#"{"items": [{"id": 1}, {"id": 2, "id": 3}]}"#,
            duplicate("items[1].id"),
        );
        // Equal once unescaped is equal.
        check(r#"{"a": 1, "\u0061": 2}"#, duplicate("a"));
    }

    #[test]
    fn what_is_not_json_is_a_syntax_error() {
        for body in ["{", r#"{"a": 1} trailing"#, "", r#"{"a" 1}"#] {
            assert!(
                matches!(parse(body.as_bytes()), Err(Refusal::Syntax(_))),
                "{body}"
            );
        }
    }
}
