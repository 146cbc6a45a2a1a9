; inherits: ecmascript jsx
; What JavaScript adds (capture names: chunkers/code/references.py).

(class_heritage (identifier) @inherit)
