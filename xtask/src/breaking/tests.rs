//! Each rule against a small fixture and an edited copy of it: `assert_breaks(edits, expected)`
//! compares [`BEFORE`] with [`BEFORE`] after the textual edits (each must match exactly once) and
//! asserts the places reported are exactly the expected ones: each place a schema's change
//! reaches, and the location of any other break. `assert_change` asserts where one change is
//! reported (once, at its schema) and what it reaches.
//!
//! The fixture reaches its schemas through every kind of `$ref` (request bodies, responses,
//! parameters, headers, schemas) and `allOf` wrapper, so each rule is also a test of resolving
//! them. `Thing` is the data of `create_thing`, of `get_thing` (through an `allOf` wrapper), of
//! the event in `get_thing`'s `last_event` and of the `thing.created` webhook, so a change to it
//! is reported at all four.

use serde_json::Value;

use super::changelog::{self, judge};
use super::{compare, Break};
use crate::spec;

const BEFORE: &str = r#"
openapi: 3.0.3
info:
  title: Breaking-change fixture
  version: 1.0.0
x-response-codes:
  '00': {name: success, http_status: 200, meaning: Success, origin: source}
  '01': {name: invalid_request, http_status: 400, meaning: Invalid request, origin: source}
  '44': {name: thing_not_found, http_status: 404, meaning: No such thing, origin: extension}
x-webhooks:
  thing.created:
    post:
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/ThingEvent'
      responses:
        '200':
          description: Acknowledged.
paths:
  /api/v1/thing/web/create_thing:
    post:
      operationId: create_thing
      parameters:
        - $ref: '#/components/parameters/IdempotencyKey'
      requestBody:
        $ref: '#/components/requestBodies/CreateThing'
      responses:
        '200':
          $ref: '#/components/responses/ThingCreated'
        '400':
          $ref: '#/components/responses/BadRequest'
  /api/v1/thing/web/get_thing:
    post:
      operationId: get_thing
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [id]
              properties:
                id: {type: string, format: uuid}
      responses:
        '200':
          description: The thing.
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/GetThingResponse'
components:
  parameters:
    IdempotencyKey:
      name: Idempotency-Key
      in: header
      required: false
      schema:
        type: string
        maxLength: 255
  headers:
    XRequestId:
      schema:
        type: string
  requestBodies:
    CreateThing:
      required: true
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/CreateThingRequest'
  responses:
    ThingCreated:
      description: The new thing.
      headers:
        X-Request-Id:
          $ref: '#/components/headers/XRequestId'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/CreateThingResponse'
    BadRequest:
      description: Refused.
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/ErrorEnvelope'
  schemas:
    ResponseCode:
      type: string
      enum: ['01', '44']
    ErrorEnvelope:
      type: object
      required: [status, response_code]
      properties:
        status: {type: boolean}
        response_code:
          $ref: '#/components/schemas/ResponseCode'
    CreateThingRequest:
      type: object
      additionalProperties: false
      required: [name]
      properties:
        name:
          type: string
          minLength: 1
          maxLength: 100
        note:
          type: string
          nullable: true
        size:
          $ref: '#/components/schemas/Size'
        count:
          type: integer
          minimum: 1
          maximum: 100
        labels:
          type: array
          maxItems: 10
          items:
            type: string
        code:
          type: string
          pattern: '^[0-9]{4}$'
    Size:
      type: string
      enum: [small, large]
    CreateThingResponse:
      type: object
      required: [status, data]
      properties:
        status: {type: boolean}
        data:
          $ref: '#/components/schemas/Thing'
    GetThingResponse:
      type: object
      required: [status, data]
      properties:
        status: {type: boolean}
        data:
          allOf:
            - $ref: '#/components/schemas/Thing'
          description: The thing.
        last_event:
          oneOf:
            - $ref: '#/components/schemas/ThingEvent'
    Thing:
      type: object
      required: [id, state, created_at]
      properties:
        id: {type: string, format: uuid}
        state:
          $ref: '#/components/schemas/ThingState'
        colour:
          $ref: '#/components/schemas/Colour'
        channel:
          $ref: '#/components/schemas/Channel'
        created_at: {type: string, format: date-time}
        parent:
          allOf:
            - $ref: '#/components/schemas/Thing'
          nullable: true
    ThingState:
      type: string
      enum: [active, archived]
    Colour:
      type: string
      x-extensible-enum: true
      enum: [red, green]
    Channel:
      type: string
      description: How it came. Clients should accept
        values added later.
      enum: [web, api]
    ThingEvent:
      type: object
      required: [type, data]
      properties:
        type: {type: string, enum: [thing.created]}
        data:
          $ref: '#/components/schemas/Thing'
