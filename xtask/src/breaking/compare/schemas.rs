//! The comparison of two schemas reached at one place: their kinds, nullability, enums, the
//! constraints on what a request carries, objects and variants.

use serde_json::Value;

use super::*;

impl Comparison<'_, '_> {
    /// Compares two schemas reached at `at`, found at `sites` (their JSON pointers).
    pub(super) fn schema(
        &mut self,
        direction: Direction,
        at: &str,
        old: &Value,
        current: &Value,
        (old_site, new_site): &Sites,
    ) {
        let old = schema::resolve(self.base.doc, old, old_site);
        let current = schema::resolve(self.new.doc, current, new_site);
        let key = (!old.refs.is_empty() || !current.refs.is_empty())
            .then(|| (old.refs.clone(), current.refs.clone(), direction));
        if let Some(key) = &key {
            if !self.on_path.insert(key.clone()) {
                // A recursive schema: this pair is already being compared further up.
                return;
            }
        }
        self.kind(direction, at, "type", &old, &current);
        self.kind(direction, at, "format", &old, &current);
        self.nullable(direction, at, &old, &current);
        self.enumeration(direction, at, &old, &current);
        if direction == Direction::Request {
            self.request_constraints(at, &old, &current);
        }
        self.object(direction, at, &old, &current);
        if let (Some(old_items), Some(new_items)) = (old.get("items"), current.get("items")) {
            let sites = (
                format!("{}/items", old.origin("items")),
                format!("{}/items", current.origin("items")),
            );
            self.schema(
                direction,
                &format!("{at}/items"),
                old_items,
                new_items,
                &sites,
            );
        }
        for keyword in ["oneOf", "anyOf"] {
            self.variants(direction, at, keyword, &old, &current);
        }
        if let Some(key) = key {
            self.on_path.remove(&key);
        }
    }

    /// `type` and `format`: any change breaks, except a request that stops constraining (or
    /// widens `integer` to `number`) and a response that starts constraining (or narrows `number`
    /// to `integer`).
    pub(super) fn kind(
        &mut self,
        direction: Direction,
        at: &str,
        keyword: &str,
        old: &Resolved,
        current: &Resolved,
    ) {
        let (before, after) = (old.get(keyword), current.get(keyword));
        if before == after {
            return;
        }
        let (before, after) = (before.map(show), after.map(show));
        let (wider, narrower) = match direction {
            Direction::Request => (after.as_deref(), before.as_deref()),
            Direction::Response => (before.as_deref(), after.as_deref()),
        };
        let harmless = wider.is_none()
            || (keyword == "type" && narrower == Some("integer") && wider == Some("number"));
        if harmless {
            return;
        }
        let side = direction.side();
        let reason = match (before, after) {
            (Some(before), Some(after)) => {
                format!("the {side} {keyword} changes from `{before}` to `{after}`")
            }
            (None, Some(after)) => format!(
                "the request field gains `{keyword}: {after}`: values clients send may be refused"
            ),
            (Some(before), None) => format!(
                "the response field loses `{keyword}: {before}`: clients may receive other values"
            ),
            (None, None) => unreachable!("the two sides differ"),
        };
        self.report_keyword(at, old, current, keyword, reason);
    }

    pub(super) fn nullable(
        &mut self,
        direction: Direction,
        at: &str,
        old: &Resolved,
        current: &Resolved,
    ) {
        let (before, after) = (old.flag("nullable"), current.flag("nullable"));
        match direction {
            Direction::Request if before && !after => self.report_keyword(
                at,
                old,
                current,
                "nullable",
                "the request field is no longer nullable: clients that send null are refused",
            ),
            Direction::Response if !before && after => self.report_keyword(
                at,
                old,
                current,
                "nullable",
                "the response field becomes nullable: clients that do not expect null break",
            ),
            _ => {}
        }
    }

