"""The published JSON Schemas, and the suite-wide check that every report matches them."""

from __future__ import annotations

import json
from dataclasses import replace

import jsonschema
import pytest

import fixtures.bugs.class18_global_step as c18
from resumecheck.cli import main
from resumecheck.engine import verify
from resumecheck.errors import ReportSchemaError
from resumecheck.report import Report
from resumecheck.schema import SCHEMAS, schema_for, validate
from tests.conftest import VALIDATED


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_each_published_schema_is_valid_and_names_its_version(name):
    schema = schema_for(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["schema"] == {"const": name}
    assert schema["additionalProperties"] is False  # strict: unknown fields fail


def test_unknown_schema_name_is_refused():
    with pytest.raises(ReportSchemaError, match=r"\$\.schema"):
        validate({"schema": "resumecheck.report/99"})


@pytest.fixture(scope="module")
def report():
    return verify(c18.BUGGY, drop=["global_step"], noise_seeds=1)


def test_a_real_report_validates_and_the_suite_checked_it_when_built(report):
    before = VALIDATED["resumecheck.report/1"]
    doc = json.loads(report.render("json"))
    validate(doc)
    assert VALIDATED["resumecheck.report/1"] > before  # render() went through the check
    assert doc["runs"][0]["trajectory"]["differs"]


def test_a_field_the_schema_does_not_know_fails_naming_it(report):
    doc = report.to_json()
    doc["runs"][1]["rng_offset"] = 3
    with pytest.raises(ReportSchemaError, match=r"\$\.runs\[1\].*'rng_offset' was unexpected"):
        validate(doc)
    doc = report.to_json()
    doc["runs"][0]["verdict"] = "maybe"
    with pytest.raises(ReportSchemaError, match=r"\$\.runs\[0\]\.verdict"):
        validate(doc)


def test_the_suite_wide_check_catches_a_bad_report_where_it_is_built(report):
    # tests/conftest.py validates every Report as it is constructed
    bad_run = replace(report.runs[0], verdict="maybe")  # type: ignore[arg-type]
    with pytest.raises(ReportSchemaError, match="verdict"):
        Report(**{**{f: getattr(report, f) for f in report.__dataclass_fields__},
                  "runs": [bad_run]})


def test_infinities_are_strings_and_valid(report):
    run = replace(report.runs[1], noise_ratio=float("inf"))
    doc = run.to_json()
    assert doc["noise_ratio"] == "inf"
    full = report.to_json()
    full["runs"][1] = doc
    validate(full)


@pytest.mark.parametrize("command", [
    ["baseline", "--steps", "3"],
    ["timing", "--steps", "3", "--warmup", "1"],
])
def test_other_cli_documents_validate(command, capsys):
    assert main([*command, "--format", "json"]) == 0
    validate(json.loads(capsys.readouterr().out))


@pytest.mark.e2e
def test_the_plugin_session_file_validates(torch_dynamo_imported, pytester):
    pytester.makepyfile(test_one='''
def test_resume(resumecheck):
    resumecheck.assert_resume_equivalent("fixtures.bugs.class18_global_step:CORRECT")
''')
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--resumecheck-noise-seeds=0",
                                          "--resumecheck-report=checks.json")
    result.assert_outcomes(passed=1)
    doc = json.loads((pytester.path / "checks.json").read_text())
    validate(doc)
    assert doc["checks"][0]["report"]["equivalent"] is True


def test_validating_without_jsonschema_says_the_package_is_missing(monkeypatch):
    """A trial: without jsonschema, validation said "the document does not
    match the published schema", and the document had never been checked."""
    import sys

    from resumecheck import schema
    from resumecheck.errors import MissingExtra

    schema._validator.cache_clear()
    monkeypatch.setitem(sys.modules, "jsonschema", None)  # (an import of it fails)
    try:
        with pytest.raises(MissingExtra) as info:
            validate({"schema": "resumecheck.report/1"})  # (never looked at: no validator)
    finally:
        schema._validator.cache_clear()
    assert "needs jsonschema, which is not installed" in str(info.value)
    assert "does not match" not in str(info.value)
