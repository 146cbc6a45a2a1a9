; What JavaScript and TypeScript code declare and use alike (capture names:
; chunkers/code/references.py); javascript.scm and typescript.scm inherit these patterns.

(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(class_declaration name: (_) @name) @def.class
(method_definition name: (property_identifier) @name) @def.method
(variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @def.function

; import { a as b } from "m": later uses of `b` are uses of `a`.
(import_specifier name: (identifier) @import alias: (identifier) @alias)
(import_specifier name: (identifier) @import)
(import_clause (identifier) @import)
(namespace_import (identifier) @import)


(call_expression function: (identifier) @call)
(call_expression
  function: (member_expression object: (_) @qualifier property: (property_identifier) @call))
(new_expression constructor: (identifier) @call)
(member_expression object: (_) @qualifier property: (property_identifier) @member)

; A bare name read where an expression goes (an argument, an object whose member is read,
; a value assigned or returned), not every identifier: declared names and
; parameters are no uses, and recording them tripled extraction's cost.
(arguments (identifier) @value)
(member_expression object: (identifier) @value)
(variable_declarator value: (identifier) @value)
(assignment_expression right: (identifier) @value)
(return_statement (identifier) @value)
(pair value: (identifier) @value)
(array (identifier) @value)
(binary_expression [left: (identifier) @value right: (identifier) @value])
