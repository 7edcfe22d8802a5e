"""The package's shape: no import cycles between modules nor between folders (each folder of
``sunar`` and each top-level module one unit), no module over 300 lines outside prompts, no test
double or benchmark reachable from product code, and no machine's absolute paths anywhere in the
repository."""

import ast
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "sunar"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The project modules a module imports, anywhere in it (a function-level import counts too);
    importing ``a.b.c`` also runs the package ``a.b``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            while name:
                if name in modules:
                    found.add(name)
                name = name.rpartition(".")[0]
    return found


def graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(files)
    return {name: imports_of(path, modules) - {name} for name, path in files.items()}


def test_no_import_cycles():
    edges = graph()
    state: dict[str, int] = {}
    cycles = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt):], nxt])
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for start in sorted(edges):
        if start not in state:
            visit(start, [start])
    assert not cycles, cycles


def unit(module: str) -> str:
    """The folder or top-level module a module belongs to: ``sunar.models.llm`` -> ``sunar.models``."""
    return ".".join(module.split(".")[:2])


def folder_loops(edges: dict[str, set[str]]) -> list[list[str]]:
    """The groups of units (:func:`unit`) that import each other round a loop (strongly connected
    components of more than one unit; the package's own ``__init__`` is no unit)."""
    units: dict[str, set[str]] = {}
    for a, targets in edges.items():
        units.setdefault(unit(a), set()).update(unit(b) for b in targets if unit(b) not in (unit(a), "sunar"))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    loops: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(units.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = stack[stack.index(v):]
            del stack[stack.index(v):]
            if len(group) > 1:
                loops.append(sorted(group))

    for v in sorted(units):
        if v not in index:
            visit(v)
    return loops


def test_no_import_loops_between_folders_or_top_level_modules():
    assert folder_loops(graph()) == []


def test_a_loop_between_folders_is_found_whatever_modules_make_it():
    edges = {"sunar.models.scorer": {"sunar.stores.corpus"}, "sunar.stores.index": {"sunar.models.embedder"}, "sunar.models.embedder": set(),
             "sunar.stores.corpus": {"sunar.text"}, "sunar.text": set(), "sunar.nodes.a": {"sunar.models.scorer", "sunar"}}
    assert folder_loops(edges) == [["sunar.models", "sunar.stores"]]  # no module cycle, yet the folders loop
    del edges["sunar.models.scorer"]
    assert folder_loops(edges) == []


def test_product_code_never_imports_tests_or_benchmarks():
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                for name in names:
                    assert name.split(".")[0] not in {"tests", "scripted", "oracle", "fakes", "conftest", "benchmarks"}, (path, name)


#: Most lines of a module: a longer one does more than one job (prompts, mostly text, excepted).
MAX_LINES = 300


def long_modules(root: Path = PACKAGE) -> dict[str, int]:
    """The modules over :data:`MAX_LINES` lines outside prompts (a ``prompts`` folder or module)."""
    counts = {p.relative_to(root): len(p.read_text().splitlines()) for p in root.rglob("*.py")}
    return {str(path): n for path, n in counts.items() if n > MAX_LINES and "prompts" not in (*path.parts[:-1], path.stem)}


def test_no_module_over_300_lines_outside_prompts():
    assert long_modules() == {}


def test_a_long_module_is_found_and_a_long_prompt_is_not(tmp_path):
    (tmp_path / "prompts").mkdir()
    for path in (tmp_path / "long.py", tmp_path / "prompts" / "few_shot.py", tmp_path / "prompts.py"):
        path.write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_LINES)
    assert long_modules(tmp_path) == {"long.py": MAX_LINES + 1}


def test_each_node_module_defines_one_node():
    for path in sorted((PACKAGE / "nodes").glob("*.py")):
        if path.name != "__init__.py":
            assert path.read_text().count('@node("') == 1, path


def test_no_absolute_machine_paths_in_the_repository():
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    pattern = re.compile(r"(?<![\w.])/(?:work|home|root|tmp|Users|mnt|opt)/")
    offenders = []
    for name in listed:
        path = ROOT / name
        if path.suffix in {".png", ".sqlite", ".npy"} or not path.is_file():
            continue
        text = path.read_text(errors="ignore")
        offenders += [f"{name}: {m.group(0)}" for m in pattern.finditer(text)]
    assert not offenders, offenders
