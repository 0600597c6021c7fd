"""How many times openapi-generator's python generator must print "Codegen property is null (e.g.
map/dict of undefined type)" for spec/openapi.yaml: once per place a closed empty object is used.

openapi-generator 7.26.0 takes an object with no properties for a free-form dict even when it
says `additionalProperties: false` (ModelUtils.isFreeFormObject reads a `false` as absent), and its
python generator then warns that the dict has no value type. Kobo has two such objects on
purpose: EmptyObject (the body of the operations without parameters, the `data` of four success
envelopes) and ErrorEnvelope.data (always null). .ci/clients accepts exactly this many of that
warning, so one more free-form object anywhere still fails the run.

    python closed_empty_objects.py spec/openapi.yaml   # prints the count; the places on stderr
"""
import sys
from ruamel.yaml import YAML
doc = YAML(typ="safe").load(open(sys.argv[1]))
def resolve(node, depth=0):
    while isinstance(node, dict) and "$ref" in node and depth < 20:
        target = doc
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node, depth = target, depth + 1
    return node
def closed_empty(schema):
    s = resolve(schema)
    return (isinstance(s, dict) and s.get("type") == "object" and not s.get("properties")
            and not s.get("allOf") and not isinstance(s.get("additionalProperties"), dict)
            and s.get("additionalProperties") is not True)
sites = []
for path, item in doc.get("paths", {}).items():
    for method, op in item.items():
        body = resolve(op.get("requestBody", {})) if isinstance(op, dict) else {}
        schema = body.get("content", {}).get("application/json", {}).get("schema") if body else None
        if schema is not None and closed_empty(schema):
            sites.append(f"{op.get('operationId')} request body")
def walk(name, schema):
    for prop, sub in (schema.get("properties") or {}).items():
        if closed_empty(sub):
            sites.append(f"{name}.{prop}")
        elif isinstance(sub, dict) and "$ref" not in sub:
            walk(f"{name}.{prop}", sub)
for name, schema in doc["components"]["schemas"].items():
    walk(name, schema)
print(len(sites))
print("\n".join(sites), file=sys.stderr)
