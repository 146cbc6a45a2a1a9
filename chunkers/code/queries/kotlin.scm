; What Kotlin code declares and uses (capture names: chunkers/code/references.py).

(class_declaration name: (_) @name) @def.class
(object_declaration name: (_) @name) @def.object
(function_declaration name: (_) @name) @def.function

(call_expression . (identifier) @call)
(identifier) @value