"#;

/// Where `Thing` is reported: the data of both operations' success, of the event in
/// `get_thing`'s `last_event`, and of the webhook.
const THING_AT: [&str; 4] = [
    "#/operations/create_thing/responses/200/body/properties/data",
    "#/operations/get_thing/responses/200/body/properties/data",
    "#/operations/get_thing/responses/200/body/properties/last_event/oneOf/ThingEvent/properties/data",
    "#/x-webhooks/thing.created/body/properties/data",
];

const REQUEST_AT: &str = "#/operations/create_thing/request/body";

/// `BEFORE` with each `(from, to)` applied; `from` must occur exactly once.
#[track_caller]
fn edited(edits: &[(&str, &str)]) -> String {
    let mut text = BEFORE.to_string();
    for (from, to) in edits {
        assert_eq!(
            text.matches(from).count(),
            1,
            "the edit must match exactly once: {from:?}"
        );
        text = text.replace(from, to);
    }
    text
}

fn parse(text: &str) -> Value {
    spec::parse(text).expect("the fixture parses")
}

/// The breaks from `BEFORE` to `BEFORE` edited.
#[track_caller]
fn breaks(edits: &[(&str, &str)]) -> Vec<Break> {
    compare(&parse(BEFORE), &parse(&edited(edits)))
}

/// Each place a schema's change reaches, and the location of any other break.
fn places(found: &[Break]) -> Vec<&str> {
    found
        .iter()
        .flat_map(|b| {
            if b.reaches.is_empty() {
                vec![b.location.as_str()]
            } else {
                b.reaches.iter().map(String::as_str).collect()
            }
        })
        .collect()
}

#[track_caller]
fn assert_breaks(edits: &[(&str, &str)], expected: &[String]) {
    let found = breaks(edits);
    let mut locations = places(&found);
    let mut expected: Vec<&str> = expected.iter().map(String::as_str).collect();
    locations.sort_unstable();
    expected.sort_unstable();
    assert_eq!(
        locations,
        expected,
        "reported:\n{}",
        found.iter().map(|b| format!("  {b}\n")).collect::<String>()
    );
}

/// `suffix` below each place `Thing` is reported.
fn at_thing(suffix: &str) -> Vec<String> {
    THING_AT
        .iter()
        .map(|place| format!("{place}{suffix}"))
        .collect()
}

fn at_request(suffix: &str) -> Vec<String> {
    vec![format!("{REQUEST_AT}{suffix}")]
}

/// Asserts the edits make exactly one change, reported at `location` and reaching `reaches`
/// (in document order); returns it.
#[track_caller]
fn assert_change(edits: &[(&str, &str)], location: &str, reaches: &[String]) -> Break {
    let found = breaks(edits);
    assert_eq!(found.len(), 1, "one change: {found:#?}");
    assert_eq!(found[0].location, location, "{found:#?}");
    assert_eq!(found[0].reaches, reaches, "{found:#?}");
    found.into_iter().next().expect("one change")
}

/// The reason reported at `location` (or reaching it).
#[track_caller]
fn reason_at(found: &[Break], location: &str) -> String {
    found
        .iter()
        .find(|b| b.location == location || b.reaches.iter().any(|reach| reach == location))
        .unwrap_or_else(|| panic!("nothing reported at {location}: {found:?}"))
        .reason
        .clone()
}

// ---- Nothing changed ----------------------------------------------------------------------

