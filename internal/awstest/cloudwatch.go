package awstest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/skilldrop/skilldrop/pkg/obs/cwmetrics"
)

// MetricSeries lists the series CloudWatch holds in namespace, as an
// operator sees them: "Name" for a series without dimensions, else
// "Name Dim=Value" (dimensions in the order CloudWatch gives them), sorted
// and without repeats. metric "" lists every metric of the namespace.
func MetricSeries(t testing.TB, cfg aws.Config, namespace, metric string) []string {
	t.Helper()
	in := &cloudwatch.ListMetricsInput{Namespace: aws.String(namespace)}
	if metric != "" {
		in.MetricName = aws.String(metric)
	}
	var series []string
	p := cloudwatch.NewListMetricsPaginator(cwmetrics.NewClient(cfg), in)
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("ListMetrics %s %s: %v", namespace, metric, err)
		}
		for _, m := range page.Metrics {
			s := aws.ToString(m.MetricName)
			for _, d := range m.Dimensions {
				s += " " + aws.ToString(d.Name) + "=" + aws.ToString(d.Value)
			}
			series = append(series, s)
		}
	}
	slices.Sort(series)
	return slices.Compact(series)
}

// MetricSum is the Sum statistic of metric in namespace from start to end
// (one-minute periods, added up), for the series with exactly dimensions
// (name → value; none: the series without dimensions), as an alarm reads it.
func MetricSum(t testing.TB, cfg aws.Config, namespace, metric string, dimensions map[string]string, start, end time.Time) float64 {
	t.Helper()
	var dims []cwtypes.Dimension
	for name, value := range dimensions {
		dims = append(dims, cwtypes.Dimension{Name: aws.String(name), Value: aws.String(value)})
	}
	out, err := cwmetrics.NewClient(cfg).GetMetricStatistics(context.Background(), &cloudwatch.GetMetricStatisticsInput{
		Namespace:  aws.String(namespace),
		MetricName: aws.String(metric),
		Dimensions: dims,
		StartTime:  aws.Time(start),
		EndTime:    aws.Time(end),
		Period:     aws.Int32(60),
		Statistics: []cwtypes.Statistic{cwtypes.StatisticSum},
	})
	if err != nil {
		t.Fatalf("GetMetricStatistics %s %s %v: %v", namespace, metric, dimensions, err)
	}
	total := 0.0
	for _, p := range out.Datapoints {
		total += aws.ToFloat64(p.Sum)
	}
	return total
}
