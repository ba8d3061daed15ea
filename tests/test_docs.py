"""The documentation site builds with `mkdocs build --strict` (a broken link or a page missing from the nav fails)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_docs_site_builds_strictly(tmp_path):
    mkdocs = Path(sys.executable).with_name("mkdocs")
    result = subprocess.run([str(mkdocs), "build", "--strict", "--quiet", "-d", str(tmp_path / "site")], cwd=ROOT,
                            capture_output=True, text=True, env=os.environ | {"NO_MKDOCS_2_WARNING": "1"}, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "configuration" / "index.html").is_file()


def test_the_readme_links_only_to_files_that_exist():
    import re

    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", (ROOT / "README.md").read_text(encoding="utf-8")):
        assert (ROOT / target).exists(), f"README links to {target}, which does not exist"
