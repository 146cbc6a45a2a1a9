; What Ruby code declares and uses (capture names: chunkers/code/references.py).

(class name: (constant) @name) @def.class
(module name: (constant) @name) @def.module
(method name: (_) @name) @def.method
(singleton_method name: (_) @name) @def.method

(superclass (constant) @inherit)
(call receiver: (_) @qualifier method: (identifier) @call)
(call method: (identifier) @call)
(constant) @type
; A bare name read where an expression goes, not every identifier (parameters and assigned
; names are no uses; recording them tripled extraction's cost).
(argument_list (identifier) @value)
(assignment right: (identifier) @value)
(binary [left: (identifier) @value right: (identifier) @value])
