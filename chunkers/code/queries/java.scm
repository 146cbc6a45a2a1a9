; What Java code declares and uses (capture names: chunkers/code/references.py).

(class_declaration name: (identifier) @name) @def.class
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(record_declaration name: (identifier) @name) @def.record
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.init

(import_declaration (scoped_identifier name: (identifier) @import))
(superclass (type_identifier) @inherit)
(super_interfaces (type_list (type_identifier) @inherit))

(method_invocation object: (_) @qualifier name: (identifier) @call)
(method_invocation name: (identifier) @call)
(object_creation_expression type: (type_identifier) @call)
(field_access object: (_) @qualifier field: (identifier) @member)

(type_identifier) @type
; A bare name read where an expression goes, not every identifier (declared names and
; parameters are no uses; recording them tripled extraction's cost).
(argument_list (identifier) @value)
(method_invocation object: (identifier) @value)
(field_access object: (identifier) @value)
(assignment_expression right: (identifier) @value)
(variable_declarator value: (identifier) @value)
(return_statement (identifier) @value)
(binary_expression [left: (identifier) @value right: (identifier) @value])
