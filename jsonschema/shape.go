package jsonschema

// StringObject reports whether v asserts nothing but this: the instance is
// an object whose members are all declared properties, each a string. It
// returns the properties, mapped to whether they are required. A decoder
// that checks exactly that as it goes (jsonfast.DecodeStringFields) can
// then stand in for v, which spares a pass over the arguments of the most
// common kind of tool.
func (v *Validator) StringObject() (props map[string]bool, ok bool) {
	n := v.fast
	if n == nil || !n.onlyChecks(tObject) || n.additional == nil || !n.additional.never ||
		n.minProps >= 0 || n.maxProps >= 0 {
		return nil, false
	}
	props = make(map[string]bool, len(n.props))
	for _, p := range n.props {
		if !p.declared || p.node == nil || !p.node.onlyChecks(tString) || p.node.hasObjectChecks {
			return nil, false
		}
		props[p.name] = p.required
	}
	return props, true
}

// onlyChecks reports whether n asserts the types t and nothing else, but
// for object keywords, which the caller looks at itself.
func (n *node) onlyChecks(t uint8) bool {
	return !n.never && n.ref == nil && n.orNull == nil && n.types == t && !n.hasEnum && !n.isConst &&
		!n.hasNumeric && n.minLength < 0 && n.maxLength < 0 && n.pattern == nil &&
		n.prefixItems == nil && n.items == nil && n.minItems < 0 && n.maxItems < 0 && !n.uniqueItems
}