    pub(super) fn enumeration(
        &mut self,
        direction: Direction,
        at: &str,
        old: &Resolved,
        current: &Resolved,
    ) {
        let before = old.get("enum").and_then(Value::as_array);
        let after = current.get("enum").and_then(Value::as_array);
        let side = direction.side();
        match (before, after) {
            (Some(before), Some(after)) => {
                for value in before.iter().filter(|value| !after.contains(value)) {
                    let label = show(value);
                    let consequence = match direction {
                        Direction::Request => "clients that send it are refused",
                        Direction::Response => "clients that rely on it break",
                    };
                    self.report_keyword(
                        at,
                        old,
                        current,
                        &format!("enum/{}", escape(&label)),
                        format!("`{label}` is removed from the {side} enum: {consequence}"),
                    );
                }
                if direction == Direction::Response
                    && !old.open
                    && !self.is_response_code_enum(before, after)
                {
                    for value in after.iter().filter(|value| !before.contains(value)) {
                        let label = show(value);
                        self.report_keyword(
                            at,
                            old,
                            current,
                            &format!("enum/{}", escape(&label)),
                            format!(
                                "the closed response enum gains `{label}`: clients that handle \
                                 every value break (an open enum carries `{}: true`)",
                                schema::EXTENSIBLE_ENUM
                            ),
                        );
                    }
                }
            }
            (None, Some(_)) if direction == Direction::Request => self.report_keyword(
                at,
                old,
                current,
                "enum",
                "the request field becomes an enum: other values clients send are refused",
            ),
            (Some(_), None) if direction == Direction::Response && !old.open => self
                .report_keyword(
                    at,
                    old,
                    current,
                    "enum",
                    "the closed response enum loses its `enum`: clients may receive any value",
                ),
            _ => {}
        }
    }

    /// What narrows the values a request may carry: a new or changed pattern, a lower maximum,
    /// a higher minimum, a bound that becomes exclusive.
    pub(super) fn request_constraints(&mut self, at: &str, old: &Resolved, current: &Resolved) {
        match (old.str("pattern"), current.str("pattern")) {
            (None, Some(after)) => self.report_keyword(
                at,
                old,
                current,
                "pattern",
                format!(
                    "the request field gains the pattern `{after}`: values clients send may be \
                     refused"
                ),
            ),
            (Some(before), Some(after)) if before != after => self.report_keyword(
                at,
                old,
                current,
                "pattern",
                format!(
                    "the request field's pattern changes from `{before}` to `{after}`: values \
                     clients send may be refused"
                ),
            ),
            _ => {}
        }
        for keyword in ["maxLength", "maximum", "maxItems"] {
            match (old.number(keyword), current.number(keyword)) {
                (None, Some(_)) => self.report_keyword(
                    at,
                    old,
                    current,
                    keyword,
                    format!(
                        "the request field gains `{keyword}: {}`: values clients send may be \
                         refused",
                        show_keyword(current, keyword)
                    ),
                ),
                (Some(before), Some(after)) if after < before => self.report_keyword(
                    at,
                    old,
                    current,
                    keyword,
                    format!(
                        "the request field's `{keyword}` is lowered from {} to {}: values clients \
                         send may be refused",
                        show_keyword(old, keyword),
                        show_keyword(current, keyword)
                    ),
                ),
                _ => {}
            }
        }
        self.request_floors(at, old, current);
    }

    /// What raises the floor of the values a request may carry: a higher minimum, a bound
    /// that becomes exclusive.
    pub(super) fn request_floors(&mut self, at: &str, old: &Resolved, current: &Resolved) {
        for keyword in ["minLength", "minimum", "minItems"] {
            // No `minLength` is `minLength: 0`; no `minimum` is no bound at all.
            let floor = (keyword != "minimum").then_some(0.0);
            let before = old.number(keyword).or(floor);
            let after = current.number(keyword).or(floor);
            match (before, after) {
                (None, Some(_)) => self.report_keyword(
                    at,
                    old,
                    current,
                    keyword,
                    format!(
                        "the request field gains `{keyword}: {}`: values clients send may be \
                         refused",
                        show_keyword(current, keyword)
                    ),
                ),
                (Some(before), Some(after)) if after > before => self.report_keyword(
                    at,
                    old,
                    current,
                    keyword,
                    format!(
                        "the request field's `{keyword}` is raised from {} to {}: values clients \
                         send may be refused",
                        show_keyword(old, keyword),
                        show_keyword(current, keyword)
                    ),
                ),
                _ => {}
            }
        }
        for (flag, bound) in [
            ("exclusiveMinimum", "minimum"),
            ("exclusiveMaximum", "maximum"),
        ] {
            if !old.flag(flag) && current.flag(flag) {
                self.report_keyword(
                    at,
                    old,
                    current,
                    flag,
                    format!(
                        "the request field's `{bound}` becomes exclusive: clients that send the \
                         bound itself are refused"
                    ),
                );
            }
        }
    }