#[test]
fn the_current_spec_compared_with_itself_reports_nothing() {
    let doc = spec::load(&spec::spec_path()).expect("spec/openapi.yaml loads");
    let found = compare(&doc, &doc);
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn the_released_readme_records_the_released_version() {
    let root = spec::workspace_root();
    let released = spec::load(&root.join(super::RELEASED)).expect("the released spec loads");
    let version = released
        .pointer("/info/version")
        .and_then(Value::as_str)
        .expect("the released spec has a version");
    let readme = std::fs::read_to_string(root.join("spec/released/README.md"))
        .expect("spec/released/README.md exists");
    assert!(
        readme.contains(&format!("**{version}**")),
        "spec/released/README.md must name the released version, {version}"
    );
}

#[test]
fn the_fixture_compared_with_itself_reports_nothing() {
    assert_breaks(&[], &[]);
}

#[test]
fn moving_a_schema_behind_a_ref_or_an_all_of_is_no_change() {
    // Inline instead of `$ref`, and `$ref` wrapped in `allOf`: the same schema.
    assert_breaks(
        &[
            (
                "        size:\n          $ref: '#/components/schemas/Size'",
                "        size:\n          type: string\n          enum: [small, large]",
            ),
            (
                "        state:\n          $ref: '#/components/schemas/ThingState'",
                "        state:\n          allOf:\n            - $ref: '#/components/schemas/ThingState'",
            ),
        ],
        &[],
    );
}

// ---- Operations ---------------------------------------------------------------------------

#[test]
fn a_removed_operation_breaks() {
    let found = breaks(&[("operationId: get_thing", "operationId: get_thing_gone")]);
    // The path now holds another operationId: that is a rename.
    assert!(reason_at(&found, "#/operations/get_thing").contains("renamed to `get_thing_gone`"));

    let removed = edited(&[(
        "  /api/v1/thing/web/get_thing:\n    post:",
        "  /unused:\n    x-gone:",
    )]);
    let found = compare(&parse(BEFORE), &parse(&removed));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].location, "#/operations/get_thing");
    assert!(found[0].reason.contains("is removed"), "{}", found[0]);
}

#[test]
fn a_moved_operation_breaks() {
    assert_breaks(
        &[(
            "/api/v1/thing/web/get_thing:",
            "/api/v1/thing/web/fetch_thing:",
        )],
        &["#/operations/get_thing/path".into()],
    );
}

// ---- Removed fields and enum values -------------------------------------------------------

#[test]
fn a_removed_request_field_breaks() {
    assert_breaks(
        &[(
            "        code:\n          type: string\n          pattern: '^[0-9]{4}$'\n",
            "",
        )],
        &at_request("/properties/code"),
    );
}

/// `Thing` without `created_at` (its property and its `required` entry).
const WITHOUT_CREATED_AT: [(&str, &str); 2] = [
    ("required: [id, state, created_at]", "required: [id, state]"),
    (
        "        created_at: {type: string, format: date-time}\n",
        "",
    ),
];

#[test]
fn a_removed_response_field_breaks() {
    // Reported once, as removed (not also as no longer required), at `Thing`, with the four
    // places that reach `Thing` beneath it.
    let found = assert_change(
        &WITHOUT_CREATED_AT,
        "#/components/schemas/Thing/properties/created_at",
        &at_thing("/properties/created_at"),
    );
    assert_eq!(
        found.reason,
        "the response field is removed: clients that read it break"
    );
    let printed = found.to_string();
    assert_eq!(printed.lines().count(), 5, "{printed}");
    assert!(printed.contains(
        "\n    reaches #/x-webhooks/thing.created/body/properties/data/properties/created_at"
    ));
}

#[test]
fn a_removed_request_enum_value_breaks() {
    assert_breaks(
        &[("enum: [small, large]", "enum: [small]")],
        &at_request("/properties/size/enum/large"),
    );
}

#[test]
fn a_removed_response_enum_value_breaks() {
    assert_breaks(
        &[("enum: [active, archived]", "enum: [active]")],
        &at_thing("/properties/state/enum/archived"),
    );
}

// ---- Required -----------------------------------------------------------------------------

#[test]
fn a_request_field_that_becomes_required_breaks() {
    assert_breaks(
        &[("required: [name]", "required: [name, count]")],
        &at_request("/required/count"),
    );
}

#[test]
fn an_inline_schema_is_located_by_its_path() {
    // A schema written in the operation, not in a component: its JSON pointer goes through
    // `paths`.
    assert_change(
        &[(
            "              type: object\n              required: [id]",
            "              type: object\n              required: [id, at]",
        )],
        "#/paths/~1api~1v1~1thing~1web~1get_thing/post/requestBody/content/application~1json/schema/required/at",
        &["#/operations/get_thing/request/body/required/at".into()],
    );
}

