; inherits: c
; What C++ adds to C (capture names: chunkers/code/references.py).

(class_specifier name: (type_identifier) @name body: (_)) @def.class
(struct_specifier name: (type_identifier) @name body: (_)) @def.struct
(function_definition
  declarator: (function_declarator declarator: (field_identifier) @name)) @def.method
(function_definition
  declarator: (function_declarator
    declarator: (qualified_identifier name: (identifier) @name))) @def.method
(field_declaration declarator: (function_declarator declarator: (field_identifier) @name)) @def.method
(alias_declaration name: (type_identifier) @name) @def.typealias

(base_class_clause (type_identifier) @inherit)
(call_expression
  function: (qualified_identifier scope: (_) @qualifier name: (identifier) @call))
(namespace_identifier) @type
