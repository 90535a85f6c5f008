"""The package's rooms and the order they stand in: each room imports only from rooms below
it, so the layout shows the architecture and no change can sneak a cycle in.

A room is a subpackage of ``frontdesk`` (or one of the few modules the root keeps). Read
from the bottom: plain foundations, then what every layer shares (sealing, observability),
the edge helpers, outbound calls and the store, the tools and the companies that offer
them, sign-in, the routes, the application that wires them, and the processes on top.
"""

from __future__ import annotations

import ast
from pathlib import Path

import frontdesk

PACKAGE = Path(frontdesk.__file__).parent

# Lowest first. A room may import from its own room and from any room of a lower layer,
# never from its own layer's other rooms or from above.
LAYERS: tuple[frozenset[str], ...] = tuple(
    frozenset(layer.split())
    for layer in (
        "errors domain scopes limits",
        "config",
        "sealing observability",
        "web outbound store",
        "usage tools",
        "companies demo",
        "login",
        "oauth administration",
        "openapi_import",
        "protocol account",
        "admin_api console",
        "unrouted",
        "app",
        "server",
        "cli",
        "__main__",
    )
)
LAYER_OF = {room: index for index, layer in enumerate(LAYERS) for room in layer}

# What the root keeps: the package's own files, its plain foundations, the application
# factory and the one answer it gives unrouted paths. Anything new belongs in a room.
ROOT_MODULES = {"__init__", "__main__", "app", "config", "domain", "errors", "scopes", "unrouted"}


def room_of(module: str) -> str:
    """``frontdesk.oauth.token`` -> ``oauth``; ``frontdesk.app`` -> ``app``."""
    return module.split(".")[1]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> list[str]:
    """Every ``frontdesk`` module ``path`` imports, at any depth of the file."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "frontdesk":
                found += [f"frontdesk.{alias.name}" for alias in node.names]
            elif node.module.startswith("frontdesk."):
                found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.startswith("frontdesk.")]
    return [name for name in found if name != "frontdesk.__version__"]


def test_the_root_keeps_only_its_foundations_and_the_application() -> None:
    root_modules = {path.stem for path in PACKAGE.glob("*.py")}
    assert root_modules == ROOT_MODULES


def test_every_room_has_a_place_in_the_layers() -> None:
    rooms = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").exists()}
    assert rooms | ROOT_MODULES - {"__init__"} == set(LAYER_OF)


def test_every_room_says_what_lives_there_and_what_it_may_import() -> None:
    for init in PACKAGE.glob("*/__init__.py"):
        docstring = ast.get_docstring(ast.parse(init.read_text())) or ""
        assert "May import" in docstring, f"{init.parent.name}/__init__.py"


def test_every_import_points_to_its_own_room_or_a_lower_layer() -> None:
    upward = []
    for path in PACKAGE.rglob("*.py"):
        importer = module_name(path)
        own = room_of(importer) if "." in importer else "__init__"
        if own == "__init__":
            continue
        for imported in imports_of(path):
            target = room_of(imported)
            if target != own and LAYER_OF[target] >= LAYER_OF[own]:
                upward.append(f"{importer} -> {imported}")
    assert upward == []


def test_the_layering_check_sees_an_upward_import(tmp_path: Path) -> None:
    module = tmp_path / "store_module.py"
    module.write_text("from frontdesk.protocol.endpoint import McpEndpoint\n")
    (imported,) = imports_of(module)
    assert LAYER_OF[room_of(imported)] > LAYER_OF["store"]
