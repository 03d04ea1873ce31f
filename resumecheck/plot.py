"""The divergence figure: a resume bug you can see.

One figure per check. On top, the reference's loss over the steps and each
resumed run's loss, the resume points as vertical lines, the band that
seeds alone produce shaded around the reference after the restart (the
report's ``noise.band``: a run is plausible when its loss stays inside it),
and each diverged run's first divergent step marked. Below it, one strip per run: steps across,
quantities down (the samples consumed, the loss scale and skipped steps, the
learning rate, the loss, the gradients, the parameters), coloured where the
run differs from the reference bit for bit, so the first quantity to diverge
is visible at a glance. Under the strips: the blind spots, and the runs whose
verdict is not a divergence or an identity (failed, inconclusive).

matplotlib is the optional extra ``resumecheck[plot]``; nothing here uses
pyplot, so no window or global state is involved.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from resumecheck.errors import InvalidArgument, MissingExtra
from resumecheck.report import DIVERGED, Report, RunResult

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from resumecheck.fuzz import FuzzResult

__all__ = ["STRIP_ROWS", "divergence_figure", "save_plot", "strip_labels", "strip_matrix"]

STRIP_ROWS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("data", ("data", "inputs")),
    ("loss scale", ("scale", "skipped")),
    ("lr", ("lr",)),
    ("loss", ("loss",)),
    ("grads", ("grad",)),
    ("params", ("param",)),
)
"""The strip's rows, top to bottom: a label and the trajectory kinds it shows."""

NOT_RUN, SAME, DIFFERS, NOT_COMPARED = 0, 1, 2, 3
_STRIP_COLOURS = ("#eeeeee", "#cfe8c8", "#d7301f", "#ffffff")
_FORMATS = (".png", ".svg")


BAND_LABEL = "widest seed-to-seed spread (at any step after the restart)"
"""The noise band's legend: the widest spread between honest runs at any step
after the restart, drawn at every step (trial 895 read "seed-to-seed noise" as
each step's spread: a step the text said was beyond it sat inside the band)."""

_REFERENCE_WIDTH = 4.0
"""The reference's line width, points: about three times a diverged run's."""
_RUN_WIDTH = 1.4


@dataclass
class _Data:
    title: str
    steps: int
    reference: list[float]
    band: float | None = None
    band_steps: list[int] = field(default_factory=list)
    runs: list[RunResult] = field(default_factory=list)
    labels: dict[int, str] = field(default_factory=dict)
    """Each run's label in its report (by id): the engine's full resume beside
    the program's own is ``full resume (engine)``."""

    def label(self, run: RunResult) -> str:
        return self.labels.get(id(run), run.label)


def _data(source: Report | FuzzResult) -> _Data:
    if isinstance(source, Report):
        band = source.noise.get("band")
        window = source.noise.get("steps") or []
        return _Data(
            title=f"{source.target}: full resume {source.outcome}",
            steps=source.steps, reference=list(source.reference_loss),
            band=band if isinstance(band, (int, float)) else None,
            band_steps=list(range(window[0], window[1] + 1)) if len(window) == 2 else [],
            runs=list(source.runs),
            labels={id(r): source.label_of(r) for r in source.runs},
        )
    runs = [source.failure] if source.failure is not None else []
    what = (("minimal " if source.minimal else "") + "failing schedule: resume at "
            + ",".join(map(str, source.failure.resume_at)) if source.failure
            else "no failing schedule")
    return _Data(title=f"{source.target} (fuzz): {what}", steps=source.steps,
                 reference=list(source.reference_loss), runs=runs)


def strip_matrix(run: RunResult, steps: int) -> list[list[int]]:
    """The run's strip: one row per ``STRIP_ROWS`` entry, one column per step
    1..steps; NOT_RUN where the run recorded no step (before its restart, or a
    failed run), SAME or DIFFERS; NOT_COMPARED in a row of quantities the
    reference never recorded (no loss scaler; parameters not traced)."""
    rows = [[NOT_RUN] * steps for _ in STRIP_ROWS]
    traj = run.trajectory
    if traj is None:
        return rows
    for r, (_, kinds) in enumerate(STRIP_ROWS):
        differs = {s for k in kinds for s in traj.differs.get(k, [])}
        # (every step records whether its optimizer stepped: the row of the loss
        # scale is compared where a scaler's scale is, or a skipped step differs)
        compared = (not traj.compared or bool(differs)
                    or any(k in traj.compared for k in kinds if k != "skipped"))
        for s in traj.steps:
            if 1 <= s <= steps:
                rows[r][s - 1] = (DIFFERS if s in differs else SAME) if compared else NOT_COMPARED
    return rows


