"""The published JSON Schemas of resumecheck's JSON documents.

Every JSON document resumecheck writes names its kind and version in its
``schema`` field (``resumecheck.report/1``, ``resumecheck.fuzz/1``,
``resumecheck.baseline/1``, ``resumecheck.timing/1``,
``resumecheck.session/1``); the package ships one JSON Schema (draft
2020-12) per kind and version in ``resumecheck/schemas/``, named
``KIND-VERSION.json``. A new field or verdict means a schema change: the
schemas are strict (no unknown properties), so a document with a field they
do not know fails validation.

``schema_for(name)`` returns one as a dict; ``validate(document)`` checks a
document against the schema its ``schema`` field names. Validation needs
the ``jsonschema`` package (``pip install jsonschema``; the test extra has
it); reading the schemas needs nothing.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from resumecheck.errors import InvalidArgument, MissingExtra, ReportSchemaError

__all__ = ["SCHEMAS", "schema_for", "validate"]

SCHEMAS: dict[str, str] = {
    "resumecheck.report/1": "report-1.json",
    "resumecheck.fuzz/1": "fuzz-1.json",
    "resumecheck.baseline/1": "baseline-1.json",
    "resumecheck.timing/1": "timing-1.json",
    "resumecheck.session/1": "session-1.json",
    "resumecheck.error/1": "error-1.json",
}
"""Each document kind and version, and the file of its schema."""


def schema_for(name: str) -> dict[str, Any]:
    """The JSON Schema of documents whose ``schema`` field is ``name``."""
    if name not in SCHEMAS:
        raise InvalidArgument("schema", name, f"known: {', '.join(sorted(SCHEMAS))}")
    return json.loads(_text(SCHEMAS[name]))


@lru_cache(maxsize=None)
def _text(filename: str) -> str:
    return resources.files("resumecheck").joinpath("schemas").joinpath(filename).read_text()


def validate(document: Any) -> None:
    """Raise ``ReportSchemaError`` unless ``document`` (parsed JSON) is valid
    under the published schema that its ``schema`` field names."""
    name = document.get("schema") if isinstance(document, dict) else None
    if name not in SCHEMAS:
        raise ReportSchemaError(
            str(name), "$.schema", f"expected one of {', '.join(sorted(SCHEMAS))}"
        )
    errors = sorted(_validator(name).iter_errors(document), key=lambda e: list(e.absolute_path))
    if errors:
        error = errors[0]
        path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        raise ReportSchemaError(name, path, error.message, more=len(errors) - 1)


@lru_cache(maxsize=None)
def _validator(name: str) -> Any:
    try:
        import jsonschema
        from referencing import Registry, Resource
    except ImportError:
        # (a trial: "the document does not match the published schema", where
        # only the package was missing and the document was never checked)
        raise MissingExtra("checking a document against its schema", "jsonschema",
                           "test") from None
    registry: Any = Registry()
    for other in SCHEMAS:
        schema = schema_for(other)
        registry = registry.with_resource(schema["$id"], Resource.from_contents(schema))
    schema = schema_for(name)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, registry=registry)
