; What Swift code declares and uses (capture names: chunkers/code/references.py).

(class_declaration declaration_kind: "class" name: (type_identifier) @name) @def.class
(class_declaration declaration_kind: "struct" name: (type_identifier) @name) @def.struct
(class_declaration declaration_kind: "enum" name: (type_identifier) @name) @def.enum
(class_declaration declaration_kind: "actor" name: (type_identifier) @name) @def.actor
(class_declaration
  declaration_kind: "extension"
  name: (user_type (type_identifier) @name)) @def.extension
(protocol_declaration name: (type_identifier) @name) @def.protocol
(function_declaration name: (simple_identifier) @name) @def.function
(protocol_function_declaration name: (simple_identifier) @name) @def.function
(property_declaration name: (pattern bound_identifier: (simple_identifier) @name)) @def.property
(protocol_property_declaration name: (pattern bound_identifier: (simple_identifier) @name)) @def.property
(typealias_declaration name: (type_identifier) @name) @def.typealias
(enum_entry name: (simple_identifier) @name) @def.case

(import_declaration (identifier (simple_identifier) @import))

; Conformance and inheritance: `class A: B, P`, `extension A: P`.
(inheritance_specifier inherits_from: (user_type (type_identifier) @inherit))

; f(), Type(), self.f(), a.b.f()
(call_expression . (simple_identifier) @call)
(call_expression
  . (navigation_expression
      target: (_) @qualifier
      suffix: (navigation_suffix suffix: (simple_identifier) @call)))

(navigation_expression
  target: (_) @qualifier
  suffix: (navigation_suffix suffix: (simple_identifier) @member))

(user_type (type_identifier) @type)

(simple_identifier) @value
