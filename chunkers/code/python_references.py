"""What Python code declares and uses, read from the `ast` tree the Python chunker already
parsed (`chunkers.code.python`): the same records as the tree-sitter languages'
(`chunkers.code.references.Reference`), so the index treats every language alike."""

from __future__ import annotations

import ast
from collections.abc import Callable
from operator import attrgetter
from typing import Any

from chunkers.code.references import DEFINITION, Reference

_QUALIFIER_CHARS = 80
_RECEIVERS = frozenset({"self", "cls"})
_by_line = attrgetter("line")


def python_references(tree: ast.Module) -> list[Reference]:
    """Definitions (functions, classes, methods) and uses (calls, attribute reads, names,
    imports, base classes) in source order, each with its enclosing declaration."""
    walker = _Walker()
    walker.visit(tree)
    return sorted(walker.out, key=_by_line)


def _subclasses(*bases: type) -> set[type]:
    return {c for c in vars(ast).values() if isinstance(c, type) and issubclass(c, bases)}


# Nodes with nothing of interest under them: contexts, operators, literals.
_LEAVES = frozenset(
    {ast.Load, ast.Store, ast.Del, ast.Constant, ast.Pass, ast.Break, ast.Continue}
    | _subclasses(ast.operator, ast.cmpop, ast.unaryop, ast.boolop)
)
# Fields that never hold a node to visit: names and flags, and the contexts and operators
# that are _LEAVES. Reading them cost a getattr and a type test per node.
_NO_NODES = frozenset(
    {"ctx", "op", "ops", "id", "attr", "name", "module", "arg", "asname", "type_comment"}
    | {"kind", "level", "is_async", "conversion", "simple", "type_ignores"}
)
_CHILD_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {}


def _child_fields(kind: type[ast.AST]) -> tuple[str, ...]:
    fields = _CHILD_FIELDS[kind] = tuple(f for f in kind._fields if f not in _NO_NODES)
    return fields


class _Walker:
    """An `ast.NodeVisitor`-like walk with a faster dispatch and child walk: chunking runs it
    over every Python file, and NodeVisitor's own (a getattr per node, iter_fields per
    child) cost as much as parsing. The names read (`ast.Name`, most records) are recorded
    in the child walk itself, without a call per name."""

    def __init__(self) -> None:
        self.out: list[Reference] = []
        self.scopes: list[tuple[str, str]] = []  # (kind, name) of the declarations open here
        self.scope = ""  # the innermost declaration's qualified name
        self.aliases: dict[str, str] = {}  # `import a as b`, `from m import a as b`
        self._visitors: dict[type, Callable[[Any], None]] = {}

    def visit(self, node: ast.AST) -> None:
        kind = type(node)
        if kind is ast.Name:
            self.visit_Name(node)  # type: ignore[arg-type]
        elif kind not in _LEAVES:
            (self._visitors.get(kind) or self._visitor(kind))(node)

    def _visitor(self, kind: type) -> Callable[[Any], None]:
        method = self._visitors[kind] = getattr(self, "visit_" + kind.__name__, self.generic_visit)
        return method

    def generic_visit(self, node: ast.AST) -> None:
        visitors = self._visitors
        AST, Name, Load = ast.AST, ast.Name, ast.Load  # noqa: N806 (locals for the loop)
        for field in _CHILD_FIELDS.get(type(node)) or _child_fields(type(node)):
            value: Any = getattr(node, field, None)
            item: Any
            for item in value if type(value) is list else (value,):
                kind = type(item)
                if kind is Name:
                    # visit_Name, inlined: the most common node with a record.
                    if type(item.ctx) is Load and item.id not in _RECEIVERS:
                        name = item.id
                        line = item.lineno
                        self.out.append(
                            Reference(
                                self.aliases.get(name, name),
                                "value",
                                line,
                                item.end_lineno or line,
                                "",
                                self.scope,
                                "",
                            )
                        )
                elif kind not in _LEAVES and isinstance(item, AST):
                    (visitors.get(kind) or self._visitor(kind))(item)

    # -- declarations --------------------------------------------------------------------

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._define(node, "class")
        for base in node.bases:
            self._use(base, "inherit")
        for child in (*node.decorator_list, *node.keywords):
            self.visit(child)
        self._open("class", node.name, node.body)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        in_class = bool(self.scopes) and self.scopes[-1][0] == "class"
        self._define(node, "method" if in_class else "function")
        for child in (*node.decorator_list, node.args, *([node.returns] if node.returns else [])):
            self.visit(child)
        self._open("function", self._qualified(node.name), node.body)

    visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815 (the visitor's naming)

    def _open(self, kind: str, name: str, body: list[ast.stmt]) -> None:
        outer = self.scope
        self.scopes.append((kind, name))
        self.scope = name
        for stmt in body:
            self.visit(stmt)
        self.scopes.pop()
        self.scope = outer

    def _define(
        self, node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef, kind: str
    ) -> None:
        container = next((n for k, n in reversed(self.scopes) if k == "class"), "")
        end = node.end_lineno or node.lineno
        self.out.append(Reference(node.name, DEFINITION, node.lineno, end, kind, container))

    def _qualified(self, name: str) -> str:
        return f"{self.scopes[-1][1]}.{name}" if self.scopes else name

    # -- uses ----------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._import(node, alias.name, alias.asname)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            self._import(node, alias.name, alias.asname)

    def _import(self, node: ast.stmt, name: str, asname: str | None) -> None:
        if asname:
            self.aliases[asname] = name.rpartition(".")[2]
        self._add(node, name, "import", "")

    def visit_Call(self, node: ast.Call) -> None:
        self._use(node.func, "call")
        for child in (*node.args, *node.keywords):
            self.visit(child)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._use(node, "member")

    def visit_Name(self, node: ast.Name) -> None:
        if type(node.ctx) is ast.Load:  # `x = ...` binds x: no use (as in every language)
            self._use(node, "value")

    def _use(self, node: ast.expr, role: str) -> None:
        if isinstance(node, ast.Attribute):
            qualifier = _written(node.value)[:_QUALIFIER_CHARS]
            self._add(node, node.attr, "member" if role == "value" else role, qualifier)
            self.visit(node.value)
        elif isinstance(node, ast.Name):
            if node.id not in _RECEIVERS:
                self._add(node, self.aliases.get(node.id, node.id), role, "")
        else:
            self.visit(node)

    def _add(self, node: ast.AST, name: str, role: str, qualifier: str) -> None:
        line = getattr(node, "lineno", 1)
        end = getattr(node, "end_lineno", None) or line
        self.out.append(Reference(name, role, line, end, "", self.scope, qualifier))


def _written(node: ast.expr) -> str:
    """A receiver as written: names and attribute chains directly (most receivers; unparse
    costs as much as the rest of the walk), anything else unparsed."""
    if type(node) is ast.Name:
        return node.id
    if type(node) is ast.Attribute:
        return f"{_written(node.value)}.{node.attr}"
    return ast.unparse(node)