#[test]
fn a_new_required_request_field_breaks() {
    let found = breaks(&[
        ("required: [name]", "required: [name, owner]"),
        (
            "        code:\n          type: string\n",
            "        owner:\n          type: string\n        code:\n          type: string\n",
        ),
    ]);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(
        found[0].location,
        "#/components/schemas/CreateThingRequest/required/owner"
    );
    assert_eq!(found[0].reaches, at_request("/required/owner"));
    assert!(found[0].reason.contains("new required request field"));
}

#[test]
fn a_response_field_that_becomes_optional_breaks() {
    assert_breaks(
        &[(
            "required: [id, state, created_at]",
            "required: [id, created_at]",
        )],
        &at_thing("/required/state"),
    );
}

// ---- Type, format and narrowing -----------------------------------------------------------

#[test]
fn a_changed_type_breaks() {
    assert_breaks(
        &[(
            "        count:\n          type: integer",
            "        count:\n          type: string",
        )],
        &at_request("/properties/count/type"),
    );
    // Both directions: a response field too (type and format).
    assert_breaks(
        &[(
            "id: {type: string, format: uuid}\n        state:",
            "id: {type: integer}\n        state:",
        )],
        &[
            at_thing("/properties/id/type"),
            at_thing("/properties/id/format"),
        ]
        .concat(),
    );
}

#[test]
fn a_changed_format_breaks() {
    assert_breaks(
        &[(
            "created_at: {type: string, format: date-time}",
            "created_at: {type: string, format: date}",
        )],
        &at_thing("/properties/created_at/format"),
    );
    // A request field that gains a format is narrowed.
    assert_breaks(
        &[(
            "        note:\n          type: string\n",
            "        note:\n          type: string\n          format: email\n",
        )],
        &at_request("/properties/note/format"),
    );
}

#[test]
fn widening_a_request_integer_to_number_passes() {
    assert_breaks(
        &[(
            "        count:\n          type: integer",
            "        count:\n          type: number",
        )],
        &[],
    );
}

#[test]
fn narrowing_a_request_field_breaks() {
    let cases: &[(&str, &str, &str)] = &[
        // A pattern added, a pattern changed.
        (
            "        note:\n          type: string\n",
            "        note:\n          type: string\n          pattern: '^[a-z]*$'\n",
            "/properties/note/pattern",
        ),
        (
            "pattern: '^[0-9]{4}$'",
            "pattern: '^[0-9]{6}$'",
            "/properties/code/pattern",
        ),
        // maxLength / maximum lowered, minLength / minimum raised, maxItems lowered.
        (
            "maxLength: 100",
            "maxLength: 50",
            "/properties/name/maxLength",
        ),
        ("maximum: 100", "maximum: 50", "/properties/count/maximum"),
        ("minLength: 1", "minLength: 2", "/properties/name/minLength"),
        ("minimum: 1", "minimum: 5", "/properties/count/minimum"),
        ("maxItems: 10", "maxItems: 5", "/properties/labels/maxItems"),
        // A bound where there was none.
        (
            "        code:\n          type: string\n",
            "        code:\n          type: string\n          maxLength: 4\n",
            "/properties/code/maxLength",
        ),
        (
            "          maxItems: 10\n",
            "          maxItems: 10\n          minItems: 1\n",
            "/properties/labels/minItems",
        ),
        (
            "          maximum: 100\n",
            "          maximum: 100\n          exclusiveMaximum: true\n",
            "/properties/count/exclusiveMaximum",
        ),
        // Values the request accepted before, now refused.
        (
            "        note:\n          type: string\n",
            "        note:\n          type: string\n          enum: [a, b]\n",
            "/properties/note/enum",
        ),
    ];
    for (from, to, location) in cases {
        assert_breaks(&[(from, to)], &at_request(location));
    }
}

#[test]
fn widening_a_request_field_passes() {
    assert_breaks(
        &[
            ("maxLength: 100", "maxLength: 200"),
            ("minimum: 1", "minimum: 0"),
            ("maxItems: 10", "maxItems: 20"),
            ("          pattern: '^[0-9]{4}$'\n", ""),
        ],
        &[],
    );
}

#[test]
fn a_request_object_that_becomes_closed_breaks() {
    assert_breaks(
        &[(
            "              type: object\n              required: [id]",
            "              type: object\n              additionalProperties: false\n              required: [id]",
        )],
        &["#/operations/get_thing/request/body/additionalProperties".into()],
    );
}

