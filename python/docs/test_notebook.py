"""Executes examples/quickstart.ipynb headless (nbclient) against a fresh server, and checks that the notebook in
git has no outputs."""

from pathlib import Path

import nbformat
import polars as pl
from nbclient import NotebookClient

import fluxgate
from fluxgate_server import Server

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "quickstart.ipynb"


def test_notebook_is_committed_without_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"cell {i} has outputs: clear them"


def test_notebook_runs(tmp_path, monkeypatch):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    with Server(tmp_path / "fluxgate-data") as srv:
        monkeypatch.setenv("FLUXGATE_ADDR", srv.address)  # the kernel inherits the environment
        NotebookClient(nb, timeout=120, kernel_name="python3",
                       resources={"metadata": {"path": str(tmp_path)}}).execute()
        with fluxgate.connect(srv.address) as fg:
            metrics = fg.to_polars("fluss.metrics")
    # The hour the notebook generates: web-2 runs 5 points above web-1, minute by minute.
    hour = metrics.filter(pl.col("ts") < pl.datetime(2026, 12, 1, 10, time_zone="UTC")).sort("ts", "host")
    assert hour.height == 120
    cpu = hour.pivot(on="host", index="ts", values="cpu")
    assert (cpu["web-2"] - cpu["web-1"]).to_list() == [5.0] * 60
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs), "the plot was not drawn"
    follow_cell = next(c for c in nb.cells if "followed.append" in c.source)
    followed = eval(follow_cell.outputs[0]["data"]["text/plain"])  # the cell's result: [(bucket, next, rows)]
    assert sum(rows for _, _, rows in followed) == 2, f"the follow did not see the 2 new rows: {followed}"
