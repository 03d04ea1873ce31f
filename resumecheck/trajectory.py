"""A resumed run step by step: its loss, and which quantities differ from the reference.

The verdict says *where* a run first diverged; the trajectory keeps enough to
show *how*: the loss of every step the run recorded and, per kind of
quantity (the samples consumed, the loss scale, the learning rate, the loss,
the gradients, a skipped step, the parameters), the steps at which it differs
from the reference bit for bit. Plots and other tools read it from the JSON
report (``runs[].trajectory``, see docs/REPORT.md); it stays small: one float
per step and a list of step numbers per kind.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from resumecheck.trace import StepRecord

__all__ = ["QUANTITY_KINDS", "Trajectory", "quantity_kind"]

# The same names and order as trace.QUANTITY_ORDER, spelled out so that
# reading a report does not import torch.
QUANTITY_KINDS: tuple[str, ...] = (
    "data", "inputs", "scale", "lr", "loss", "grad", "skipped", "param",
)
"""The kinds of per-step quantity, in the order a step produces them:
``data`` (the samples a step returned), ``inputs`` (what the model was fed,
for steps that return no samples), ``scale``, ``lr``, ``loss``, ``grad``,
``skipped`` (the optimizer step was skipped: decided from the gradients), ``param``."""


@dataclass(kw_only=True)
class Trajectory:
    """One run's steps: the loss per step and where each kind of quantity differs."""

    first_step: int
    """The step of ``loss[0]``; the run recorded steps ``first_step .. first_step + len(loss) - 1``."""
    loss: list[float] = field(default_factory=list)
    differs: dict[str, list[int]] = field(default_factory=dict)
    """Per kind (``QUANTITY_KINDS``), the steps at which it differs from the reference
    bit for bit; kinds that never differ are left out."""
    compared: list[str] = field(default_factory=list)
    """The kinds the reference recorded at those steps, in ``QUANTITY_KINDS`` order:
    one not among them was not compared (no loss scaler, parameters not traced; trial
    422's figure drew a loss-scale strip all green of a program with no scaler).
    Empty where not known (a report written before it was kept)."""

    @property
    def steps(self) -> list[int]:
        return list(range(self.first_step, self.first_step + len(self.loss)))

    @classmethod
    def compare(
        cls, records: Iterable[StepRecord], reference: Mapping[int, StepRecord]
    ) -> Trajectory | None:
        """The trajectory of ``records`` (consecutive steps) against the reference's
        records by step; None when there are none."""
        from resumecheck.trace import differing_quantities

        records = list(records)
        if not records:
            return None
        out = cls(first_step=records[0].step)
        compared: set[str] = set()
        for rec in records:
            out.loss.append(rec.loss)
            ref = reference.get(rec.step)
            if ref is not None:
                compared.update(quantity_kind(key) for key in ref.digests)
                if ref.skipped:
                    compared.add("skipped")
            for key in differing_quantities(reference[rec.step], rec):
                kind = quantity_kind(key)
                steps = out.differs.setdefault(kind, [])
                if not steps or steps[-1] != rec.step:
                    steps.append(rec.step)
        out.differs = {k: out.differs[k] for k in QUANTITY_KINDS if k in out.differs}
        out.compared = [k for k in QUANTITY_KINDS if k in compared or k in out.differs]
        return out

    def to_json(self) -> dict[str, Any]:
        return {"first_step": self.first_step, "loss": list(self.loss),
                "differs": {k: list(v) for k, v in self.differs.items()},
                "compared": list(self.compared)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Trajectory:
        return cls(first_step=int(data["first_step"]), loss=[float(x) for x in data["loss"]],
                   differs={k: [int(s) for s in v] for k, v in data["differs"].items()},
                   compared=[str(k) for k in data.get("compared", [])])


def quantity_kind(key: str) -> str:
    """The kind (``QUANTITY_KINDS``) of a record's digest key: ``grad`` for
    ``grad:0.weight[rank 1]``, ``loss`` for ``loss[rank 1]``."""
    return key.split(":", 1)[0].split("[rank ", 1)[0]
