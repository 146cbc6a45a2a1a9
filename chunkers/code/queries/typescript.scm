; inherits: ecmascript
; What TypeScript adds (capture names: chunkers/code/references.py).

(abstract_class_declaration name: (type_identifier) @name) @def.class
(interface_declaration name: (type_identifier) @name) @def.interface
(type_alias_declaration name: (type_identifier) @name) @def.typealias
(enum_declaration name: (identifier) @name) @def.enum
(function_signature name: (identifier) @name) @def.function
(method_signature name: (property_identifier) @name) @def.method
(public_field_definition name: (property_identifier) @name) @def.property

(class_heritage (extends_clause value: (identifier) @inherit))
(implements_clause (type_identifier) @inherit)
(extends_type_clause (type_identifier) @inherit)

(type_identifier) @type
