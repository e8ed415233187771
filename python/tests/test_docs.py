"""docs/python.md's first code block runs as written (host backend)."""
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "python.md"


def test_the_tour_in_docs_python_runs():
    text = DOC.read_text()
    start = text.index("```python\n") + len("```python\n")
    block = text[start:text.index("```", start)]
    exec(compile(block, f"{DOC}:first block", "exec"), {})
