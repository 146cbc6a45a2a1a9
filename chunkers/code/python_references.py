"""What Python code declares and uses, read from the `ast` tree the Python chunker already
parsed (`chunkers.code.python`): the same records as the tree-sitter languages'
(`chunkers.code.references.Reference`), so the index treats every language alike."""

from __future__ import annotations

import ast
from typing import Any

from chunkers.code.references import DEFINITION, Reference

_QUALIFIER_CHARS = 80


def python_references(tree: ast.Module) -> list[Reference]:
    """Definitions (functions, classes, methods) and uses (calls, attribute reads, names,
    imports, base classes) in source order, each with its enclosing declaration."""
    walker = _Walker()
    walker.visit(tree)
    return sorted(walker.out, key=lambda r: r.line)


def _subclasses(*bases: type) -> set[type]:
    return {c for c in vars(ast).values() if isinstance(c, type) and issubclass(c, bases)}


# Nodes with nothing of interest under them: contexts, operators, literals.
_LEAVES = frozenset(
    {ast.Load, ast.Store, ast.Del, ast.Constant, ast.Pass, ast.Break, ast.Continue}
    | _subclasses(ast.operator, ast.cmpop, ast.unaryop, ast.boolop)
)


class _Walker(ast.NodeVisitor):
    """An `ast.NodeVisitor` with a faster dispatch and child walk: chunking runs it over every
    Python file, and NodeVisitor's own (a getattr per node, iter_fields per child) cost
    as much as parsing."""

    def __init__(self) -> None:
        self.out: list[Reference] = []
        self.scopes: list[tuple[str, str]] = []  # (kind, name) of the declarations open here
        self.aliases: dict[str, str] = {}  # `import a as b`, `from m import a as b`
        self._visitors: dict[type, Any] = {}

    def visit(self, node: ast.AST) -> None:
        kind = type(node)
        if kind in _LEAVES:
            return
        method = self._visitors.get(kind)
        if method is None:
            method = self._visitors[kind] = getattr(
                self, "visit_" + kind.__name__, self.generic_visit
            )
        method(node)

    def generic_visit(self, node: ast.AST) -> None:
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST):
                self.visit(value)

    # -- declarations --------------------------------------------------------------------

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._define(node, "class")
        for base in node.bases:
            self._use(base, "inherit")
        for child in (*node.decorator_list, *node.keywords):
            self.visit(child)
        self.scopes.append(("class", node.name))
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        in_class = bool(self.scopes) and self.scopes[-1][0] == "class"
        self._define(node, "method" if in_class else "function")
        for child in (*node.decorator_list, node.args, *([node.returns] if node.returns else [])):
            self.visit(child)
        self.scopes.append(("function", self._qualified(node.name)))
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815 (the visitor's naming)

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
            if node.id not in ("self", "cls"):
                self._add(node, self.aliases.get(node.id, node.id), role, "")
        else:
            self.visit(node)

    def _add(self, node: ast.AST, name: str, role: str, qualifier: str) -> None:
        line = getattr(node, "lineno", 1)
        end = getattr(node, "end_lineno", None) or line
        scope = self.scopes[-1][1] if self.scopes else ""
        self.out.append(Reference(name, role, line, end, "", scope, qualifier))


def _written(node: ast.expr) -> str:
    """A receiver as written: names and attribute chains directly (most receivers; unparse
    costs as much as the rest of the walk), anything else unparsed."""
    if type(node) is ast.Name:
        return node.id
    if type(node) is ast.Attribute:
        return f"{_written(node.value)}.{node.attr}"
    return ast.unparse(node)
