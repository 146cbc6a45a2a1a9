; What shell scripts declare and use (capture names: chunkers/code/references.py).

(function_definition name: (word) @name) @def.function
(command name: (command_name (word) @call))