def strip_labels(run: RunResult) -> list[str]:
    """The strip's row labels for ``run``: the loss scale's row is "skipped steps"
    where no scale was traced step by step and a skipped step differs, which
    the row then shows (trial 851: a scaler of the program's own, its scale
    apart for six steps, read green as "identical" where only the skipped
    steps were compared)."""
    traj = run.trajectory
    skips_only = traj is not None and bool(traj.compared) and "scale" not in traj.compared \
        and bool(traj.differs.get("skipped"))  # (else no scale: not compared, white)
    return [("skipped steps" if skips_only and kinds == ("scale", "skipped") else label)
            for label, kinds in STRIP_ROWS]


def divergence_figure(source: Report | FuzzResult) -> Figure:
    """The figure for a report (every run) or a fuzzing result (the minimal failing run)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingExtra("the divergence plot", "matplotlib", "plot") from None

    data = _data(source)
    runs = [r for r in data.runs if r.trajectory is not None]
    notes = [line for note in _notes(data.runs)
             for line in textwrap.wrap(note, _NOTE_WIDTH, subsequent_indent="    ")]
    height = 3.8 + 0.8 * len(runs) + _NOTE_LINE * len(notes)
    fig = Figure(figsize=(10, height), layout="constrained")
    grid = fig.add_gridspec(1 + len(runs), 1, height_ratios=[4.5] + [1] * len(runs))
    ax = fig.add_subplot(grid[0])
    _loss_panel(ax, data, runs)
    for i, run in enumerate(runs):
        sax = fig.add_subplot(grid[1 + i], sharex=ax)
        _strip(sax, data, run)
        if i < len(runs) - 1:
            sax.tick_params(labelbottom=False)
    (fig.axes[-1]).set_xlabel("step  (strips: red = differs from the reference bit for bit, "
                              "green = identical, grey = not run, white = not compared)",
                              fontsize=7)
    if notes:
        fig.text(0.01, 0.0, "\n".join(notes), fontsize=7, va="bottom", ha="left", gid="notes")
        engine: Any = fig.get_layout_engine()
        # room for the notes (x, y, w, h): a trial saw a blank band above them
        bottom = _NOTE_LINE * len(notes) / height + 0.02
        engine.set(rect=(0, bottom, 1, 1 - bottom))
    return fig


_NOTE_LINE = 0.125
"""The height of one line of the notes, in inches (7-point type, spaced 1.2)."""


def _loss_panel(ax: Any, data: _Data, runs: list[RunResult]) -> None:
    """The loss curves: the reference, its noise band, each run, each first divergence."""
    from matplotlib.ticker import MaxNLocator

    n = data.steps
    ax.set_gid("loss")
    ax.set_title(data.title, fontsize=10, loc="left")
    ax.set_ylabel("loss")
    ax.set_xlim(0.5, n + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # (steps: a trial saw 2.5, 7.5)
    if data.band is not None and data.band_steps and len(data.reference) == n:
        # the band the plausible/gross call uses: after the restart, within the
        # largest loss difference between two honest runs (reference, other seeds)
        xs = data.band_steps
        ref = [data.reference[s - 1] for s in xs]
        floor = 0.0 if min(data.reference) >= 0 else float("-inf")  # (a loss that is never < 0)
        ax.fill_between(xs, [max(v - data.band, floor) for v in ref],
                        [v + data.band for v in ref],
                        color="#9ecae1", alpha=0.35, linewidth=0, label=BAND_LABEL)
    # (wide enough to show as a black edge around a run drawn on it: a trial saw
    # no reference where a run equals it, under that run's line)
    ax.plot(list(range(1, n + 1))[:len(data.reference)], data.reference, color="black",
            linewidth=_REFERENCE_WIDTH, label="reference", zorder=3)
    marked = False
    for run, colour in zip(runs, _colours(len(runs))):
        traj = run.trajectory
        assert traj is not None
        diverged = run.verdict == DIVERGED
        ax.plot(traj.steps, traj.loss, color=colour, linewidth=_RUN_WIDTH if diverged else 0.9,
                linestyle="-" if diverged else ":", label=f"{data.label(run)} ({run.verdict})", zorder=4)
        # (trial 422: a cross on the loss of a run whose steps all matched, only its
        # end state differing: that is said beside its strip, not on the loss)
        if diverged and run.first_divergent_step is not None \
                and not (run.first_divergent_quantity or "").startswith("state of"):
            step = min(max(run.first_divergent_step, traj.first_step), traj.steps[-1])
            ax.plot([step], [traj.loss[step - traj.first_step]], marker="X", markersize=9,
                    color=colour, markeredgecolor="black", linestyle="none", zorder=5,
                    gid=f"first divergence:{data.label(run)}", label="_first divergence")
            marked = True
    if marked:  # (in no run's colour: a trial saw the legend's blue, the plot's orange)
        ax.plot([], [], marker="X", markersize=9, color="white", markeredgecolor="black",
                linestyle="none", label="first divergent step (in the run's colour)")
    for i, k in enumerate(sorted({k for r in data.runs for k in r.resume_at})):
        ax.axvline(k + 0.5, color="#555555", linestyle="--", linewidth=1, gid=f"resume:{k}",
                   label="_resume" if i else "restart (after step k)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def _strip(sax: Any, data: _Data, run: RunResult) -> None:
    """One run's strip: which quantity differs from the reference at which step."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Rectangle

    n = data.steps
    sax.set_gid(f"strip:{data.label(run)}")
    sax.imshow(strip_matrix(run, n), aspect="auto", cmap=ListedColormap(_STRIP_COLOURS), vmin=0,
               vmax=3, interpolation="nearest", extent=(0.5, n + 0.5, len(STRIP_ROWS) - 0.5, -0.5))
    sax.set_yticks(range(len(STRIP_ROWS)), strip_labels(run), fontsize=6)
    verdict: str = run.verdict
    if (run.first_divergent_quantity or "").startswith("state of"):
        verdict += f"\n(final {run.first_divergent_quantity})"
    sax.set_ylabel(f"{data.label(run)}\n{verdict}", rotation=0, ha="right", va="center",
                   fontsize=7)
    for k in run.resume_at:
        sax.axvline(k + 0.5, color="#555555", linestyle="--", linewidth=0.8)
    row = _row_of(run.first_divergent_quantity)
    if run.verdict == DIVERGED and run.first_divergent_step is not None and row is not None:
        sax.add_patch(Rectangle((run.first_divergent_step - 0.5, row - 0.5), 1, 1, fill=False,
                                edgecolor="black", linewidth=1.5, gid="first divergence"))


