; What JSX adds to JavaScript and TypeScript (capture names: chunkers/code/references.py):
; javascript.scm and tsx.scm inherit these patterns (the grammars of .js and .tsx read JSX).

(jsx_opening_element name: (identifier) @value)
(jsx_self_closing_element name: (identifier) @value)
(jsx_expression (identifier) @value)
