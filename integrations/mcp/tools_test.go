package mcp

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestInputsAreTheirCommandLines fails when a field of a tool's Input
// type does not say (in its cli tag) which argument of the tool's command
// it is, or says another than the one the command line gets from it: the
// flag a field names must be the one flag that appears (or goes) when the
// field is set, a positional argument must appear after "--", and a field
// of the tool alone ("-") must leave the command line as it is. Each
// command line starts with the command Tools names.
func TestInputsAreTheirCommandLines(t *testing.T) {
	for _, spec := range Tools() {
		zero := reflect.New(spec.Input).Elem()
		base := commandLine(zero)
		if len(base) < 2 || base[0] != spec.Command || base[1] != "--json" {
			t.Errorf("%s runs %q, not casckpt %s --json", spec.Name, base, spec.Command)
			continue
		}
		for i := range spec.Input.NumField() {
			f := spec.Input.Field(i)
			tag := f.Tag.Get("cli")
			set := reflect.New(spec.Input).Elem()
			sample(set.Field(i), "v-"+f.Name)
			got := commandLine(set)
			flags := changedFlags(base, got)
			_, pos := cut(got)
			_, basePos := cut(base)
			switch {
			case tag == "":
				t.Errorf("%s.%s has no cli tag: say which argument of %s it is", spec.Input.Name(), f.Name, spec.Command)
			case tag == "-" && !slices.Equal(got, base):
				t.Errorf("%s.%s is tagged the tool's own (cli:\"-\"), yet changes the command line %q to %q", spec.Input.Name(), f.Name, base, got)
			case strings.HasPrefix(tag, "-") && tag != "-" && !slices.Equal(flags, []string{tag}):
				t.Errorf("%s.%s is tagged %s; setting it changes the flags %q of %s", spec.Input.Name(), f.Name, tag, flags, spec.Command)
			case !strings.HasPrefix(tag, "-") && (len(flags) > 0 || !slices.ContainsFunc(pos, func(a string) bool { return strings.HasSuffix(a, "v-"+f.Name) }) || slices.Equal(pos, basePos)):
				t.Errorf("%s.%s is tagged the positional %s; setting it gives %q", spec.Input.Name(), f.Name, tag, got)
			}
		}
	}
}

// commandLine is the command line the tool runs for the arguments in.
func commandLine(in reflect.Value) []string {
	return in.Interface().(interface{ args() []string }).args()
}

// sample sets v to a value that is not its zero value: s for a string
// (or a list of one), 7 for a number, true for a bool, and a pointer to
// the zero value (which differs from nil: dry_run false, max_size_mb 0).
func sample(v reflect.Value, s string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Int, reflect.Int64:
		v.SetInt(7)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Slice:
		v.Set(reflect.Append(reflect.MakeSlice(v.Type(), 0, 1), reflect.ValueOf(s).Convert(v.Type().Elem())))
	}
}

// cut splits a command line into its flags (after the command and --json,
// before "--") and its positional arguments.
func cut(args []string) (flags, positional []string) {
	i := slices.Index(args, "--")
	if i < 0 {
		return args[2:], nil
	}
	return args[2:i], args[i+1:]
}

// changedFlags lists the flags (the arguments that start with -) that
// one command line's flags have and the other's lack.
func changedFlags(a, b []string) []string {
	fa, _ := cut(a)
	fb, _ := cut(b)
	var out []string
	for _, x := range slices.Concat(fa, fb) {
		if strings.HasPrefix(x, "-") && slices.Contains(fa, x) != slices.Contains(fb, x) && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