#[test]
fn a_request_field_that_is_no_longer_nullable_breaks() {
    assert_breaks(
        &[(
            "          type: string\n          nullable: true\n",
            "          type: string\n",
        )],
        &at_request("/properties/note/nullable"),
    );
}

#[test]
fn a_response_field_that_becomes_nullable_breaks() {
    assert_breaks(
        &[(
            "id: {type: string, format: uuid}\n        state:",
            "id: {type: string, format: uuid, nullable: true}\n        state:",
        )],
        &at_thing("/properties/id/nullable"),
    );
}

// ---- Parameters and headers ---------------------------------------------------------------

#[test]
fn request_parameters_are_request_fields() {
    let parameter = "#/operations/create_thing/request/parameters/header/Idempotency-Key";
    assert_breaks(
        &[(
            "      required: false\n      schema:",
            "      required: true\n      schema:",
        )],
        &[format!("{parameter}/required")],
    );
    assert_breaks(
        &[("maxLength: 255", "maxLength: 64")],
        &[format!("{parameter}/schema/maxLength")],
    );
    assert_breaks(
        &[(
            "        - $ref: '#/components/parameters/IdempotencyKey'\n",
            "",
        )],
        &[parameter.to_string()],
    );
}

#[test]
fn a_removed_response_header_breaks() {
    assert_breaks(
        &[(
            "      headers:\n        X-Request-Id:\n          $ref: '#/components/headers/XRequestId'\n",
            "",
        )],
        &["#/operations/create_thing/responses/200/headers/X-Request-Id".into()],
    );
}

// ---- Response codes -----------------------------------------------------------------------

#[test]
fn a_response_code_whose_http_status_changes_breaks() {
    assert_breaks(
        &[(
            "name: thing_not_found, http_status: 404",
            "name: thing_not_found, http_status: 400",
        )],
        &["#/x-response-codes/44/http_status".into()],
    );
}

#[test]
fn a_response_code_removed_from_the_catalog_breaks() {
    assert_breaks(
        &[(
            "  '44': {name: thing_not_found, http_status: 404, meaning: No such thing, origin: extension}\n",
            "",
        )],
        &["#/x-response-codes/44".into()],
    );
}

// ---- Enum growth --------------------------------------------------------------------------

#[test]
fn a_closed_response_enum_that_gains_a_value_breaks() {
    // One change, at the enum's own schema, whatever reaches it.
    let found = assert_change(
        &[("enum: [active, archived]", "enum: [active, archived, lost]")],
        "#/components/schemas/ThingState/enum/lost",
        &at_thing("/properties/state/enum/lost"),
    );
    assert!(found.reason.contains("closed response enum gains `lost`"));
}

#[test]
fn a_keyword_is_located_where_it_is_written() {
    // `GetThingResponse.data` wraps `Thing` in `allOf`, `Thing.parent` too: a change inside
    // `Thing` is at `Thing`. A wrapper's own keyword is at the wrapper.
    assert_change(
        &[(
            "id: {type: string, format: uuid}\n        state:",
            "id: {type: string, format: uuid, nullable: true}\n        state:",
        )],
        "#/components/schemas/Thing/properties/id/nullable",
        &at_thing("/properties/id/nullable"),
    );
    assert_change(
        &[(
            "            - $ref: '#/components/schemas/Thing'\n          description: The thing.",
            "            - $ref: '#/components/schemas/Thing'\n          description: The thing.\n          nullable: true",
        )],
        "#/components/schemas/GetThingResponse/properties/data/nullable",
        &["#/operations/get_thing/responses/200/body/properties/data/nullable".into()],
    );
}

#[test]
fn an_open_response_enum_may_gain_values() {
    assert_breaks(
        &[
            // `x-extensible-enum: true`.
            ("enum: [red, green]", "enum: [red, green, blue]"),
            // A description that says clients must accept values added later.
            ("enum: [web, api]", "enum: [web, api, batch]"),
        ],
        &[],
    );
}

#[test]
fn openness_is_read_from_the_released_spec() {
    // Marking an enum open and growing it in the same release still breaks the clients that
    // were told it was closed.
    assert_breaks(
        &[(
            "      enum: [active, archived]",
            "      x-extensible-enum: true\n      enum: [active, archived, lost]",
        )],
        &at_thing("/properties/state/enum/lost"),
    );
}

