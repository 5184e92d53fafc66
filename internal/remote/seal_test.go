package remote

import (
	"bytes"
	"errors"
	"testing"
)

// TestSeal: a sealed object opens under its key and name only; without a
// key, a seal is stripped unchecked and an unsealed object is as it is.
func TestSeal(t *testing.T) {
	k, other := NewFleetKey("fleet secret"), NewFleetKey("another secret")
	body := EncodeCommit(sample())
	sealed := k.Seal("commits/x", body)
	if got, err := k.Open("commits/x", sealed); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("open: %v", err)
	}
	for _, c := range []struct {
		key  *FleetKey
		name string
		b    []byte
		want error
	}{
		{k, "commits/y", sealed, ErrBadSignature},     // moved under another name
		{other, "commits/x", sealed, ErrBadSignature}, // another fleet's key
		{k, "commits/x", body, ErrUnsigned},
		{k, "commits/x", other.Seal("commits/x", body), ErrBadSignature},
		{k, "commits/x", append(bytes.Clone(sealed[:len(sealed)-sealSize]), sealed[len(sealed)-sealSize+1:]...), ErrBadSignature}, // cut
	} {
		if _, err := c.key.Open(c.name, c.b); !errors.Is(err, c.want) {
			t.Errorf("open of %q: %v, want %v", c.name, err, c.want)
		}
	}
	flipped := bytes.Clone(sealed)
	flipped[3] ^= 1
	if _, err := k.Open("commits/x", flipped); !errors.Is(err, ErrBadSignature) {
		t.Errorf("a flipped byte: %v", err)
	}
	var none *FleetKey
	if got, err := none.Open("commits/x", sealed); err != nil || !bytes.Equal(got, body) {
		t.Errorf("without a key, a seal is stripped: %v", err)
	}
	if got, err := none.Open("commits/x", body); err != nil || !bytes.Equal(got, body) || !bytes.Equal(none.Seal("n", body), body) {
		t.Errorf("without a key, nothing changes: %v", err)
	}
	if NewFleetKey("") != nil || none.Fingerprint() != "" || k.Fingerprint() == other.Fingerprint() {
		t.Error("fingerprints")
	}
}

// TestSignName: a marker's name carries its MAC; it opens under the key
// that made it only, and a name without one opens without a key.
func TestSignName(t *testing.T) {
	k, other := NewFleetKey("fleet secret"), NewFleetKey("another secret")
	name := PinsDir + sample().Records[0].BackupID.String()
	signed := k.SignName(name)
	if got, err := k.OpenName(signed); err != nil || got != name {
		t.Fatalf("open %q: %q %v", signed, got, err)
	}
	if _, err := other.OpenName(signed); !errors.Is(err, ErrBadSignature) {
		t.Errorf("another key: %v", err)
	}
	if _, err := k.OpenName(name); !errors.Is(err, ErrUnsigned) {
		t.Errorf("no MAC: %v", err)
	}
	if _, err := k.OpenName(k.SignName(PinsDir + "0" + name[len(PinsDir)+1:])[:len(signed)-1] + "0"); err == nil {
		t.Error("a changed MAC opens")
	}
	var none *FleetKey
	for _, n := range []string{name, signed} {
		if got, err := none.OpenName(n); err != nil || got != name {
			t.Errorf("without a key %q: %q %v", n, got, err)
		}
	}
}

func FuzzOpen(f *testing.F) {
	k := NewFleetKey("fuzz")
	f.Add("commits/a", k.Seal("commits/a", []byte("body")))
	f.Add("pins/b", []byte{})
	f.Fuzz(func(t *testing.T, name string, b []byte) {
		if body, err := k.Open(name, b); err == nil && !bytes.Equal(k.Seal(name, body), b) {
			t.Fatalf("%q opens to a body sealed otherwise", name)
		}
		if got, err := k.OpenName(name); err == nil && k.SignName(got) != name {
			t.Fatalf("%q opens to a name signed otherwise", name)
		}
	})
}
