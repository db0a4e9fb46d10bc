package schemas

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Shape is what a reader reads from a JSON value: for an object decoded into a struct, its field
// names (each with the shape of its value); for a map, the shape of its values; for an array, the
// shape of its items. A nil *Shape is a value the reader does not look into (a string, a number,
// json.RawMessage kept as bytes).
//
// encoding/json matches object keys to struct fields case-insensitively (bytes.EqualFold), while
// the schemas match them exactly. CheckFold walks a decoded document against a Shape and refuses
// every key that equals a field only under case folding: after it, a file reads the same to the
// schema and to Go (SPEC §2 invariant 8).
type Shape struct {
	Fields map[string]*Shape // object read into a struct: its exact field names
	Map    bool              // object read into a map: Elem is the shape of every value
	Elem   *Shape            // array items, or map values when Map
}

// Shaper is implemented by a type whose UnmarshalJSON reads names other than its json tags (an
// alternative form, a renamed raw struct): it says what it reads.
type Shaper interface {
	JSONShape() *Shape
}

// ShapeOf returns the shape encoding/json reads into values of type t: exported struct fields by
// their json tag (or Go name when untagged), embedded structs promoted, "-" skipped. A type that
// implements Shaper (on its value or its pointer) gives its own shape. It walks t each time: a
// reader keeps the shape of the type it reads in a package-level value (ShapeFor), computed once.
func ShapeOf(t reflect.Type) *Shape {
	return shapeOf(t, map[reflect.Type]*Shape{})
}

var (
	shaperType   = reflect.TypeFor[Shaper]()
	rawType      = reflect.TypeFor[json.RawMessage]()
	numberType   = reflect.TypeFor[json.Number]()
	unmarshalerT = reflect.TypeFor[json.Unmarshaler]()
)

// ShapeFor returns a function that gives the shape of T (ShapeOf), computed on its first call: a
// reader's package-level value, so that the shape of the type it reads is computed once.
func ShapeFor[T any]() func() *Shape {
	return sync.OnceValue(func() *Shape { return ShapeOf(reflect.TypeFor[T]()) })
}

func shapeOf(t reflect.Type, busy map[reflect.Type]*Shape) *Shape {
	if s, ok := busy[t]; ok {
		return s // a recursive type: the shape being built
	}
	if t.Implements(shaperType) || reflect.PointerTo(t).Implements(shaperType) {
		var v reflect.Value
		if t.Kind() == reflect.Pointer {
			v = reflect.New(t.Elem())
		} else {
			v = reflect.New(t)
		}
		sh, _ := v.Interface().(Shaper)
		if sh == nil {
			sh, _ = v.Elem().Interface().(Shaper)
		}
		if sh != nil {
			return sh.JSONShape()
		}
	}
	if t == rawType || t == numberType {
		return nil
	}
	var s *Shape
	switch t.Kind() {
	case reflect.Pointer:
		s = shapeOf(t.Elem(), busy)
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil // []byte is a base64 string
		}
		s = &Shape{}
		busy[t] = s
		s.Elem = shapeOf(t.Elem(), busy)
	case reflect.Map:
		s = &Shape{Map: true}
		busy[t] = s
		s.Elem = shapeOf(t.Elem(), busy)
	case reflect.Struct:
		s = &Shape{Fields: map[string]*Shape{}}
		busy[t] = s
		addFields(s, t, busy)
	default:
		return nil
	}
	delete(busy, t)
	return s
}

func addFields(s *Shape, t reflect.Type, busy map[reflect.Type]*Shape) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && !reflect.PointerTo(ft).Implements(unmarshalerT) {
				addFields(s, ft, busy)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := s.Fields[name]; !dup {
			s.Fields[name] = shapeOf(f.Type, busy)
		}
	}
}

// Object returns the shape of an object read into a struct with the given fields.
func Object(fields map[string]*Shape) *Shape { return &Shape{Fields: fields} }

// ArrayOf returns the shape of an array whose items have shape item.
func ArrayOf(item *Shape) *Shape { return &Shape{Elem: item} }