    /// `properties`, `required` and `additionalProperties`.
    pub(super) fn object(
        &mut self,
        direction: Direction,
        at: &str,
        old: &Resolved,
        current: &Resolved,
    ) {
        let (old_properties, new_properties) = (old.properties(), current.properties());
        let (old_required, new_required) = (old.required(), current.required());
        match direction {
            Direction::Request => {
                for name in new_required.iter().filter(|n| !old_required.contains(n)) {
                    let reason = if old_properties.contains_key(*name) {
                        "the request field becomes required: clients that omit it are refused"
                    } else {
                        "a new required request field: clients that omit it are refused"
                    };
                    self.report_required(at, current, name, reason);
                }
            }
            Direction::Response => {
                for name in old_required.iter().filter(|n| !new_required.contains(n)) {
                    // A removed field is reported as removed.
                    if new_properties.contains_key(*name) {
                        self.report_required(
                            at,
                            old,
                            name,
                            "the response field becomes optional: clients that expect it break \
                             when it is missing",
                        );
                    }
                }
            }
        }
        for (name, old_property) in old_properties {
            let property = format!("properties/{}", escape(name));
            let field = format!("{at}/{property}");
            let origin = |schema: &Resolved| {
                let holder = schema.property_origins.get(name).unwrap_or(&schema.pointer);
                format!("{holder}/{property}")
            };
            match new_properties.get(name) {
                Some(new_property) => {
                    let sites = (origin(old), origin(current));
                    self.schema(direction, &field, old_property, new_property, &sites)
                }
                None => {
                    let reason = match direction {
                        Direction::Request => {
                            "the request field is removed: clients that send it are refused \
                             or ignored"
                        }
                        Direction::Response => {
                            "the response field is removed: clients that read it break"
                        }
                    };
                    self.report_schema(origin(old), field, reason);
                }
            }
        }
        let before = old.get("additionalProperties");
        let after = current.get("additionalProperties");
        let closed = |value: Option<&Value>| value == Some(&Value::Bool(false));
        if direction == Direction::Request && closed(after) && !closed(before) {
            self.report_keyword(
                at,
                old,
                current,
                "additionalProperties",
                "the request object becomes closed (`additionalProperties: false`): clients that \
                 send fields it does not name are refused",
            );
        }
        let is_schema = |value: Option<&Value>| value.is_some_and(Value::is_object);
        if !closed(before) && !closed(after) && (is_schema(before) || is_schema(after)) {
            // `true` or absent: any value, which an empty schema also says.
            let any = |value: Option<&Value>| value.filter(|v| v.is_object()).cloned();
            let (before, after) = (any(before), any(after));
            let sites = (
                format!(
                    "{}/additionalProperties",
                    old.origin("additionalProperties")
                ),
                format!(
                    "{}/additionalProperties",
                    current.origin("additionalProperties")
                ),
            );
            self.schema(
                direction,
                &format!("{at}/additionalProperties"),
                before.as_ref().unwrap_or(&Value::Null),
                after.as_ref().unwrap_or(&Value::Null),
                &sites,
            );
        }
    }

    /// `oneOf` / `anyOf`: variants are matched by the component they name (else by position). A
    /// request may not lose one; a closed response may not gain one.
    pub(super) fn variants(
        &mut self,
        direction: Direction,
        at: &str,
        keyword: &str,
        old: &Resolved,
        current: &Resolved,
    ) {
        let (Some(before), Some(after)) = (
            old.get(keyword).and_then(Value::as_array),
            current.get(keyword).and_then(Value::as_array),
        ) else {
            return;
        };
        let (before, after) = (variants(before), variants(after));
        for (index, (name, old_variant)) in before.iter().enumerate() {
            let variant = format!("{at}/{keyword}/{}", escape(name));
            match after
                .iter()
                .enumerate()
                .find(|(_, (other, _))| other == name)
            {
                Some((new_index, (_, new_variant))) => {
                    let sites = (
                        format!("{}/{keyword}/{index}", old.origin(keyword)),
                        format!("{}/{keyword}/{new_index}", current.origin(keyword)),
                    );
                    self.schema(direction, &variant, old_variant, new_variant, &sites)
                }
                None if direction == Direction::Request => self.report_keyword(
                    at,
                    old,
                    current,
                    &format!("{keyword}/{}", escape(name)),
                    format!(
                        "the request `{keyword}` loses the variant `{name}`: clients that send \
                         it are refused"
                    ),
                ),
                None => {}
            }
        }
        if direction == Direction::Response && !old.open {
            for (name, _) in after
                .iter()
                .filter(|(name, _)| !before.iter().any(|(other, _)| other == name))
            {
                self.report_keyword(
                    at,
                    old,
                    current,
                    &format!("{keyword}/{}", escape(name)),
                    format!(
                        "the closed response `{keyword}` gains the variant `{name}`: clients that \
                         handle every variant break (an open one carries `{}: true`)",
                        schema::EXTENSIBLE_ENUM
                    ),
                );
            }
        }
    }
}
