; inherits: c
; What Objective-C adds to C (capture names: chunkers/code/references.py). Class, protocol
; and method names are built in Python: a selector is spread over several nodes.

(class_interface) @def.interface
(class_implementation) @def.implementation
(protocol_declaration) @def.protocol
(method_definition) @def.method
(method_declaration) @def.method
(property_declaration
  (struct_declaration (struct_declarator (pointer_declarator declarator: (identifier) @name)))) @def.property
(property_declaration
  (struct_declaration (struct_declarator (identifier) @name))) @def.property

; `@interface A : B <P, Q>`
(class_interface superclass: (identifier) @inherit)
(class_interface (parameterized_arguments (type_name (type_identifier) @inherit)))
(protocol_declaration (protocol_reference_list (identifier) @inherit))

; [receiver keyword:arg other:arg] and @selector(keyword:other:)
(message_expression receiver: (_) @qualifier) @send
(selector_expression) @selector
; `[RCTBridge currentBridge]`: the class (or variable) a message goes to is used.
(message_expression receiver: (identifier) @value)
