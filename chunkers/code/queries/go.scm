; What Go code declares and uses (capture names: chunkers/code/references.py).

(function_declaration name: (identifier) @name) @def.function
(method_declaration name: (field_identifier) @name) @def.method
(type_spec name: (type_identifier) @name type: (struct_type)) @def.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @def.interface
(type_spec name: (type_identifier) @name) @def.type
(method_elem name: (field_identifier) @name) @def.method

(import_spec path: (interpreted_string_literal) @import)

(call_expression function: (identifier) @call)
(call_expression
  function: (selector_expression operand: (_) @qualifier field: (field_identifier) @call))
(selector_expression operand: (_) @qualifier field: (field_identifier) @member)

(type_identifier) @type
; A bare name read where an expression goes, not every identifier (declared names and
; parameters are no uses; recording them tripled extraction's cost).
(argument_list (identifier) @value)
(selector_expression operand: (identifier) @value)
(expression_list (identifier) @value)
(binary_expression [left: (identifier) @value right: (identifier) @value])
(literal_element (identifier) @value)
