"""The package is typed: mypy --strict passes on its source, and a user's code sees its types (py.typed)."""

import subprocess
import sys
import textwrap
from pathlib import Path

import fluxgate

PYTHON = Path(__file__).resolve().parents[1]
# One cache for both checks (and the runs after): reading pyarrow's, pandas' and polars' types takes mypy ~20 s
# of CPU the first time, well under a second after.
CACHE = PYTHON / ".mypy_cache"


def mypy(*args, cwd):
    out = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(CACHE), *args], cwd=cwd,
                         capture_output=True, text=True, timeout=300)
    return out.returncode, out.stdout + out.stderr


def test_package_passes_mypy_strict():
    code, output = mypy("-p", "fluxgate", cwd=PYTHON)
    assert code == 0, output


def test_users_see_the_types(tmp_path):
    """From outside the source tree, mypy reads the installed package's types: a wrong call is an error."""
    assert Path(fluxgate.__file__).with_name("py.typed").exists()
    (tmp_path / "user.py").write_text(textwrap.dedent("""
        import fluxgate

        with fluxgate.connect() as fg:
            reader = fg.scan("fluss.orders", limit=10)
            rows: int = reader.read_all().num_rows
            offsets: fluxgate.Offsets = fg.list_offsets("fluss.orders")
            fg.scan("fluss.orders", limit="ten")
    """))
    code, output = mypy("user.py", cwd=tmp_path)
    assert code == 1 and output.count("error:") == 1, output
    assert 'Argument "limit" to "scan" of "Client" has incompatible type "str"' in output, output