#[test]
fn a_closed_response_union_that_gains_a_variant_breaks() {
    assert_breaks(
        &[(
            "            - $ref: '#/components/schemas/ThingEvent'\n",
            "            - $ref: '#/components/schemas/ThingEvent'\n            - $ref: '#/components/schemas/Thing'\n",
        )],
        &["#/operations/get_thing/responses/200/body/properties/last_event/oneOf/Thing".into()],
    );
}

// ---- Additive changes ---------------------------------------------------------------------

#[test]
fn additive_changes_pass() {
    assert_breaks(
        &[
            // A new operation.
            (
                "components:\n  parameters:",
                "  /api/v1/thing/web/delete_thing:\n    post:\n      operationId: delete_thing\n      responses:\n        '200':\n          description: Gone.\ncomponents:\n  parameters:",
            ),
            // A new optional request field.
            (
                "        code:\n          type: string\n",
                "        colour:\n          type: string\n        code:\n          type: string\n",
            ),
            // A new response field, required or not.
            ("required: [id, state, created_at]", "required: [id, state, created_at, label]"),
            (
                "        created_at: {type: string, format: date-time}\n",
                "        created_at: {type: string, format: date-time}\n        label: {type: string}\n        size: {type: integer}\n",
            ),
            // A new value in a request-only enum.
            ("enum: [small, large]", "enum: [small, medium, large]"),
            // A new response code, in the catalog and in the enum of codes.
            (
                "x-webhooks:",
                "  '45': {name: thing_locked, http_status: 409, meaning: Locked, origin: extension}\nx-webhooks:",
            ),
            ("enum: ['01', '44']", "enum: ['01', '44', '45']"),
            // A new response status.
            (
                "        '400':\n          $ref: '#/components/responses/BadRequest'\n",
                "        '400':\n          $ref: '#/components/responses/BadRequest'\n        '409':\n          $ref: '#/components/responses/BadRequest'\n",
            ),
            // A request constraint dropped; a request field no longer required.
            ("required: [name]", "required: []"),
        ],
        &[],
    );
}

#[test]
fn a_recursive_schema_is_compared_once() {
    // `Thing.parent` is a `Thing`: the change is reported where `Thing` is first reached, not
    // again below `parent` (and the comparison terminates).
    assert_breaks(
        &[("enum: [active, archived]", "enum: [active]")],
        &at_thing("/properties/state/enum/archived"),
    );
}

#[test]
fn a_removed_webhook_breaks() {
    assert_breaks(
        &[("  thing.created:\n    post:", "  thing.made:\n    post:")],
        &["#/x-webhooks/thing.created".into()],
    );
}

// ---- The changelog ------------------------------------------------------------------------

/// Two breaks: a removed request field and a removed response enum value, in version `version`.
fn two_breaks(version: &str) -> (Value, Value) {
    let after = edited(&[
        ("version: 1.0.0", &format!("version: {version}")),
        ("enum: [small, large]", "enum: [small]"),
        ("enum: [active, archived]", "enum: [active]"),
    ]);
    (parse(BEFORE), parse(&after))
}

const SIZE_LARGE: &str = "#/operations/create_thing/request/body/properties/size/enum/large";

const CHANGELOG: &str = "\
# Changelog

## 2.0.0 (2027-01-15)

Sizes are one size now.

- `#/operations/create_thing/request/body/properties/size/enum/large`: retired.
- `#/operations/create_thing/request/body/properties/typo`: not a break at all.

## 1.0.0

- `#/operations/get_thing/responses/200/body/properties/data/properties/state/enum/archived`
";

fn run_judge(version: &str, changelog: Option<&str>) -> changelog::Verdict {
    let (before, after) = two_breaks(version);
    let found = compare(&before, &after);
    // The size (reaching one place) and the state (reaching the four of `Thing`).
    assert_eq!(found.len(), 2, "{found:#?}");
    judge(found, Some("1.0.0"), Some(version), changelog)
}

#[test]
fn the_changelog_of_a_major_release_accepts_the_breaks_it_lists() {
    let verdict = run_judge("2.0.0", Some(CHANGELOG));
    let accepted: Vec<&str> = verdict
        .accepted
        .iter()
        .map(|b| b.location.as_str())
        .collect();
    // Listed by the one place it reaches, as the gate printed it before it reported a schema's
    // change once.
    assert_eq!(accepted, ["#/components/schemas/Size/enum/large"]);
    assert_eq!(verdict.accepted[0].reaches, [SIZE_LARGE]);
    // The state break is listed under 1.0.0, not 2.0.0: still refused.
    assert_eq!(verdict.refused.len(), 1, "{:#?}", verdict.refused);
    assert_eq!(
        verdict.refused[0].location,
        "#/components/schemas/ThingState/enum/archived"
    );
    assert_eq!(
        verdict.unmatched,
        ["#/operations/create_thing/request/body/properties/typo"]
    );
}

