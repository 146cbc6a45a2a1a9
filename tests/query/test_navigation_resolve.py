"""How a use of a name is resolved against the declarations of that name in the index
(query.navigation.resolve), one step at a time, on rows as the references table returns them."""

from __future__ import annotations

from query.navigation.resolve import Resolver, resolve


def row(path: str, role: str, scope: str = "", qualifier: str = "", line: int = 1) -> dict:
    return {"path": path, "role": role, "scope": scope, "qualifier": qualifier, "line": line}


IN_SHAPE = row("Shape.swift", "definition", "Shape", line=3)
IN_SPRITE = row("Sprite.swift", "definition", "Sprite", line=9)
DRAWS = [IN_SHAPE, IN_SPRITE]


def test_a_use_inside_a_type_that_declares_the_name_means_that_types_member():
    use = row("Shape.swift", "call", "Shape.render")
    assert resolve(use, DRAWS).describe() == {"resolved": "Shape.swift:3"}


def test_a_use_elsewhere_means_the_declaration_of_a_file_it_imports():
    use = row("Canvas.swift", "call", "Canvas.paint")
    assert resolve(use, DRAWS, imports=["Sprite"]).describe() == {"resolved": "Sprite.swift:9"}


def test_a_use_that_nothing_narrows_stays_ambiguous():
    use = row("Canvas.swift", "call", "Canvas.paint")
    assert resolve(use, DRAWS, imports=["Foundation"]).describe() == {"candidates": 2}


def test_a_use_on_a_types_name_means_that_types_member():
    use = row("Canvas.swift", "call", "Canvas.paint", qualifier="Sprite")
    assert resolve(use, DRAWS).describe() == {"resolved": "Sprite.swift:9"}


def test_a_read_of_a_parameter_in_its_own_declaration_names_the_parameter():
    read = row("Canvas.swift", "value", "Canvas.paint")
    parameters = {("Canvas.swift", "Canvas.paint")}
    assert resolve(read, DRAWS, parameters=parameters).describe() == {"names": "parameter"}
    elsewhere = row("Canvas.swift", "value", "Canvas.clear")
    assert resolve(elsewhere, DRAWS, parameters=parameters).describe() == {"candidates": 2}


def test_many_uses_resolve_alike_through_one_resolver_as_one_by_one():
    resolver = Resolver(DRAWS)
    uses = [
        row("Canvas.swift", "call", "Canvas.paint"),
        row("Shape.swift", "call", "Shape.render"),
        row("Canvas.swift", "call", "Canvas.paint", qualifier="shape"),
    ]
    for imports in ((), ("Sprite",)):
        together = [resolver.resolve(u, imports).describe() for u in uses]
        assert together == [resolve(u, DRAWS, imports).describe() for u in uses]


IN_PY_SHAPE = row("shapes.py", "definition", "Shape", line=2)


def test_a_use_never_means_a_declaration_in_a_language_its_file_cannot_call():
    use = row("app.py", "call", "main", qualifier="shape")
    assert resolve(use, [*DRAWS, IN_PY_SHAPE]).describe() == {"resolved": "shapes.py:2"}


def test_a_name_declared_only_in_other_languages_is_declared_nowhere_for_the_use():
    use = row("app.py", "call", "main", qualifier="shape")
    assert resolve(use, DRAWS).describe() == {"candidates": 0}


def test_objective_c_and_swift_call_each_other():
    use = row("Canvas.m", "send", "Canvas.paint", qualifier="shape")
    assert resolve(use, [*DRAWS, IN_PY_SHAPE]).describe() == {"candidates": 2}
