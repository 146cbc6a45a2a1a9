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
; Properties of a type or the file; a function's locals are no declarations to navigate to.
(class_body
  (property_declaration name: (pattern bound_identifier: (simple_identifier) @name)) @def.property)
(enum_class_body
  (property_declaration name: (pattern bound_identifier: (simple_identifier) @name)) @def.property)
(source_file
  (property_declaration name: (pattern bound_identifier: (simple_identifier) @name)) @def.property)
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

; A bare name read where an expression goes: an argument, `Type.member`'s type, `.case`,
; an operand, a returned or assigned value. Not every identifier: parameter names, argument
; labels and local bindings are no uses, and recording them tripled extraction's cost.
(value_argument value: (simple_identifier) @value)
(navigation_expression target: (simple_identifier) @value)
(prefix_expression target: (simple_identifier) @value)
(property_declaration value: (simple_identifier) @value)
(assignment result: (simple_identifier) @value)
(directly_assignable_expression (simple_identifier) @value)
(control_transfer_statement result: (simple_identifier) @value)
; Operands of the binary operators (+, *, <, ==, &&, ...), whose fields are lhs and rhs.
(_ lhs: (simple_identifier) @value)
(_ rhs: (simple_identifier) @value)
