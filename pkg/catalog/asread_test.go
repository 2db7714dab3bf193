package catalog

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/scan"
)

// TestSameEntryCoversEveryEncodedField changes each field Encode writes,
// one at a time, in a decoded entry and in its latest version, and asks
// that the entry no longer counts as unchanged and that Encode writes the
// change. A field added to Entry, Version or File without a comparison in
// asread.go fails here, instead of being dropped from a write.
func TestSameEntryCoversEveryEncodedField(t *testing.T) {
	fresh := func(t *testing.T) (*Entry, []byte) {
		raw, err := Encode(sample(), 0)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		e := c.Skills["gone"]
		if !e.unchanged() {
			t.Fatal("a decoded entry counts as changed")
		}
		line, err := e.encode()
		if err != nil || !bytes.Equal(line, e.read.line) {
			t.Fatalf("an unchanged entry is not written as read: %v", err)
		}
		return e, line
	}
	mutations := 0
	check := func(t *testing.T, name string, e *Entry, before []byte) {
		t.Helper()
		mutations++
		if e.unchanged() {
			t.Errorf("%s: changed, still counts as unchanged", name)
			return
		}
		after, err := e.encode()
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(after, before) {
			t.Errorf("%s: the change is not in the encoded line", name)
		}
	}
	for _, f := range encodedFields(reflect.TypeFor[Entry]()) {
		if f.Name == "Head" {
			continue
		}
		e, before := fresh(t)
		mutate(t, reflect.ValueOf(e).Elem().FieldByIndex(f.Index))
		check(t, "Entry."+f.Name, e, before)
	}
	for _, f := range encodedFields(reflect.TypeFor[Version]()) {
		e, before := fresh(t)
		mutate(t, reflect.ValueOf(e.LatestVersion()).Elem().FieldByIndex(f.Index))
		check(t, "Version."+f.Name, e, before)
	}
	for _, f := range encodedFields(reflect.TypeFor[File]()) {
		e, before := fresh(t)
		mutate(t, reflect.ValueOf(&e.LatestVersion().Files[0]).Elem().FieldByIndex(f.Index))
		check(t, "File."+f.Name, e, before)
	}
	// In place, through shared backing arrays: the copy is deep.
	for name, fn := range map[string]func(e *Entry){
		"Contenders[0]":  func(e *Entry) { e.Contenders[0] = "skills/other.zip" },
		"Frontmatter[2]": func(e *Entry) { e.LatestVersion().Frontmatter[2] = 'N' },
		"Scan.Verdict":   func(e *Entry) { e.LatestVersion().Scan.Verdict = scan.Block },
		"Head replaced":  func(e *Entry) { v := *e.LatestVersion(); v.Size++; e.Head = &v },
		"WithdrawnAt":    func(e *Entry) { *e.WithdrawnAt = e.WithdrawnAt.Add(time.Second) },
		"Bundle.Size":    func(e *Entry) { e.LatestVersion().Bundle.Size++ },
		"zone":           func(e *Entry) { h := e.LatestVersion(); h.PublishedAt = h.PublishedAt.In(time.FixedZone("x", 3600)) },
	} {
		e, before := fresh(t)
		fn(e)
		check(t, name, e, before)
	}
	// Asked for, and set again to what it was read as, the head is unchanged.
	for name, fn := range map[string]func(e *Entry){
		"head asked for":      func(e *Entry) { _ = e.LatestVersion() },
		"head set as it was":  func(e *Entry) { v := *e.LatestVersion(); e.Head = &v },
		"history loaded":      func(e *Entry) { _ = e.LoadHistory() },
		"history loaded, set": func(e *Entry) { _ = e.LoadHistory(); e.SetVersions(e.Versions) },
	} {
		e, _ := fresh(t)
		fn(e)
		if !e.unchanged() {
			t.Errorf("%s: counts as changed", name)
		}
	}
	if mutations < 30 {
		t.Fatalf("only %d mutations tried", mutations)
	}
}

// encodedFields are the fields of t that JSON encodes.
func encodedFields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for f := range t.Fields() {
		if f.IsExported() && f.Tag.Get("json") != "-" {
			out = append(out, f)
		}
	}
	return out
}

// mutate sets v to a value different from the one it holds, of its kind.
func mutate(t *testing.T, v reflect.Value) {
	t.Helper()
	switch v.Interface().(type) {
	case time.Time:
		v.Set(reflect.ValueOf(v.Interface().(time.Time).Add(time.Hour)))
		return
	case *time.Time:
		v.Set(reflect.ValueOf(new(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))))
		return
	case json.RawMessage:
		v.Set(reflect.ValueOf(json.RawMessage(`{"name":"changed"}`)))
		return
	case *Gone:
		v.Set(reflect.ValueOf(&Gone{Code: GoneRevoked, Reason: "changed"}))
		return
	case *scan.Result:
		v.Set(reflect.ValueOf(&scan.Result{Verdict: scan.Warn, Engine: "skilldrop-scan/changed"}))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "-changed")
	case reflect.Int, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Slice:
		if v.Len() == 0 {
			v.Set(reflect.Append(v, reflect.New(v.Type().Elem()).Elem()))
			mutate(t, v.Index(0))
			return
		}
		v.Set(v.Slice(0, v.Len()-1))
	case reflect.Pointer: // *Bundle: set one where there is none, else change its key in place
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
			return
		}
		mutate(t, v.Elem().FieldByName("Key"))
	case reflect.Struct: // digest.Digest: unexported fields, set through its text form
		u, ok := v.Addr().Interface().(interface{ UnmarshalText([]byte) error })
		if !ok {
			t.Fatalf("cannot change a %s", v.Type())
		}
		if err := u.UnmarshalText([]byte("sha256:" + string(bytes.Repeat([]byte("ab"), 32)))); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("cannot change a %s", v.Type())
	}
}

// TestSourcesWrittenAsReadUntilChanged: the sources line is copied while
// Sources equals what was read, and every kind of change is written.
func TestSourcesWrittenAsReadUntilChanged(t *testing.T) {
	raw, err := Encode(sample(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(map[string]Source){
		"none":    func(map[string]Source) {},
		"added":   func(m map[string]Source) { m["skills/new.md"] = Source{ETag: `"n"`} },
		"removed": func(m map[string]Source) { delete(m, "skills/held.md") },
		"etag":    func(m map[string]Source) { m["skills/alpha.md"] = Source{ETag: `"a2"`} },
		"held":    func(m map[string]Source) { m["skills/held.md"] = Source{ETag: `"h"`} },
	} {
		c, err := Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		want := maps.Clone(c.Sources)
		change(want)
		change(c.Sources)
		out, err := Encode(c, 0)
		if err != nil {
			t.Fatal(err)
		}
		if name == "none" && !bytes.Equal(out, raw) {
			t.Errorf("%s: an unchanged catalog is not written as read", name)
		}
		got, err := Decode(out)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got.Sources, want) {
			t.Errorf("%s: sources %v, want %v", name, got.Sources, want)
		}
	}
}
