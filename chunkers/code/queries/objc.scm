; inherits: c
; What Objective-C adds to C (capture names: chunkers/code/references.py). Class, protocol
; and method names are built in Python: a selector is spread over several nodes.

(class_interface) @def.interface
(class_implementation) @def.implementation
(protocol_declaration) @def.protocol
; `@interface RCTBridge (RCTImageLoader)`: the category's own name (by custom, the module
; whose additions it holds), no use of a declaration of that name.
(class_interface category: (identifier) @category)
(class_implementation category: (identifier) @category)
; A method's parameter names, `- (void)focus:(NSNumber *)tag` (its keywords are the selector).
(method_parameter (identifier) @param)
(method_definition) @def.method
(method_declaration) @def.method
(property_declaration
  (struct_declaration (struct_declarator (pointer_declarator
    declarator: (identifier) @name (#not-match? @name "^[A-Z][A-Z0-9_]+$"))))) @def.property
(property_declaration
  (struct_declaration (struct_declarator (identifier) @name (#not-match? @name "^[A-Z][A-Z0-9_]+$")))) @def.property
; `@property dispatch_queue_t methodQueue RCT_DEPRECATED;`: an attribute macro after the name
; (all capitals) makes the grammar read the name as a second type.
(property_declaration
  (struct_declaration (type_identifier) . (type_identifier) @name
    . (struct_declarator (identifier) @macro (#match? @macro "^[A-Z][A-Z0-9_]+$")))) @def.property
; ... and `NSString *label APP_DEPRECATED;` leaves the name in an error node.
(property_declaration
  (struct_declaration (struct_declarator (pointer_declarator
    (ERROR (identifier) @name)
    declarator: (identifier) @macro (#match? @macro "^[A-Z][A-Z0-9_]+$"))))) @def.property

; `@interface A : B <P, Q>`
(class_interface superclass: (identifier) @inherit)
(class_interface (parameterized_arguments (type_name (type_identifier) @inherit)))
(protocol_declaration (protocol_reference_list (identifier) @inherit))
; `@class A;`, `@protocol P;` and `id<P>`: uses of the class and the protocol.
(class_declaration (identifier) @type)
(protocol_forward_declaration (identifier) @type)
(protocol_reference_list (identifier) @type)
; `@synthesize name = _name;` implements the property `name`.
(property_implementation . (identifier) @member)

; [receiver keyword:arg other:arg] and @selector(keyword:other:)
(message_expression receiver: (_) @qualifier) @send
(selector_expression) @selector
; `[RCTBridge currentBridge]`: the class (or variable) a message goes to is used.
(message_expression receiver: (identifier) @value)
; ... and the arguments it passes (its keywords are part of the selector, not uses).
(message_expression (identifier) @value)
(array_literal (identifier) @value)
(dictionary_pair (identifier) @value)
