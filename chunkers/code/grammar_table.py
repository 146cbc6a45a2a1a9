"""One row per language chunked through a tree-sitter grammar from PyPI: which nodes are
declarations (and of what kind), which are containers split at their members, which are
transparent (their contents planned one by one), which wrap one declaration, where comments
and doc comments sit, and which nodes import. `chunkers.code.grammar_syntax` reads a row;
adding a language is a row here, an extension in `chunkers.sources.file_types`, and a
fixture. Node types were checked against the pinned grammars by parsing the fixtures in
tests/fixtures/polyglot (see tests/chunkers/test_code_languages.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from chunkers.code.units import CommentRules


@dataclass(frozen=True)
class LanguageSpec:
    name: str
    grammar: tuple[str, str]  # module and function returning the tree-sitter language
    declarations: Mapping[str, str]  # node type -> kind
    comments: CommentRules
    # Declaration node types whose members are split when the whole is over the hard limit,
    # found as the body below; the members of `self_bodies` are the node's own children.
    bodies: frozenset[str] = frozenset()
    self_bodies: frozenset[str] = frozenset()
    # Where a declaration's signature (its header) ends: the first child of these types.
    signature_ends: frozenset[str] = frozenset()
    # Nodes whose children are planned as if they stood where the node stands (include
    # guards, namespaces, `extern "C"`, Ruby modules); the node's name becomes the
    # `container` of what is declared inside (nested ones joined by `::`).
    transparent: frozenset[str] = frozenset()
    wrappers: frozenset[str] = frozenset()  # `export ...`, `template <...> ...`
    imports: frozenset[str] = frozenset()
    # Macros the grammar trips on, rewritten before parsing only, byte for byte (the same
    # length keeps every offset valid in the original text): a pattern with a `name` group
    # reads as `enum name`, one with a `signature` group as the method `- (void)signature`,
    # any other is blanked.
    masks: tuple[re.Pattern[bytes], ...] = field(default_factory=tuple)
    # The query file (chunkers/code/queries/<name>.scm) saying what the language's code
    # declares and uses (chunkers.code.references); "" for none.
    references: str = ""


_C_COMMENTS = CommentRules(
    types=frozenset({"comment"}),
    doc_prefixes=(b"///", b"/**", b"/*!", b"//!"),
    closers=frozenset({"}", "#endif", ";"}),
)
_C_DECLARATIONS = {
    "function_definition": "function",
    "declaration": "variable",  # "function" for a prototype, see grammar_syntax._kind
    "type_definition": "typedef",
    "struct_specifier": "struct",
    "union_specifier": "union",
    "enum_specifier": "enum",
    "preproc_function_def": "macro",
}
_C_BODIES = frozenset({"field_declaration_list", "enumerator_list"})
_C_ENDS = frozenset({"compound_statement", "field_declaration_list", "enumerator_list", "="})
_PREPROCESSOR = frozenset({"preproc_ifdef", "preproc_if", "preproc_else", "preproc_elif"})
_INCLUDES = frozenset({"preproc_include", "module_import"})

C = LanguageSpec(
    name="c",
    references="c",
    grammar=("tree_sitter_c", "language"),
    declarations=_C_DECLARATIONS,
    comments=_C_COMMENTS,
    bodies=_C_BODIES,
    signature_ends=_C_ENDS,
    transparent=_PREPROCESSOR | {"linkage_specification"},
    imports=_INCLUDES,
)

CPP = LanguageSpec(
    name="cpp",
    references="cpp",
    grammar=("tree_sitter_cpp", "language"),
    declarations={
        **_C_DECLARATIONS,
        "class_specifier": "class",
        "alias_declaration": "typealias",
        "concept_definition": "concept",
    },
    comments=_C_COMMENTS,
    bodies=_C_BODIES,
    signature_ends=_C_ENDS | {"field_initializer_list"},
    transparent=_PREPROCESSOR | {"namespace_definition", "linkage_specification"},
    wrappers=frozenset({"template_declaration"}),
    imports=_INCLUDES,
)

# NS_ENUM(NSInteger, Name) and its kin read as `enum Name` (the name kept where it was).
_NS_ENUM = re.compile(
    rb"\b(?:NS_ENUM|NS_OPTIONS|NS_CLOSED_ENUM|NS_ERROR_ENUM|NS_TYPED_ENUM)\s*\([^(),]*,\s*"
    rb"(?P<name>\w+)\s*\)"
)
_NONNULL_REGION = re.compile(rb"\bNS_ASSUME_NONNULL_(?:BEGIN|END)\b")
# A region macro alone on its line (`RCT_EXTERN_C_BEGIN`, `FOUNDATION_EXTERN_C_END`): the
# grammar reads it as the start of a declaration and loses the lines after it.
_REGION_MACRO = re.compile(rb"(?m)^[ \t]*[A-Z][A-Z0-9_]*_(?:BEGIN|END)[ \t]*$")
# A linkage macro before a declaration (`RCT_EXTERN NSString *const X;`, `FOUNDATION_EXPORT`):
# read as a type, it leaves the declaration unparsed.
_LINKAGE_MACRO = re.compile(rb"(?m)^[ \t]*[A-Z][A-Z0-9_]*_(?:EXTERN|EXPORT)(?=[ \t]+\w)")
# A macro that defines a method from the selector it is given, then the body
# (`RCT_EXPORT_METHOD(focus : (nonnull NSNumber *)tag) {`, `RCT_REMAP_METHOD(js, sel:(id)x)`:
# React Native's exported methods, which expand to that method): left as a call, it is no
# declaration the grammar knows, and error recovery loses the rest of the file. It reads as
# `- (void)` and the selector; an argument before a comma (a remap's JavaScript name, a
# return type) is blanked. Parentheses nest two deep (`(void (^)(id))block`).
_METHOD_MACRO = re.compile(
    rb"(?m)^[ \t]*[A-Z][A-Z0-9_]*_METHOD\((?:[^(),{};:]*,)?"
    rb"(?P<signature>(?:[^(){};]|\((?:[^()]|\([^()]*\))*\))*)\)(?=\s*\{)"
)
_OBJC_MEMBERS = frozenset(
    {
        "method_declaration",
        "method_definition",
        "implementation_definition",
        "property_declaration",
        "property_implementation",
        "qualified_protocol_interface_declaration",
        "instance_variables",
        "comment",
    }
)

OBJC = LanguageSpec(
    name="objc",
    references="objc",
    grammar=("tree_sitter_objc", "language"),
    declarations={
        **_C_DECLARATIONS,
        "class_interface": "interface",
        "class_implementation": "implementation",
        "category_interface": "interface",
        "category_implementation": "implementation",
        "protocol_declaration": "protocol",
    },
    comments=_C_COMMENTS,
    bodies=_C_BODIES,
    self_bodies=frozenset(
        {
            "class_interface",
            "class_implementation",
            "category_interface",
            "category_implementation",
            "protocol_declaration",
        }
    ),
    signature_ends=_C_ENDS | _OBJC_MEMBERS,
    transparent=_PREPROCESSOR | {"linkage_specification"},
    imports=_INCLUDES,
    masks=(_NS_ENUM, _NONNULL_REGION, _REGION_MACRO, _LINKAGE_MACRO, _METHOD_MACRO),
)

_JS_DECLARATIONS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "lexical_declaration": "variable",  # "function" when it binds an arrow function
    "variable_declaration": "variable",
}
_JS_COMMENTS = CommentRules(
    types=frozenset({"comment"}), doc_prefixes=(b"/**",), closers=frozenset({"}", ";"})
)
_JS_ENDS = frozenset({"statement_block", "class_body", "interface_body", "enum_body", "="})

JAVASCRIPT = LanguageSpec(
    name="javascript",
    references="javascript",
    grammar=("tree_sitter_javascript", "language"),
    declarations=_JS_DECLARATIONS,
    comments=_JS_COMMENTS,
    bodies=frozenset({"class_body"}),
    signature_ends=_JS_ENDS,
    wrappers=frozenset({"export_statement"}),
    imports=frozenset({"import_statement"}),
)

_TS_DECLARATIONS = {
    **_JS_DECLARATIONS,
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
    "type_alias_declaration": "typealias",
    "enum_declaration": "enum",
    "function_signature": "function",
    "internal_module": "namespace",
    "module": "namespace",
}
TYPESCRIPT = LanguageSpec(
    name="typescript",
    references="typescript",
    grammar=("tree_sitter_typescript", "language_typescript"),
    declarations=_TS_DECLARATIONS,
    comments=_JS_COMMENTS,
    bodies=frozenset({"class_body", "interface_body", "enum_body"}),
    signature_ends=_JS_ENDS,
    wrappers=frozenset({"export_statement", "ambient_declaration"}),
    imports=frozenset({"import_statement"}),
)
TSX = replace(
    TYPESCRIPT,
    name="tsx",
    references="tsx",
    grammar=("tree_sitter_typescript", "language_tsx"),
)
JSX = replace(JAVASCRIPT, name="jsx")

GO = LanguageSpec(
    name="go",
    references="go",
    grammar=("tree_sitter_go", "language"),
    declarations={
        "function_declaration": "function",
        "method_declaration": "method",
        "type_declaration": "type",
        "var_declaration": "variable",
        "const_declaration": "constant",
    },
    # Go's doc comments are the plain comments directly above a declaration.
    comments=CommentRules(types=frozenset({"comment"}), doc_prefixes=(b"//", b"/*")),
    signature_ends=frozenset({"block", "field_declaration_list", "method_spec_list", "="}),
    imports=frozenset({"import_declaration"}),
)

RUST = LanguageSpec(
    name="rust",
    references="rust",
    grammar=("tree_sitter_rust", "language"),
    declarations={
        "function_item": "function",
        "function_signature_item": "function",
        "struct_item": "struct",
        "enum_item": "enum",
        "union_item": "union",
        "trait_item": "trait",
        "impl_item": "impl",
        "type_item": "typealias",
        "const_item": "constant",
        "static_item": "variable",
        "macro_definition": "macro",
        "mod_item": "module",  # `mod name;`; a module with a body is transparent
    },
    comments=CommentRules(
        types=frozenset({"line_comment", "block_comment"}),
        doc_prefixes=(b"///", b"/**"),
        attached=frozenset({"attribute_item"}),
        closers=frozenset({"}"}),
    ),
    bodies=frozenset({"declaration_list", "field_declaration_list", "enum_variant_list"}),
    signature_ends=frozenset(
        {"block", "declaration_list", "field_declaration_list", "enum_variant_list", "="}
    ),
    transparent=frozenset({"mod_item"}),
    imports=frozenset({"use_declaration", "extern_crate_declaration"}),
)

RUBY = LanguageSpec(
    name="ruby",
    references="ruby",
    grammar=("tree_sitter_ruby", "language"),
    declarations={
        "class": "class",
        "singleton_class": "class",
        "method": "method",
        "singleton_method": "method",
    },
    comments=CommentRules(
        types=frozenset({"comment"}), doc_prefixes=(b"#",), closers=frozenset({"end"})
    ),
    bodies=frozenset({"body_statement"}),
    signature_ends=frozenset({"body_statement"}),
    transparent=frozenset({"module"}),
    imports=frozenset({"call"}),  # require / require_relative, see grammar_syntax
)

_JAVA_COMMENTS = CommentRules(
    types=frozenset({"line_comment", "block_comment"}),
    doc_prefixes=(b"/**",),
    closers=frozenset({"}"}),
)

JAVA = LanguageSpec(
    name="java",
    references="java",
    grammar=("tree_sitter_java", "language"),
    declarations={
        "class_declaration": "class",
        "interface_declaration": "interface",
        "enum_declaration": "enum",
        "record_declaration": "record",
        "annotation_type_declaration": "annotation",
    },
    comments=_JAVA_COMMENTS,
    bodies=frozenset({"class_body", "interface_body", "enum_body", "annotation_type_body"}),
    signature_ends=frozenset(
        {"class_body", "interface_body", "enum_body", "annotation_type_body", "block"}
    ),
    imports=frozenset({"import_declaration"}),
)

KOTLIN = LanguageSpec(
    name="kotlin",
    references="kotlin",
    grammar=("tree_sitter_kotlin", "language"),
    declarations={
        "class_declaration": "class",
        "object_declaration": "object",
        "function_declaration": "function",
        "property_declaration": "variable",
        "type_alias": "typealias",
    },
    comments=_JAVA_COMMENTS,
    bodies=frozenset({"class_body", "enum_class_body"}),
    signature_ends=frozenset({"class_body", "enum_class_body", "function_body", "block", "="}),
    imports=frozenset({"import"}),
)

BASH = LanguageSpec(
    name="bash",
    references="bash",
    grammar=("tree_sitter_bash", "language"),
    declarations={"function_definition": "function"},
    comments=CommentRules(types=frozenset({"comment"}), doc_prefixes=(b"#",)),
    signature_ends=frozenset({"compound_statement", "subshell", "test_command"}),
)

# Metal's shading language is C++ with attributes; the C++ grammar reads its declarations.
METAL = replace(CPP, name="metal")

LANGUAGE_SPECS: dict[str, LanguageSpec] = {
    spec.name: spec
    for spec in (
        C,
        CPP,
        OBJC,
        JAVASCRIPT,
        JSX,
        TYPESCRIPT,
        TSX,
        GO,
        RUST,
        RUBY,
        JAVA,
        KOTLIN,
        BASH,
        METAL,
    )
}
