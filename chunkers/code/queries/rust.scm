; What Rust code declares and uses (capture names: chunkers/code/references.py).

(function_item name: (identifier) @name) @def.function
(function_signature_item name: (identifier) @name) @def.function
(struct_item name: (type_identifier) @name) @def.struct
(enum_item name: (type_identifier) @name) @def.enum
(trait_item name: (type_identifier) @name) @def.trait
(impl_item type: (type_identifier) @name) @def.impl
(type_item name: (type_identifier) @name) @def.typealias
(macro_definition name: (identifier) @name) @def.macro

(use_declaration argument: (_) @import)
(impl_item trait: (type_identifier) @inherit)

(call_expression function: (identifier) @call)
(call_expression function: (field_expression value: (_) @qualifier field: (field_identifier) @call))
(call_expression function: (scoped_identifier path: (_) @qualifier name: (identifier) @call))
(field_expression value: (_) @qualifier field: (field_identifier) @member)
(macro_invocation macro: (identifier) @call)

(type_identifier) @type
; A bare name read where an expression goes, not every identifier (declared names, patterns
; and parameters are no uses; recording them tripled extraction's cost).
(arguments (identifier) @value)
(scoped_identifier path: (identifier) @value)
(let_declaration value: (identifier) @value)
(assignment_expression right: (identifier) @value)
(return_expression (identifier) @value)
(binary_expression [left: (identifier) @value right: (identifier) @value])
