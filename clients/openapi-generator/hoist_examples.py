"""Writes a copy of an OpenAPI document (as JSON) in which every inline response example is moved
to components/examples and referenced from where it was: the same document for every tool, since
a `$ref`'d example is the same example.

Why: openapi-generator 7.26.0 prints "Failed to get the schema name: null" once when it meets an
inline response example (DefaultCodegen.fromResponse -> ExamplesUtils.unaliasExamples calls
ModelUtils.getSimpleRef on the example's `$ref`, null for an inline one). .ci/clients accepts that
line from `generate -g typescript-fetch` on spec/openapi.yaml only if the same generation over
this copy prints no warning at all, which proves the inline examples are its only cause.

    python hoist_examples.py spec/openapi.yaml out.json   # prints how many examples it moved
"""

import json
import sys

from ruamel.yaml import YAML


def main(source: str, target: str) -> int:
    with open(source, encoding="utf-8") as file:
        doc = YAML(typ="safe").load(file)
    components = doc.setdefault("components", {}).setdefault("examples", {})
    moved = 0

    def hoist(response: dict, where: str) -> None:
        nonlocal moved
        if not isinstance(response, dict) or "$ref" in response:
            return
        for media, content in (response.get("content") or {}).items():
            for name, example in list((content.get("examples") or {}).items()):
                if isinstance(example, dict) and "$ref" not in example:
                    key = f"hoisted_{where}_{media}_{name}".replace("/", "_")
                    components[key] = example
                    content["examples"][name] = {"$ref": f"#/components/examples/{key}"}
                    moved += 1

    for path, item in (doc.get("paths") or {}).items():
        for method, operation in item.items():
            if isinstance(operation, dict):
                for status, response in (operation.get("responses") or {}).items():
                    hoist(response, f"{operation.get('operationId', path)}_{method}_{status}")
    for name, response in list((doc["components"].get("responses") or {}).items()):
        hoist(response, f"response_{name}")
    with open(target, "w", encoding="utf-8") as file:
        json.dump(doc, file)
    print(moved)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
