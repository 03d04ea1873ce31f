"""Measure the framework examples and print docs/FRAMEWORKS.md's table (Markdown).

    python examples/frameworks/make_table.py

Every row is a fresh measurement: the full resume through the framework's
own checkpoint (``drop="none"``), in-process restarts, one noise seed. The
cause is what resumecheck's report names: the diagnosis when it has one
(unless the run diverged and every finding is latent), else its explanation.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# (framework, setting, target)
ROWS = [
    ("Accelerate", "plain shuffled `DataLoader` (defaults)", "accelerate_check.py:PLAIN"),
    ("Accelerate", "`use_seedable_sampler=True`", "accelerate_check.py:SEEDABLE"),
    ("Accelerate", "`use_stateful_dataloader=True`", "accelerate_check.py:STATEFUL"),
    ("Accelerate", "`use_seedable_sampler=True`, no dropout",
     "accelerate_check.py:SEEDABLE_NO_DROPOUT"),
    ("Accelerate", "`use_seedable_sampler=True`, `DataLoader(generator=...)`",
     "accelerate_check.py:SEEDABLE_OWN_GENERATOR"),
    ("Accelerate", "plain shuffled `DataLoader(generator=...)`",
     "accelerate_check.py:PLAIN_OWN_GENERATOR"),
    ("Accelerate", "`use_seedable_sampler=True`, `DataLoader(generator=...)`, a loop "
     "without `set_epoch`", "accelerate_check.py:SEEDABLE_OWN_GENERATOR_NO_SET_EPOCH"),
    ("Lightning", "plain shuffled `DataLoader` (defaults)", "lightning_check.py:DEFAULT"),
    ("Lightning", "plain shuffled `DataLoader`, RNG-saving callback",
     "lightning_check.py:RNG_CALLBACK"),
    ("Lightning", "`StatefulDataLoader`, RNG-saving callback", "lightning_check.py:RECOMMENDED"),
    ("Lightning", "`StatefulDataLoader`, no dropout, resumed at an epoch's last batch",
     "lightning_check.py:EPOCH_END"),
    ("HF Trainer", "defaults", "transformers_check.py:DEFAULT"),
    ("HF Trainer", "`ignore_data_skip=True`", "transformers_check.py:IGNORE_DATA_SKIP"),
]


def measure(target: str, noise_seeds: int = 1):
    """The full resume's RunResult for one example target."""
    import resumecheck

    report = resumecheck.verify(str(HERE / target), drop="none", noise_seeds=noise_seeds)
    return report.runs[0]


def cause(run) -> str:
    """The diagnosis; for a run that diverged while every finding is latent
    (restored wrongly, unused), the explanation, which names what differed."""
    latent_only = all(f.confirmed is False for f in run.diagnosis)
    if run.diagnosis and not (latent_only and run.verdict != "identical"):
        parts = []
        for f in run.diagnosis:  # (marked as the report marks it; unmarked: not judged)
            parts.append(f"{f.component}: {f.detail}{f.mark or ' (not judged)'}")
        return "; ".join(parts)
    # (every row says that the loop, or the resume, that ran is the check's: said
    # once above the table, not in each row)
    from resumecheck.frameworks._loop import loop_note
    from resumecheck.frameworks.accelerate import LOOP_NOTE
    from resumecheck.frameworks.lightning import SAVED_AT_BATCH_END

    notes = [LOOP_NOTE, loop_note("Lightning"), loop_note("the HuggingFace Trainer")]
    return functools.reduce(lambda text, note: text.replace(f"; {note}", ""), notes,
                            run.explanation.replace(SAVED_AT_BATCH_END, ""))


def columns(framework: str, setting: str, run) -> list[str]:
    """The table's columns for one measured run."""
    first = (f"{run.first_divergent_step}, {run.first_divergent_quantity}"
             if run.first_divergent_step is not None else "-")
    return [framework, setting, run.verdict, first, cause(run).replace("|", "\\|")]


def row(framework: str, setting: str, target: str) -> str:
    return "| " + " | ".join(columns(framework, setting, measure(target))) + " |"


def main() -> int:
    print("| framework | setting | verdict | first divergent step, quantity | the cause resumecheck names |")
    print("|---|---|---|---|---|")
    for framework, setting, target in ROWS:
        print(row(framework, setting, target), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
