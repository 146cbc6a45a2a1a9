; inherits: typescript jsx
; TSX: TypeScript with JSX (capture names: chunkers/code/references.py).
