; What Ruby code declares and uses (capture names: chunkers/code/references.py).

(class name: (constant) @name) @def.class
(module name: (constant) @name) @def.module
(method name: (_) @name) @def.method
(singleton_method name: (_) @name) @def.method

(superclass (constant) @inherit)
(call receiver: (_) @qualifier method: (identifier) @call)
(call method: (identifier) @call)
(constant) @type
(identifier) @value
