; What Kotlin code declares and uses (capture names: chunkers/code/references.py).

(class_declaration name: (_) @name) @def.class
(object_declaration name: (_) @name) @def.object
(function_declaration name: (_) @name) @def.function

(call_expression . (identifier) @call)
; A bare name read where an expression goes, not every identifier (declared names and
; parameters are no uses; recording them tripled extraction's cost).
(value_argument (identifier) @value)
(navigation_expression . (identifier) @value)