#[test]
fn the_changelog_accepts_nothing_without_a_major_bump() {
    for version in ["1.0.0", "1.1.0"] {
        let verdict = run_judge(version, Some(&CHANGELOG.replace("2.0.0", version)));
        assert!(verdict.accepted.is_empty(), "{version}");
        assert_eq!(verdict.refused.len(), 2);
        assert_eq!(verdict.notes.len(), 1);
        assert!(
            verdict.notes[0].contains("major"),
            "{version}: {:?}",
            verdict.notes
        );
    }
}

#[test]
fn the_changelog_needs_a_section_for_the_new_version() {
    let verdict = run_judge("3.0.0", Some(CHANGELOG));
    assert!(verdict.accepted.is_empty());
    assert!(verdict.notes[0].contains("no `## 3.0.0` section"));
    let verdict = run_judge("2.0.0", None);
    assert!(verdict.accepted.is_empty());
    assert!(verdict.notes[0].contains("does not exist"));
}

#[test]
fn a_changelog_section_lists_backticked_locations_only() {
    let listed = changelog::listed(CHANGELOG, "2.0.0").expect("the section exists");
    assert_eq!(
        listed.into_iter().collect::<Vec<_>>(),
        [
            "#/operations/create_thing/request/body/properties/size/enum/large",
            "#/operations/create_thing/request/body/properties/typo",
        ]
    );
    assert!(
        changelog::listed("## [2.0.0]\n- `#/x-response-codes/44`\n", "2.0.0")
            .is_some_and(|listed| listed.contains("#/x-response-codes/44"))
    );
    assert!(changelog::listed(CHANGELOG, "9.9.9").is_none());
}

/// The changelog of 2.0.0 accepting `listed`, and the verdict on `Thing` losing `created_at`.
fn judge_created_at(listed: &[String]) -> changelog::Verdict {
    let after = edited(&[
        ("version: 1.0.0", "version: 2.0.0"),
        WITHOUT_CREATED_AT[0],
        WITHOUT_CREATED_AT[1],
    ]);
    let found = compare(&parse(BEFORE), &parse(&after));
    let section: String = listed.iter().map(|line| format!("- `{line}`\n")).collect();
    let changelog = format!("## 2.0.0\n\n{section}");
    judge(found, Some("1.0.0"), Some("2.0.0"), Some(&changelog))
}

#[test]
fn one_changelog_line_accepts_a_change_everywhere_it_reaches() {
    let verdict = judge_created_at(&["#/components/schemas/Thing/properties/created_at".into()]);
    assert!(verdict.refused.is_empty(), "{:#?}", verdict.refused);
    assert_eq!(verdict.accepted.len(), 1);
    assert_eq!(
        verdict.accepted[0].reaches,
        at_thing("/properties/created_at")
    );
    assert!(verdict.unmatched.is_empty(), "{:?}", verdict.unmatched);
    assert!(verdict.notes.is_empty(), "{:?}", verdict.notes);
}

#[test]
fn listing_every_place_a_change_reaches_still_accepts_it() {
    // The changelogs written when the gate reported each place separately.
    let verdict = judge_created_at(&at_thing("/properties/created_at"));
    assert!(verdict.refused.is_empty(), "{:#?}", verdict.refused);
    assert_eq!(verdict.accepted.len(), 1);
    assert!(verdict.unmatched.is_empty(), "{:?}", verdict.unmatched);

    // Some of them only: refused, with a note that says what to list (and not as a typo).
    let verdict = judge_created_at(&at_thing("/properties/created_at")[..3]);
    assert!(verdict.accepted.is_empty());
    assert_eq!(verdict.refused.len(), 1);
    assert!(verdict.unmatched.is_empty(), "{:?}", verdict.unmatched);
    assert_eq!(verdict.notes.len(), 1, "{:?}", verdict.notes);
    assert!(
        verdict.notes[0]
            .contains("not all: list `#/components/schemas/Thing/properties/created_at`"),
        "{:?}",
        verdict.notes
    );
}
