package main

import (
	"log/slog"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/catalog"
)

func TestParseEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    settings
		wantErr string
	}{
		{"the bucket alone", map[string]string{"SKILLDROP_BUCKET": "b"}, settings{bucket: "b", level: slog.LevelInfo}, ""},
		{"every setting", map[string]string{
			"SKILLDROP_BUCKET": "b", "SKILLDROP_METRIC_NAMESPACE": "Team/Skills", "SKILLDROP_LOG_LEVEL": "debug",
			"SKILLDROP_MAX_ARTIFACT_BYTES": "1048576", "SKILLDROP_MAX_ENTRIES": "50", "SKILLDROP_MAX_EXPANDED_BYTES": "2097152",
			"SKILLDROP_MAX_DECOMPRESSION_RATIO": "20.5", "SKILLDROP_QUEUE_URL": "http://127.0.0.1:4566/000000000000/q",
			"SKILLDROP_ORIGINS":            "https://Skills.Example.com, https://abc.execute-api.eu-west-1.amazonaws.com",
			"SKILLDROP_DEFAULT_VISIBILITY": "authenticated",
		}, settings{bucket: "b", namespace: "Team/Skills", defaultVis: catalog.Authenticated, queueURL: "http://127.0.0.1:4566/000000000000/q", level: slog.LevelDebug,
			origins: []*url.URL{{Scheme: "https", Host: "skills.example.com"}, {Scheme: "https", Host: "abc.execute-api.eu-west-1.amazonaws.com"}},
			limits: archive.Limits{
				MaxArtifactBytes: 1 << 20, MaxEntries: 50, MaxExpandedBytes: 2 << 20, MaxRatio: 20.5,
			}}, ""},
		// 1024 MB: 90% for the Go runtime, 2/9 of that for the catalog (about 4.5 times its size decoded).
		{"the api's memory sizes the catalog", map[string]string{"SKILLDROP_BUCKET": "b", "SKILLDROP_API_MEMORY_MB": "1024"},
			settings{bucket: "b", level: slog.LevelInfo, maxCatalog: 1024 << 20 * 9 / 10 * 2 / 9}, ""},
		{"never above what readers accept", map[string]string{"SKILLDROP_BUCKET": "b", "SKILLDROP_API_MEMORY_MB": "10240"},
			settings{bucket: "b", level: slog.LevelInfo, maxCatalog: 256 << 20}, ""},
		{"no bucket", map[string]string{}, settings{}, "SKILLDROP_BUCKET"},
		{"a cap above the ceiling", map[string]string{"SKILLDROP_BUCKET": "b", "SKILLDROP_MAX_ARTIFACT_BYTES": "5000000"}, settings{}, "SKILLDROP_MAX_ARTIFACT_BYTES"},
		{"a cap that is not a number", map[string]string{"SKILLDROP_BUCKET": "b", "SKILLDROP_MAX_ENTRIES": "many"}, settings{}, "SKILLDROP_MAX_ENTRIES"},
		{"a zero cap", map[string]string{"SKILLDROP_BUCKET": "b", "SKILLDROP_MAX_EXPANDED_BYTES": "0"}, settings{}, "SKILLDROP_MAX_EXPANDED_BYTES"},
		{"a ratio below one", map[string]string{"SKILLDROP_BUCKET": "b", "SKILLDROP_MAX_DECOMPRESSION_RATIO": "0.5"}, settings{}, "SKILLDROP_MAX_DECOMPRESSION_RATIO"},
		{"a ratio that is not a number", map[string]string{"SKILLDROP_BUCKET": "b", "SKILLDROP_MAX_DECOMPRESSION_RATIO": "NaN"}, settings{}, "SKILLDROP_MAX_DECOMPRESSION_RATIO"},
		{"an unknown log level", map[string]string{"SKILLDROP_BUCKET": "b", "SKILLDROP_LOG_LEVEL": "LOUD"}, settings{}, "SKILLDROP_LOG_LEVEL"},
		{"an origin with a path", map[string]string{"SKILLDROP_BUCKET": "b", "SKILLDROP_ORIGINS": "https://x.example/prod"}, settings{}, "SKILLDROP_ORIGINS"},
		{"an unknown default visibility", map[string]string{"SKILLDROP_BUCKET": "b", "SKILLDROP_DEFAULT_VISIBILITY": "internal"}, settings{}, "SKILLDROP_DEFAULT_VISIBILITY"},
		{"an origin without a scheme", map[string]string{"SKILLDROP_BUCKET": "b", "SKILLDROP_ORIGINS": "x.example"}, settings{}, "SKILLDROP_ORIGINS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseEnv(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("settings %+v, want %+v", got, tt.want)
			}
		})
	}
}
