//go:build integration

package cwmetrics_test

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/obs/cwmetrics"
)

// TestCountIsVisibleWithAndWithoutDimension sends counts to the emulator in
// a namespace of its own and reads them back the way an operator (or an
// alarm) would: ListMetrics shows both series, GetMetricStatistics sums them.
func TestCountIsVisibleWithAndWithoutDimension(t *testing.T) {
	cfg := awstest.Config(t)
	client := cwmetrics.NewClient(cfg)
	ns := "SkilldropTest/" + awstest.Name(t, "obs")
	var logs bytes.Buffer
	sink, err := cwmetrics.New(client, cwmetrics.Options{Namespace: ns, Logger: obs.NewLogger(&logs, slog.LevelDebug)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := time.Now().Add(-5 * time.Minute)
	sink.Count(ctx, obs.DigestMismatch, obs.DimensionSkill, "alpha")
	sink.Count(ctx, obs.DigestMismatch, obs.DimensionSkill, "alpha")
	sink.Count(ctx, obs.DigestMismatch, obs.DimensionSkill, "beta")
	sink.Count(ctx, obs.UploadRejected, obs.DimensionReason, "name_mismatch")
	if logs.Len() != 0 {
		t.Fatalf("Count logged a failure against the emulator:\n%s", logs.String())
	}
	// A probe series published only with a dimension: CloudWatch keeps each
	// dimension combination apart, so a query without dimensions sees none
	// of it; moto (5.x) ignores dimensions when the query names none and
	// sums every datum of the metric name. The probe tells which one answers.
	if _, err := client.PutMetricData(ctx, &cloudwatch.PutMetricDataInput{
		Namespace: aws.String(ns),
		MetricData: []types.MetricDatum{{
			MetricName: aws.String("Probe"),
			Dimensions: []types.Dimension{{Name: aws.String("Only"), Value: aws.String("dimensioned")}},
			Unit:       types.StandardUnitCount,
			Value:      aws.Float64(1),
		}},
	}); err != nil {
		t.Fatalf("PutMetricData probe: %v", err)
	}
	end := time.Now().Add(5 * time.Minute)

	series := awstest.MetricSeries(t, cfg, ns, "")
	want := []string{
		"DigestMismatch",
		"DigestMismatch Skill=alpha",
		"DigestMismatch Skill=beta",
		"Probe Only=dimensioned",
		"UploadRejected",
		"UploadRejected Reason=name_mismatch",
	}
	if !slices.Equal(series, want) {
		t.Errorf("ListMetrics series:\n got %q\nwant %q", series, want)
	}

	sum := func(name string, dims map[string]string) float64 {
		t.Helper()
		return awstest.MetricSum(t, cfg, ns, name, dims, start, end)
	}
	// Without dimensions the alarm's series holds one datum per Count; where
	// a dimensionless query also sums the dimensioned datums (moto), it
	// holds twice that.
	perCount := 1.0
	if sum("Probe", nil) > 0 {
		t.Log("the emulator sums dimensioned datums into dimensionless queries (moto); expecting both datums there")
		perCount = 2
	}
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		{"DigestMismatch without dimensions (the alarm's series)", sum(obs.DigestMismatch, nil), 3 * perCount},
		{"DigestMismatch Skill=alpha", sum(obs.DigestMismatch, map[string]string{obs.DimensionSkill: "alpha"}), 2},
		{"DigestMismatch Skill=beta", sum(obs.DigestMismatch, map[string]string{obs.DimensionSkill: "beta"}), 1},
		{"UploadRejected without dimensions", sum(obs.UploadRejected, nil), 1 * perCount},
		{"UploadRejected Reason=name_mismatch", sum(obs.UploadRejected, map[string]string{obs.DimensionReason: "name_mismatch"}), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s: Sum = %v, want %v", c.name, c.got, c.want)
		}
	}
}
