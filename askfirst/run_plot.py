"""A plot image for ``askfirst runs --plot``: optimisation curves of compile runs, metric bars of the others."""

from __future__ import annotations

from pathlib import Path

from askfirst.evaluation.metrics import shown_in

BAR_METRICS = tuple(m.mlflow_key() for m in shown_in("plot"))


def plot_runs(rows: list[dict], path: Path, *, tracking_uri: str) -> Path:
    """Write a PNG: one panel with each compile run's candidate and best-so-far scores by optimisation step,
    one with the main metrics of every other run side by side (panels without runs are left out).

    Raises:
        ValueError: No runs to plot.
    """
    import matplotlib

    matplotlib.use("Agg")  # files only; there is no display
    import matplotlib.pyplot as plt
    from mlflow import MlflowClient

    if not rows:
        raise ValueError("no runs to plot")
    compiles = [r for r in rows if r["kind"] == "compile"]
    others = [r for r in rows if r["kind"] != "compile"]
    panels = bool(compiles) + bool(others)
    fig, axes = plt.subplots(1, panels, figsize=(7 * panels, 4.5), squeeze=False)
    axes = list(axes[0])
    if compiles:
        ax, client = axes.pop(0), MlflowClient(tracking_uri)
        for row in compiles:
            for metric, style in (("candidate_score", "o:"), ("best_score", "-")):
                points = sorted((m.step, m.value) for m in client.get_metric_history(row["run_id"], metric))
                if points:
                    ax.plot(*zip(*points, strict=True), style, label=f"{row['run']} {metric}")
        ax.set(title="Optimisation: validation score by step", xlabel="step (candidate / trial)", ylabel="objective")
        ax.legend(fontsize=7)
    if others:
        ax = axes.pop(0)
        width = 0.8 / len(others)
        for i, row in enumerate(others):
            values = [row.get(m) or 0.0 for m in BAR_METRICS]
            ax.bar([j + i * width for j in range(len(BAR_METRICS))], values, width, label=row["run"])
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(BAR_METRICS))], BAR_METRICS, rotation=20, fontsize=8)
        ax.set(title="Runs compared (missing metrics drawn as 0)", ylim=(0, 1))
        ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
