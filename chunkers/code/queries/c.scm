; What C code declares and uses (capture names: chunkers/code/references.py). The
; Objective-C and C++ files inherit these patterns: their grammars extend C's.

(function_definition declarator: (function_declarator declarator: (identifier) @name)) @def.function
(function_definition
  declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @def.function
(declaration declarator: (function_declarator declarator: (identifier) @name)) @def.function
(declaration
  declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @def.function
(struct_specifier name: (type_identifier) @name body: (_)) @def.struct
(union_specifier name: (type_identifier) @name body: (_)) @def.union
(enum_specifier name: (type_identifier) @name body: (_)) @def.enum
(type_definition declarator: (type_identifier) @name) @def.typedef
(enumerator name: (identifier) @name) @def.case
(preproc_function_def name: (identifier) @name) @def.macro
(preproc_def name: (identifier) @name) @def.macro

(preproc_include path: (string_literal (string_content) @import))
(preproc_include path: (system_lib_string) @import)

(call_expression function: (identifier) @call)
(call_expression
  function: (field_expression argument: (_) @qualifier field: (field_identifier) @call))
(field_expression argument: (_) @qualifier field: (field_identifier) @member)

(type_identifier) @type
; A bare name read or assigned where an expression goes (an argument, an operand, a
; subscript, a condition, a value assigned, initialised, returned or switched on), not every
; identifier: a catch-all would also take declarators and labels, and recording every
; identifier tripled extraction's cost.
(argument_list (identifier) @value)
(binary_expression [left: (identifier) @value right: (identifier) @value])
(assignment_expression [left: (identifier) @value right: (identifier) @value])
(subscript_expression (identifier) @value)
(field_expression argument: (identifier) @value)
(unary_expression argument: (identifier) @value)
(parenthesized_expression (identifier) @value)
(conditional_expression [condition: (identifier) @value consequence: (identifier) @value
  alternative: (identifier) @value])
(init_declarator value: (identifier) @value)
(return_statement (identifier) @value)
(case_statement value: (identifier) @value)
(initializer_list (identifier) @value)

; A parameter's name where it is declared (`f(NSNumber *tag)`): no use of a declaration, but
; the name is written there, and reading it later is recorded as a `value`.
(parameter_declaration declarator: (identifier) @param)
(parameter_declaration declarator: (pointer_declarator declarator: (identifier) @param))

; What error recovery left unread (C++ in an Objective-C++ file, a macro the grammar takes for
; something else): each name directly under the error node, as a use of unknown kind.
(ERROR (identifier) @unparsed)
