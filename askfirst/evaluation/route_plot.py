"""Per-route accuracy of two route deciders on the same questions, as an SVG bar chart (``askfirst policy cv --plot``)."""

from __future__ import annotations

from pathlib import Path

from askfirst.run_dir import write_atomic


def plot_route_accuracy(result: dict, path: Path, *, first: str, title: str) -> Path:
    """Write an SVG of ``result`` (``policy_cv``'s comparison): for each expected route, the share of its questions
    ``first`` and the rules routed right, with their 95% Wilson intervals, and route accuracy overall.

    The file is text and the same for the same result (no date, fixed ids), so it can be committed beside the docs.
    """
    import io

    import matplotlib

    matplotlib.use("Agg")  # files only; there is no display
    import matplotlib.pyplot as plt

    routes = list(result["expected"])
    fig, ax = plt.subplots(figsize=(1.6 * len(routes) + 2.4, 3.6))
    width = 0.38
    for k, (name, colour) in enumerate(((first, "#3b6ea8"), ("rules", "#b0b0b0"))):
        shares, low, high = [], [], []
        for route in routes:
            row = result[name]["per_route"].get(route, {"share": 0.0, "ci95": [0.0, 0.0]})
            shares.append(row["share"])
            low.append(row["share"] - row["ci95"][0])
            high.append(row["ci95"][1] - row["share"])
        xs = [i + (k - 0.5) * width for i in range(len(routes))]
        ax.bar(xs, shares, width, yerr=[low, high], capsize=3, color=colour,
               label=f"{name} (route accuracy {result[name]['route_accuracy']:.3f})")
    ax.set_xticks(range(len(routes)), [f"{route}\n(n={n})" for route, n in result["expected"].items()])
    ax.set(ylim=(0, 1.05), ylabel="share routed right", title=title)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "askfirst", "svg.fonttype": "none"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    plt.close(fig)
    return write_atomic(path, buffer.getvalue())
