; inherits: ecmascript
; What JavaScript adds (capture names: chunkers/code/references.py).

(class_heritage (identifier) @inherit)