// FoldProblems walks doc (as returned by Decode) against s and returns one problem for every
// object key that is not one of the shape's field names but equals one under case folding, at the
// key's own pointer. Keys of maps are data, not names, and are never compared.
func FoldProblems(doc any, s *Shape) []Problem {
	var out []Problem
	var walk func(v any, s *Shape, at string)
	walk = func(v any, s *Shape, at string) {
		if s == nil {
			return
		}
		switch c := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(c))
			for k := range c {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				ptr := at + "/" + escapePointer(k)
				if s.Map {
					walk(c[k], s.Elem, ptr)
					continue
				}
				if s.Fields == nil {
					continue
				}
				if fs, ok := s.Fields[k]; ok {
					walk(c[k], fs, ptr)
					continue
				}
				for name := range s.Fields {
					if strings.EqualFold(k, name) {
						out = append(out, Problem{Pointer: ptr, Message: fmt.Sprintf(
							"key %q differs from the field %q only by letter case: JSON names are case-sensitive", k, name)})
						break
					}
				}
			}
		case []any:
			for i, item := range c {
				walk(item, s.Elem, fmt.Sprintf("%s/%d", at, i))
			}
		}
	}
	walk(doc, s, "")
	sort.SliceStable(out, func(i, j int) bool { return comparePointers(out[i].Pointer, out[j].Pointer) < 0 })
	return out
}

// DecodeExact is how geas reads a JSON file into a Go value: data must be one well-formed UTF-8
// JSON value without duplicate keys (Decode), must match the schema of kind k when k is not empty,
// and must not hold a key that equals a field of dst only under case folding; then it is decoded
// into dst. The result is a *SyntaxError or a *ValidationError naming file and pointer.
//
// The shape of dst is computed on each call; a reader of one type calls DecodeExactAs with the
// shape it keeps (ShapeFor).
func DecodeExact(k Kind, file string, data []byte, dst any) error {
	return DecodeExactAs(k, file, data, dst, ShapeOf(reflect.TypeOf(dst)))
}

// DecodeExactAs is DecodeExact with the shape of dst given: s must be ShapeOf(dst's type).
func DecodeExactAs(k Kind, file string, data []byte, dst any, s *Shape) error {
	doc, err := DecodeShaped(k, file, data, s)
	if err != nil {
		return err
	}
	if k != "" {
		if err := ValidateValue(k, file, doc); err != nil {
			return err
		}
	}
	if err := json.Unmarshal(data, dst); err != nil {
		return &ValidationError{File: file, Kind: k, Problems: []Problem{{Message: err.Error()}}}
	}
	return nil
}

// DecodeFor is Decode followed by CheckExact for a value of type t, in one pass over data.
func DecodeFor(k Kind, file string, data []byte, t reflect.Type) (any, error) {
	return DecodeShaped(k, file, data, ShapeOf(t))
}

// DecodeShaped is DecodeFor with the shape of the type read given (ShapeOf, ShapeFor).
func DecodeShaped(k Kind, file string, data []byte, s *Shape) (any, error) {
	s = withSchemaKey(k, s)
	doc, folds, ok := parse(data, s)
	if !ok {
		var err error
		if doc, err = decodeStd(file, data); err != nil {
			return nil, err
		}
		folds = FoldProblems(doc, s)
	}
	if len(folds) > 0 {
		sort.SliceStable(folds, func(i, j int) bool { return comparePointers(folds[i].Pointer, folds[j].Pointer) < 0 })
		return nil, &ValidationError{File: file, Kind: k, Problems: folds}
	}
	return doc, nil
}

// CheckExact returns a *ValidationError when doc holds a key that differs from a field read into a
// value of type t only by letter case.
func CheckExact(k Kind, file string, doc any, t reflect.Type) error {
	if probs := FoldProblems(doc, ShapeOf(t)); len(probs) > 0 {
		return &ValidationError{File: file, Kind: k, Problems: probs}
	}
	return nil
}

// SchemaKey is the top-level key by which a file names its JSON Schema, for an editor to bind it.
// The kinds people and agents write (UserWritten) accept it at the top level only, as a string,
// and geas ignores it: it is not a rule (the rules digest leaves it out) and no Go field reads it.
const SchemaKey = "$schema"

// UserWritten returns the kinds whose files people and agents write, each of which accepts a
// top-level SchemaKey. Record and events are geas's own and stay closed.
func UserWritten() []Kind { return []Kind{Contract, GatePolicy, Evidence, Decision, DebtRegister} }

// withSchemaKey returns s with SchemaKey among its top-level fields when kind k accepts it, so that
// the case-folding check refuses "$Schema" as a near miss of "$schema" (the schema alone would name
// it only as an unknown property, and evidence, an open object, would not refuse it at all). The
// copy is of the top level only, a few dozen map entries, and is not kept.
func withSchemaKey(k Kind, s *Shape) *Shape {
	if s == nil || s.Fields == nil || !slices.Contains(UserWritten(), k) {
		return s
	}
	if _, ok := s.Fields[SchemaKey]; ok {
		return s
	}
	fields := make(map[string]*Shape, len(s.Fields)+1)
	for name, fs := range s.Fields {
		fields[name] = fs
	}
	fields[SchemaKey] = nil
	return &Shape{Fields: fields, Map: s.Map, Elem: s.Elem} // a copy of one level: the caller's stays as it is
}
