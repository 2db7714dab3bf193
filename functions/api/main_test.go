package main

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/apikey"
)

func TestParseEnv(t *testing.T) {
	good := map[string]string{
		"SKILLDROP_BUCKET":            "skilldrop-123-eu-west-1",
		"SKILLDROP_PUBLIC_BASE_URL":   "https://skills.example.com",
		"SKILLDROP_API_KEY_PARAMETER": "/skilldrop/api-keys",
		"SKILLDROP_API_KEY_SHA256":    apikey.Hash("k1") + ", " + apikey.Hash("k2"),
		"SKILLDROP_LOG_LEVEL":         "debug",
	}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range good {
			m[a] = b
		}
		m[k] = v
		return m
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		err  string
	}{
		{"complete", good, ""},
		{"only the bucket", map[string]string{"SKILLDROP_BUCKET": "b"}, ""},
		{"no bucket", with("SKILLDROP_BUCKET", ""), "SKILLDROP_BUCKET"},
		{"base URL with a stage path", with("SKILLDROP_PUBLIC_BASE_URL", "https://x.example/prod"), "SKILLDROP_PUBLIC_BASE_URL"},
		{"a key instead of its hash", with("SKILLDROP_API_KEY_SHA256", "sk-live-secret"), "SKILLDROP_API_KEY_SHA256"},
		{"bad level", with("SKILLDROP_LOG_LEVEL", "chatty"), "SKILLDROP_LOG_LEVEL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parseEnv(func(k string) string { return tc.env[k] })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one naming %s", err, tc.err)
				}
				if strings.Contains(err.Error(), "sk-live-secret") {
					t.Error("the error repeats a secret")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.bucket != tc.env["SKILLDROP_BUCKET"] || s.parameter != tc.env["SKILLDROP_API_KEY_PARAMETER"] {
				t.Errorf("settings %+v", s)
			}
			if tc.name == "complete" && (s.hashes.Len() != 2 || s.level != slog.LevelDebug) {
				t.Errorf("hashes %d level %v", s.hashes.Len(), s.level)
			}
		})
	}
}