def _row_of(quantity: str | None) -> int | None:
    """The strip row of a first divergent quantity's name (None: a final state)."""
    heads = (("data", 0), ("loss scale", 1), ("skipped", 1), ("learning rate", 2),
             ("loss", 3), ("gradient", 4), ("parameter", 5))
    return next((row for head, row in heads if (quantity or "").startswith(head)), None)


_NOTE_WIDTH = 150  # characters per line of the notes under the strips (fontsize 7, 10 in)
_NOTE_CHARS = 450  # of a failure's or an inconclusive run's reason, cut at a word


def _notes(runs: list[RunResult]) -> list[str]:
    lines = []
    spots = [",".join(r.dropped) for r in runs if r.blind_spot]
    if spots:
        lines.append(f"blind spots (dropping changed nothing; not proof they are saved): "
                     f"{', '.join(spots)}")
    for r in runs:
        if r.verdict not in ("identical", "close", "diverged"):
            reason = (r.failure or r.explanation or "").splitlines()[0] if (
                r.failure or r.explanation) else ""
            if len(reason) > _NOTE_CHARS:  # (the report holds it whole)
                reason = reason[:_NOTE_CHARS].rsplit(" ", 1)[0] + " ..."
            # (a trial read "inconclusive: drop params: inconclusive: ..." twice over)
            reason = reason.removeprefix(f"{r.verdict}: ")
            lines.append(f"{r.verdict}: {r.label}" + (f": {reason}" if reason else ""))
    return lines


def _colours(count: int) -> list[Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab10" if count <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(count)]


def save_plot(source: Report | FuzzResult, path: str | Path) -> Path:
    """Write the divergence figure to ``path`` (``.png`` or ``.svg``); returns the path."""
    path = Path(path)
    if path.suffix.lower() not in _FORMATS:
        raise InvalidArgument("plot", str(path), "expected a file name ending in .png or .svg")
    fig = divergence_figure(source)
    fig.savefig(path, dpi=110)
    return path
