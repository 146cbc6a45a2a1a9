"""Code chunkers: Swift with tree-sitter, Python with `ast`; declarations with their symbols."""
