package bytesize

import "testing"

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 bytes", 1: "1 byte", 512: "512 bytes", 1023: "1023 bytes",
		1024: "1 KiB", 1536: "1.5 KiB", 4 << 20: "4 MiB", 6<<20 + 12345: "6.0 MiB", 10 << 20: "10 MiB",
		1<<20 - 1: "1.0 MiB", 1<<30 + 1<<29: "1.5 GiB", -2048: "-2 KiB",
	} {
		if got := Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestExceeds(t *testing.T) {
	for _, tt := range []struct {
		size, limit int64
		want        string
	}{
		{6<<20 + 12345, 4 << 20, "6.0 MiB > 4 MiB"},
		{200, 100, "200 bytes > 100 bytes"},
		{4<<20 + 1, 4 << 20, "4194305 bytes > 4194304 bytes"},
		{4<<20 + 1<<19, 4 << 20, "4.5 MiB > 4 MiB"},
	} {
		if got := Exceeds(tt.size, tt.limit); got != tt.want {
			t.Errorf("Exceeds(%d, %d) = %q, want %q", tt.size, tt.limit, got, tt.want)
		}
	}
}
