"""Reports: the verdict of every run, as data, JSON, a table or Markdown.

The JSON form is versioned (``schema``) and documented in docs/REPORT.md.
Other tools rely on at least: ``schema``, ``equivalent``, ``environment`` and
``runs``; each run has ``dropped``, ``resume_at``, ``verdict``,
``first_divergent_step``, ``plausible`` and ``explanation``.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from resumecheck.trajectory import Trajectory

__all__ = [
    "CLOSE",
    "DIVERGED",
    "FAILED",
    "IDENTICAL",
    "SCHEMA",
    "Finding",
    "Report",
    "RunResult",
    "StreamOffset",
]

SCHEMA = "resumecheck.report/1"

Verdict = Literal["identical", "close", "diverged", "failed"]
IDENTICAL: Literal["identical"] = "identical"
CLOSE: Literal["close"] = "close"
DIVERGED: Literal["diverged"] = "diverged"
FAILED: Literal["failed"] = "failed"


@dataclass(frozen=True, slots=True)
class Finding:
    """One piece of evidence: which component, and what is wrong with it."""

    component: str
    detail: str
    step: int | None = None
    """The resume point after which the restored state differed."""
    confirmed: bool | None = None
    """A run with only this component from the program's checkpoint diverged too
    (None: not tried, e.g. for the engine's own checkpoint)."""
    matters_from: int | None = None
    """For a latent gap: the step from which it would change the run, when known."""


@dataclass(frozen=True, slots=True)
class StreamOffset:
    """A random stream that differs from the reference's at the start of a step
    right after a restore, and by how many draws it is ahead or behind."""

    stream: str
    """``torch``, ``python``, ``numpy``, ``cuda``, or ``generator NAME`` (a registered one)."""
    step: int
    """The step at whose start the stream differs."""
    draws: int | None
    """Ahead (> 0) or behind (< 0) by this many ``unit``; None: not within the search."""
    unit: str
    """One ``draws`` is one int64 draw, as a DataLoader draws its base seed;
    ``32-bit words`` of the Mersenne Twister for Python random and numpy."""
    detail: str = ""
    """The finding in words, with the usual cause."""


@dataclass(kw_only=True)
class RunResult:
    """One resumed run compared with the reference."""

    dropped: list[str]
    """Components the restart did not restore (empty: the full resume)."""
    resume_at: list[int]
    """Steps after which the run was checkpointed and restarted."""
    verdict: Verdict
    checkpoint: Literal["engine", "program"] = "engine"
    """Whose checkpoint the restart used: the engine's capture or the program's save/load."""
    first_divergent_step: int | None = None
    first_divergent_quantity: str | None = None
    max_abs_loss_diff: float | None = None
    max_abs_diff: float | None = None
    max_rel_diff: float | None = None
    max_ulp_diff: float | None = None
    plausible: bool | None = None
    """Diverged, but the loss stays within seed-to-seed noise (True) or leaves it (False)."""
    noise_ratio: float | None = None
    """Largest |Δloss| divided by the seed-to-seed spread at that step."""
    blind_spot: bool = False
    """Something was dropped and nothing changed: this program does not exercise it here."""
    explanation: str = ""
    failure: str | None = None
    diagnosis: list[Finding] = field(default_factory=list)
    """Components whose restored state differs from the reference's at the resume point."""
    latent_gaps: list[str] = field(default_factory=list)
    """Components restored wrongly that the continuation never used (a warning)."""
    reproduce: str = ""
    stream_offsets: list[StreamOffset] = field(default_factory=list)
    """Random streams that differ at the start of the first steps after a restore."""
    divergence_detail: str | None = None
    """The first divergent quantity in words, when a count says more than a
    magnitude ("3 of 16 samples differ, first at position 5: 17 vs 42 in the reference")."""
    trajectory: Trajectory | None = None
    """The run step by step: its loss and where each kind of quantity differs
    from the reference (None: the run failed before it was compared)."""

    @property
    def label(self) -> str:
        if self.dropped:
            return "drop " + ",".join(self.dropped)
        return "full resume (own save/load)" if self.checkpoint == "program" else "full resume"

    @property
    def noise_label(self) -> str:
        if self.verdict == FAILED:
            return "-"
        if self.blind_spot:
            return "blind spot"
        if self.plausible is None:
            return "-"
        return "plausible" if self.plausible else "gross"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["diagnosis"] = [asdict(f) for f in self.diagnosis]
        data["stream_offsets"] = [asdict(s) for s in self.stream_offsets]
        data["trajectory"] = self.trajectory.to_json() if self.trajectory else None
        return _finite(data)


@dataclass(kw_only=True)
class Report:
    """Everything one check found, with what is needed to reproduce it."""

    target: str
    steps: int
    resume_at: list[int]
    seed: int
    isolation: str
    tolerance: dict[str, Any]
    environment: dict[str, Any]
    runs: list[RunResult]
    noise: dict[str, Any] = field(default_factory=dict)
    """Seed-to-seed loss spread: the seeds used and the band per step."""
    determinism: dict[str, Any] = field(default_factory=dict)
    """Whether a second uninterrupted run matched the reference bit for bit."""
    reference_loss: list[float] = field(default_factory=list)
    """The reference's loss at steps 1..N."""
    seed_losses: list[list[float]] = field(default_factory=list)
    """The loss at steps 1..N of each run with another seed (``noise["seeds"]``)."""
    schema: str = SCHEMA

    @property
    def full_resume(self) -> RunResult | None:
        return next((r for r in self.runs if not r.dropped), None)

    @property
    def equivalent(self) -> bool:
        """The full-state resume continues like the reference, under the tolerance."""
        full = self.full_resume
        if full is None:
            return False
        allowed = {IDENTICAL} if self.tolerance.get("mode") == "bitwise" else {IDENTICAL, CLOSE}
        return full.verdict in allowed

    @property
    def blind_spots(self) -> list[RunResult]:
        return [r for r in self.runs if r.blind_spot]

    def to_json(self) -> dict[str, Any]:
        return _finite({
            "schema": self.schema,
            "equivalent": self.equivalent,
            "target": self.target,
            "steps": self.steps,
            "resume_at": self.resume_at,
            "seed": self.seed,
            "isolation": self.isolation,
            "tolerance": self.tolerance,
            "environment": self.environment,
            "noise": self.noise,
            "determinism": self.determinism,
            "reference_loss": list(self.reference_loss),
            "seed_losses": [list(losses) for losses in self.seed_losses],
            "runs": [r.to_json() for r in self.runs],
        })

    def render(self, fmt: Literal["table", "json", "markdown"] = "table") -> str:
        if fmt == "json":
            return json.dumps(self.to_json(), indent=2)
        if fmt == "markdown":
            return self._markdown()
        return self._table()

    def _rows(self) -> list[list[str]]:
        rows = []
        for r in self.runs:
            where = "-"
            if r.first_divergent_step is not None:
                # a failed run has a step (where it failed) but no quantity
                what = r.first_divergent_quantity or ("(failed)" if r.verdict == FAILED else "")
                where = f"{r.first_divergent_step} {what}".rstrip()
            rows.append([
                r.label, r.verdict, where,
                _num(r.max_abs_loss_diff), r.noise_label, r.explanation,
            ])
        return rows

    _HEADER = ["run", "verdict", "first divergence", "max |Δloss|", "noise", "why"]

    def _headline(self) -> str:
        env = self.environment
        verdict = "EQUIVALENT" if self.equivalent else "NOT EQUIVALENT"
        return (
            f"resumecheck: {self.target}, {self.steps} steps, resume at "
            f"{','.join(map(str, self.resume_at))}, seed {self.seed}, {self.isolation} "
            f"restarts, {self.tolerance_text}; torch {env.get('torch')}, "
            f"{env.get('threads')} thread(s), {env.get('device')}\n"
            f"full resume: {verdict}"
        )

    @property
    def tolerance_text(self) -> str:
        t = self.tolerance
        if t.get("mode") == "bitwise":
            return "bitwise"
        if t.get("rtol") is None:
            return "within torch.testing tolerances"
        return f"within rtol={t['rtol']:g} atol={t['atol']:g}"

    def _footer(self) -> list[str]:
        lines = []
        full = self.full_resume
        if full is not None:
            for f in full.diagnosis:
                lines.append(f"diagnosis: {f.component}: {f.detail}")
            if full.divergence_detail:
                lines.append(f"first divergence: {full.divergence_detail}")
            for s in full.stream_offsets:
                lines.append(f"streams: {s.detail}")
            if full.failure:
                lines.append(f"failure: {full.failure}")
            if full.verdict not in (IDENTICAL,):
                lines.append(f"reproduce: {full.reproduce}")
        spots = self.blind_spots
        if spots:
            names = ", ".join(",".join(r.dropped) for r in spots)
            lines.append(
                f"blind spots: {names} (dropping them changed nothing here: "
                "not proof that they are saved)"
            )
        return lines

    def _table(self) -> str:
        rows = [self._HEADER, *self._rows()]
        widths = [max(len(row[i]) for row in rows) for i in range(len(self._HEADER) - 1)]
        lines = [self._headline(), ""]
        for n, row in enumerate(rows):
            cells = [c.ljust(w) for c, w in zip(row[:-1], widths)] + [row[-1]]
            lines.append("  ".join(cells).rstrip())
            if n == 0:
                lines.append("  ".join("-" * w for w in widths) + "  ---")
        footer = self._footer()
        return "\n".join(lines + ([""] + footer if footer else [])) + "\n"

    def _markdown(self) -> str:
        """GitHub-flavoured Markdown, ready for a CI job summary: a heading with
        the verdict, the settings, the table, then diagnosis and how to reproduce."""
        env = self.environment
        verdict = "EQUIVALENT" if self.equivalent else "NOT EQUIVALENT"
        lines = [
            f"### resumecheck: full resume {verdict} — `{self.target}`", "",
            f"{self.steps} steps, resume at {','.join(map(str, self.resume_at))}, seed "
            f"{self.seed}, {self.isolation} restarts, {self.tolerance_text}; torch "
            f"{env.get('torch')}, {env.get('threads')} thread(s), {env.get('device')}", "",
        ]
        lines.append("| " + " | ".join(_md_cell(c) for c in self._HEADER) + " |")
        lines.append("|" + "---|" * len(self._HEADER))
        for row in self._rows():
            lines.append("| " + " | ".join(_md_cell(c) for c in row) + " |")
        footer = self._footer()
        if footer:
            lines.append("")
            for line in footer:
                head, _, rest = line.partition(": ")
                rest = f"`{rest}`" if head == "reproduce" else _md_cell(rest)
                lines.append(f"- **{head}**: {rest}")
        return "\n".join(lines) + "\n"


def _md_cell(text: str) -> str:
    """Text in a Markdown table cell: pipes escaped, no line breaks."""
    return text.replace("|", "\\|").replace("\n", " ")


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    if value == 0:
        return "0"
    return f"{value:.3g}"


def _finite(value: Any) -> Any:
    """JSON has no inf/nan: write them as strings."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value
