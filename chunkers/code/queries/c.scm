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
; A bare name read where an expression goes (an argument, an operand, a value assigned,
; initialised, returned or switched on), not every identifier: declarators and parameters
; are no uses, and recording them tripled extraction's cost.
(argument_list (identifier) @value)
(binary_expression [left: (identifier) @value right: (identifier) @value])
(assignment_expression right: (identifier) @value)
(init_declarator value: (identifier) @value)
(return_statement (identifier) @value)
(case_statement value: (identifier) @value)
(initializer_list (identifier) @value)
