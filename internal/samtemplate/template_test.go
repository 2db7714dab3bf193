package samtemplate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/routes"
)

// These tests pin what issues 6, 9 and 11 and DESIGN.md require of
// template.yaml that cfn-lint does not check: a template can be lint-clean and
// still watch the wrong prefixes, grant the indexer too much, let a throttle
// push good messages to the dead-letter queue, or alarm on missing data.

func load(t *testing.T) *Template {
	t.Helper()
	tpl, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

const bucketName = "${BucketNamePrefix}-${AWS::AccountId}-${AWS::Region}"

const bucketArn = "arn:${AWS::Partition}:s3:::" + bucketName

var functions = []string{"IndexerFunction", "ApiFunction"}

// The logical ids the tests below pin by name.
const (
	indexerFn  = "IndexerFunction"
	queue      = "IndexerQueue"
	queuePol   = "IndexerQueuePolicy"
	failed     = "IndexerFailedEventsQueue"
	skillBkt   = "SkillBucket"
	apiFn      = "ApiFunction"
	httpAPI    = "HttpApi"
	queueEvent = "Queue"
)

// intValue is a literal integer property, failing the test otherwise.
func intValue(t *testing.T, what string, n *Node) int {
	t.Helper()
	if n == nil || n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!str") {
		t.Fatalf("%s is not a literal number (%v)", what, n)
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil {
		t.Fatalf("%s = %q: %v", what, n.Value, err)
	}
	return v
}

// isGetAtt reports whether n is !GetAtt id.attr.
func isGetAtt(n *Node, id, attr string) bool {
	i, a := GetAtt(n)
	return i == id && a == attr
}

func isRef(n *Node, name string) bool { return n != nil && n.Tag == "!Ref" && n.Value == name }

func TestFunctionsBuildAndRunAsDesigned(t *testing.T) {
	tpl := load(t)
	glob := Get(tpl.Root, "Globals", "Function")
	for _, fn := range functions {
		props := Get(tpl.Resource(fn), "Properties")
		prop := func(k string) *Node {
			if n := Get(props, k); n != nil {
				return n
			}
			return Get(glob, k)
		}
		if v := prop("Runtime"); v == nil || v.Value != "provided.al2023" {
			t.Errorf("%s: Runtime %v, want provided.al2023", fn, v)
		}
		if v := prop("Architectures"); v == nil || len(v.Content) != 1 || v.Content[0].Value != "arm64" {
			t.Errorf("%s: Architectures, want [arm64]", fn)
		}
		if v := prop("CodeUri"); v == nil || v.Value != "." {
			t.Errorf("%s: CodeUri, want . (a lower CodeUri cannot see the root go.mod)", fn)
		}
		if v := Get(tpl.Resource(fn), "Metadata", "BuildMethod"); v == nil || v.Value != "makefile" {
			t.Errorf("%s: Metadata.BuildMethod, want makefile", fn)
		}
		for _, k := range []string{"MemorySize", "Timeout"} {
			if Get(props, k) == nil {
				t.Errorf("%s: %s is not set explicitly", fn, k)
			}
		}
		// SAM merges a function's maps into Globals' key by key.
		logFormat := Get(props, "LoggingConfig", "LogFormat")
		if logFormat == nil {
			logFormat = Get(glob, "LoggingConfig", "LogFormat")
		}
		if v := logFormat; v == nil || v.Value != "JSON" {
			t.Errorf("%s: LoggingConfig.LogFormat, want JSON", fn)
		}
	}
}

// TestIndexerSizedForLargeCatalogs: a batch merges into a catalog of tens of
// thousands of skills and renders documents of tens of MB.
func TestIndexerSizedForLargeCatalogs(t *testing.T) {
	tpl := load(t)
	props := Get(tpl.Resource(indexerFn), "Properties")
	if m := intValue(t, "indexer MemorySize", Get(props, "MemorySize")); m < 2048 {
		t.Errorf("indexer MemorySize %d, want at least 2048", m)
	}
	if to := intValue(t, "indexer Timeout", Get(props, "Timeout")); to != 120 {
		t.Errorf("indexer Timeout %d, want 120 (the queue's VisibilityTimeout follows it)", to)
	}
}

func TestBucket(t *testing.T) {
	tpl := load(t)
	b := tpl.Resource(skillBkt)
	if v := Get(b, "DeletionPolicy"); v == nil || v.Value != "Retain" {
		t.Error("DeletionPolicy is not Retain")
	}
	if v := Get(b, "UpdateReplacePolicy"); v == nil || v.Value != "Retain" {
		t.Error("UpdateReplacePolicy is not Retain")
	}
	name := Get(b, "Properties", "BucketName")
	if name == nil || name.Tag != "!Sub" || name.Value != bucketName {
		t.Fatalf("BucketName = %v %q, want !Sub %s", name.Tag, name.Value, bucketName)
	}
	p := Get(tpl.Root, "Parameters", "BucketNamePrefix", "AllowedPattern")
	if p == nil || strings.Contains(p.Value, "A-Z") {
		t.Errorf("BucketNamePrefix must be checked for lowercase, pattern %v", p)
	}
	if v := Get(b, "Properties", "VersioningConfiguration", "Status"); v == nil || v.Value != "Enabled" {
		t.Error("versioning is not enabled")
	}
	if Get(b, "Properties", "BucketEncryption", "ServerSideEncryptionConfiguration") == nil {
		t.Error("no default encryption")
	}
	for _, k := range []string{"BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets"} {
		if v := Get(b, "Properties", "PublicAccessBlockConfiguration", k); v == nil || v.Value != "true" {
			t.Errorf("PublicAccessBlockConfiguration.%s is not true", k)
		}
	}
	tls := false
	for _, st := range Get(tpl.Resource("SkillBucketPolicy"), "Properties", "PolicyDocument", "Statement").Content {
		if Get(st, "Effect").Value == "Deny" && Get(st, "Condition", "Bool", "aws:SecureTransport") != nil {
			tls = true
		}
	}
	if !tls {
		t.Error("the bucket policy does not deny requests without TLS")
	}
}

// lifecyclePrefix is a lifecycle rule's key prefix (Prefix or Filter.Prefix).
func lifecyclePrefix(r *Node) string {
	for _, n := range []*Node{Get(r, "Prefix"), Get(r, "Filter", "Prefix")} {
		if n != nil {
			return n.Value
		}
	}
	return ""
}

// TestLifecycle: noncurrent versions expire everywhere after
// NoncurrentVersionDays, and under rendered/ (rewritten on every publish)
// after a day.
func TestLifecycle(t *testing.T) {
	tpl := load(t)
	rules := Get(tpl.Resource(skillBkt), "Properties", "LifecycleConfiguration", "Rules")
	if rules == nil {
		t.Fatal("no lifecycle rules")
	}
	everywhere, rendered := false, false
	for _, r := range rules.Content {
		if v := Get(r, "Status"); v == nil || v.Value != "Enabled" {
			continue
		}
		days := Get(r, "NoncurrentVersionExpiration", "NoncurrentDays")
		switch lifecyclePrefix(r) {
		case "":
			everywhere = everywhere || isRef(days, "NoncurrentVersionDays")
		case "rendered/":
			rendered = days != nil && days.Value == "1"
		}
	}
	if !everywhere {
		t.Error("no rule expires noncurrent versions of every key after NoncurrentVersionDays")
	}
	if !rendered {
		t.Error("no rule expires noncurrent versions under rendered/ after 1 day")
	}
}

// TestBucketCORSForPresignedRedirects: a browser follows the api's 302 to a
// presigned GET only if S3 answers the cross-origin request; nothing but a
// plain GET or HEAD is needed, and no credentials go to S3.
func TestBucketCORSForPresignedRedirects(t *testing.T) {
	tpl := load(t)
	rules := Get(tpl.Resource(skillBkt), "Properties", "CorsConfiguration", "CorsRules")
	if rules == nil || len(rules.Content) != 1 {
		t.Fatalf("CORS rules %v, want one", rules)
	}
	r := rules.Content[0]
	if got := values(Get(r, "AllowedMethods")); !slices.Equal(slices.Sorted(slices.Values(got)), []string{"GET", "HEAD"}) {
		t.Errorf("AllowedMethods %q, want GET and HEAD only", got)
	}
	if got := values(Get(r, "AllowedOrigins")); !slices.Equal(got, []string{"*"}) {
		t.Errorf("AllowedOrigins %q, want *", got)
	}
	if h := Get(r, "AllowedHeaders"); h != nil {
		t.Errorf("AllowedHeaders %q: a presigned GET needs none, and no credential may be sent to S3", values(h))
	}
	exposed := values(Get(r, "ExposedHeaders"))
	for _, h := range []string{"ETag", "Content-Length"} {
		if !slices.Contains(exposed, h) {
			t.Errorf("ExposedHeaders %q lack %s", exposed, h)
		}
	}
	if m := Get(r, "MaxAge"); m == nil || intValue(t, "CORS MaxAge", m) <= 0 {
		t.Error("no CORS MaxAge: every redirect would be preflighted anew")
	}
}

// TestNoReferenceToTheBucketClosesALoop: the bucket depends on the queue
// policy (and so on the queue), and the functions' policies and environment
// must not depend on it either; every mention is the same !Sub string.
func TestNoReferenceToTheBucketClosesALoop(t *testing.T) {
	tpl := load(t)
	check := func(where string, n *Node) {
		Walk(n, func(c *Node) {
			switch {
			case (c.Tag == "!Ref" || c.Tag == "!GetAtt") && strings.HasPrefix(c.Value, skillBkt):
				t.Errorf("%s: %s %s", where, c.Tag, c.Value)
			case c.Tag == "!GetAtt" && len(c.Content) > 0 && c.Content[0].Value == skillBkt:
				t.Errorf("%s: !GetAtt %s", where, skillBkt)
			case c.Tag == "!Sub" && strings.Contains(c.Value, "BucketNamePrefix") && !strings.Contains(c.Value, bucketName):
				t.Errorf("%s: the bucket is named %q, not with the one !Sub string", where, c.Value)
			}
		})
	}
	check("Globals", Get(tpl.Root, "Globals"))
	for _, fn := range functions {
		props := Get(tpl.Resource(fn), "Properties")
		check(fn+" policies", Get(props, "Policies"))
		check(fn+" environment", Get(props, "Environment"))
	}
	check(queuePol, tpl.Resource(queuePol))
	check(queue, tpl.Resource(queue))
	check(failed, tpl.Resource(failed))
	env := Get(tpl.Root, "Globals", "Function", "Environment", "Variables", "SKILLDROP_BUCKET")
	if env == nil || env.Tag != "!Sub" || env.Value != bucketName {
		t.Errorf("SKILLDROP_BUCKET = %v, want !Sub %s", env, bucketName)
	}
}

// TestNotificationsGoToTheQueue: the contract's prefixes, creations and
// removals, to IndexerQueue only; no SAM S3 event invokes a function.
func TestNotificationsGoToTheQueue(t *testing.T) {
	tpl := load(t)
	want := []string{"skills/", "listings/", "subagents/", "files/", "agent-skills.yaml"}
	got := tpl.NotificationPrefixes(indexerFn)
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Errorf("prefixes %q, want %q (never blobs/, catalog/ or rendered/, which the indexer writes)", got, want)
	}
	for _, f := range tpl.S3Filters(indexerFn) {
		if !slices.Equal(f.Events, []string{"s3:ObjectCreated:*", "s3:ObjectRemoved:*"}) {
			t.Errorf("prefix %s: events %q", f.Prefix, f.Events)
		}
	}
	for _, n := range tpl.QueueNotifications() {
		if n.Bucket != skillBkt || n.Queue != queue {
			t.Errorf("notification %+v: want %s to %s only", n, skillBkt, queue)
		}
	}
	nc := Get(tpl.Resource(skillBkt), "Properties", "NotificationConfiguration")
	for _, k := range Keys(nc) {
		if k != "QueueConfigurations" {
			t.Errorf("the bucket's NotificationConfiguration has %s; notifications go to the queue only", k)
		}
	}
	for _, fn := range functions {
		if ev := tpl.Events(fn, "S3"); len(ev) > 0 {
			t.Errorf("%s has S3 events %q: S3 must notify the queue, not invoke the function", fn, ev)
		}
	}
	if q := tpl.EventQueues(indexerFn); !slices.Equal(q, []string{queue}) {
		t.Errorf("the indexer consumes %q, want [%s]", q, queue)
	}
}

// TestQueuePolicyAdmitsOnlyTheBucket: S3 may send to the queue for this
// bucket of this account only, and the bucket is created after the policy
// (S3 checks the destination when the notification configuration is set).
func TestQueuePolicyAdmitsOnlyTheBucket(t *testing.T) {
	tpl := load(t)
	props := Get(tpl.Resource(queuePol), "Properties")
	if v := Get(tpl.Resource(queuePol), "Type"); v == nil || v.Value != "AWS::SQS::QueuePolicy" {
		t.Fatalf("%s is not an AWS::SQS::QueuePolicy", queuePol)
	}
	qs := Get(props, "Queues")
	if qs == nil || len(qs.Content) != 1 || !isRef(qs.Content[0], queue) {
		t.Errorf("Queues, want [!Ref %s]", queue)
	}
	sts := Get(props, "PolicyDocument", "Statement")
	if sts == nil || len(sts.Content) != 1 {
		t.Fatalf("statements %v, want exactly one", sts)
	}
	st := sts.Content[0]
	if v := Get(st, "Effect"); v == nil || v.Value != "Allow" {
		t.Error("the statement does not Allow")
	}
	if got := values(Get(st, "Principal", "Service")); !slices.Equal(got, []string{"s3.amazonaws.com"}) {
		t.Errorf("Principal.Service %q, want s3.amazonaws.com", got)
	}
	if keys := Keys(Get(st, "Principal")); !slices.Equal(keys, []string{"Service"}) {
		t.Errorf("Principal has %q, want Service only", keys)
	}
	if got := values(Get(st, "Action")); !slices.Equal(got, []string{"sqs:SendMessage"}) {
		t.Errorf("Action %q, want sqs:SendMessage only", got)
	}
	if !isGetAtt(Get(st, "Resource"), queue, "Arn") {
		t.Errorf("Resource, want !GetAtt %s.Arn", queue)
	}
	var source *Node
	for _, op := range []string{"ArnEquals", "ArnLike"} {
		if n := Get(st, "Condition", op, "aws:SourceArn"); n != nil {
			source = n
		}
	}
	if source == nil || source.Tag != "!Sub" || source.Value != bucketArn {
		t.Errorf("aws:SourceArn = %v, want ArnEquals !Sub %s (the bucket's name string, no !Ref: no cycle)", source, bucketArn)
	}
	acct := Get(st, "Condition", "StringEquals", "aws:SourceAccount")
	if !isRef(acct, "AWS::AccountId") && (acct == nil || acct.Tag != "!Sub" || acct.Value != "${AWS::AccountId}") {
		t.Errorf("aws:SourceAccount = %v, want the stack's account", acct)
	}
	dep := values(Get(tpl.Resource(skillBkt), "DependsOn"))
	if !slices.Contains(dep, queuePol) {
		t.Errorf("%s DependsOn %q, want %s", skillBkt, dep, queuePol)
	}
}

// TestQueue: the visibility timeout leaves room for Lambda's retries, S3 can
// publish to the queue, and a message that keeps failing reaches the
// failed-events queue.
func TestQueue(t *testing.T) {
	tpl := load(t)
	props := Get(tpl.Resource(queue), "Properties")
	timeout := intValue(t, "indexer Timeout", Get(tpl.Resource(indexerFn), "Properties", "Timeout"))
	window := intValue(t, "MaximumBatchingWindowInSeconds", Get(tpl.Event(indexerFn, queueEvent), "MaximumBatchingWindowInSeconds"))
	vis := intValue(t, "VisibilityTimeout", Get(props, "VisibilityTimeout"))
	if vis < 6*timeout+window {
		t.Errorf("VisibilityTimeout %d, want at least 6 x the indexer's Timeout (%d) + the batching window (%d) = %d", vis, timeout, window, 6*timeout+window)
	}
	if v := Get(props, "SqsManagedSseEnabled"); v == nil || v.Value != "true" {
		t.Error("SqsManagedSseEnabled is not true (S3 cannot publish to a queue under the aws/sqs key)")
	}
	if Get(props, "KmsMasterKeyId") != nil {
		t.Error("the queue names a KMS key; S3 publishes to it with SSE-SQS only")
	}
	retention := intValue(t, "MessageRetentionPeriod", Get(props, "MessageRetentionPeriod"))
	if retention < 86400 {
		t.Errorf("MessageRetentionPeriod %d s, want at least a day", retention)
	}
	rp := Get(props, "RedrivePolicy")
	if !isGetAtt(Get(rp, "deadLetterTargetArn"), failed, "Arn") {
		t.Errorf("RedrivePolicy.deadLetterTargetArn, want !GetAtt %s.Arn", failed)
	}
	if n := intValue(t, "maxReceiveCount", Get(rp, "maxReceiveCount")); n < 5 {
		t.Errorf("maxReceiveCount %d, want at least 5 (throttled batches count as receives)", n)
	}
	dlq := Get(tpl.Resource(failed), "Properties")
	if r := intValue(t, "failed-events MessageRetentionPeriod", Get(dlq, "MessageRetentionPeriod")); r != 1209600 || r <= retention {
		t.Errorf("failed-events retention %d s, want 14 days (1209600), longer than the queue's %d (a redriven message keeps its enqueue time)", r, retention)
	}
	if v := Get(dlq, "SqsManagedSseEnabled"); v == nil || v.Value != "true" {
		t.Error("the failed-events queue is not encrypted (SqsManagedSseEnabled)")
	}
}

// TestIndexerConsumesTheQueueInBatches: at most two writers, in batches of at
// least 100, partial failures reported per message.
func TestIndexerConsumesTheQueueInBatches(t *testing.T) {
	tpl := load(t)
	events := tpl.Events(indexerFn, "SQS")
	if !slices.Equal(events, []string{queueEvent}) {
		t.Fatalf("the indexer's SQS events %q, want [%s]", events, queueEvent)
	}
	ev := tpl.Event(indexerFn, queueEvent)
	if !isGetAtt(Get(ev, "Queue"), queue, "Arn") {
		t.Errorf("the SQS event's Queue, want !GetAtt %s.Arn", queue)
	}
	if n := intValue(t, "BatchSize", Get(ev, "BatchSize")); n < 100 || n > 10000 {
		t.Errorf("BatchSize %d, want 100 to 10000", n)
	}
	if n := intValue(t, "MaximumBatchingWindowInSeconds", Get(ev, "MaximumBatchingWindowInSeconds")); n != 1 {
		t.Errorf("MaximumBatchingWindowInSeconds %d, want 1 (a single upload lands in about a second)", n)
	}
	if n := intValue(t, "ScalingConfig.MaximumConcurrency", Get(ev, "ScalingConfig", "MaximumConcurrency")); n != 2 {
		t.Errorf("ScalingConfig.MaximumConcurrency %d, want 2 (at most two writers)", n)
	}
	if got := values(Get(ev, "FunctionResponseTypes")); !slices.Contains(got, "ReportBatchItemFailures") {
		t.Errorf("FunctionResponseTypes %q, want ReportBatchItemFailures", got)
	}
	if v := Get(ev, "Enabled"); v != nil && v.Value != "true" {
		t.Error("the SQS event is disabled")
	}
	for where, rc := range map[string]*Node{
		"IndexerFunction": Get(tpl.Resource(indexerFn), "Properties", "ReservedConcurrentExecutions"),
		"Globals":         Get(tpl.Root, "Globals", "Function", "ReservedConcurrentExecutions"),
	} {
		if rc == nil {
			continue
		}
		if n := intValue(t, where+" ReservedConcurrentExecutions", rc); n < 2 {
			t.Errorf("%s ReservedConcurrentExecutions %d: below 2 it throttles the queue's batches into the failed-events queue", where, n)
		}
	}
	env := Get(tpl.Resource(indexerFn), "Properties", "Environment", "Variables")
	if !isRef(Get(env, "SKILLDROP_QUEUE_URL"), queue) {
		t.Errorf("SKILLDROP_QUEUE_URL, want !Ref %s", queue)
	}
}

// TestRenderedDocumentOrigins: the indexer pre-renders for the origin every
// URL is built from (the BaseUrl output): PublicBaseUrl when set, else the
// HTTP API's own endpoint.
func TestRenderedDocumentOrigins(t *testing.T) {
	tpl := load(t)
	o := Get(tpl.Resource(indexerFn), "Properties", "Environment", "Variables", "SKILLDROP_ORIGINS")
	if o == nil || o.Tag != "!If" || len(o.Content) != 3 {
		t.Fatalf("SKILLDROP_ORIGINS = %v, want !If [HasPublicBaseUrl, !Ref PublicBaseUrl, the API's endpoint]", o)
	}
	if o.Content[0].Value != "HasPublicBaseUrl" || !isRef(o.Content[1], "PublicBaseUrl") {
		t.Error("SKILLDROP_ORIGINS does not choose PublicBaseUrl when HasPublicBaseUrl")
	}
	own := o.Content[2]
	if !isGetAtt(own, httpAPI, "ApiEndpoint") &&
		(own.Tag != "!Sub" || own.Value != "https://${"+httpAPI+"}.execute-api.${AWS::Region}.${AWS::URLSuffix}") {
		t.Errorf("SKILLDROP_ORIGINS' fallback %s %q is not the HTTP API's own origin", own.Tag, own.Value)
	}
	cond := Get(tpl.Root, "Conditions", "HasPublicBaseUrl")
	if cond == nil || cond.Tag != "!Not" {
		t.Error("HasPublicBaseUrl is not !Not [!Equals [!Ref PublicBaseUrl, \"\"]]")
	}
	base := Get(tpl.Root, "Outputs", "BaseUrl", "Value")
	if !sameNode(base, o) {
		t.Error("SKILLDROP_ORIGINS differs from the BaseUrl output: documents would be rendered for another origin than the one served")
	}
}

func sameNode(a, b *Node) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Kind != b.Kind || a.Tag != b.Tag || a.Value != b.Value || len(a.Content) != len(b.Content) {
		return false
	}
	for i := range a.Content {
		if !sameNode(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}

// TestReconcileSchedule: the schedule repairs a lost event within
// ReconcileMinutes, with the payload the indexer reads.
func TestReconcileSchedule(t *testing.T) {
	tpl := load(t)
	events := tpl.Events(indexerFn, "ScheduleV2")
	if len(events) != 1 {
		t.Fatalf("the indexer's ScheduleV2 events %q, want one", events)
	}
	ev := tpl.Event(indexerFn, events[0])
	in := Get(ev, "Input")
	var got, want any
	if in == nil || json.Unmarshal([]byte(in.Value), &got) != nil {
		t.Fatalf("Input %v is not JSON", in)
	}
	_ = json.Unmarshal([]byte(indexer.ReconcilePayload), &want)
	if b1, b2 := mustJSON(got), mustJSON(want); b1 != b2 {
		t.Errorf("Input %s, want %s (indexer.ReconcilePayload)", b1, b2)
	}
	// rate(1 minute) for 1, rate(N minutes) above: the expression for each value.
	expr := Get(ev, "ScheduleExpression")
	if expr == nil || expr.Tag != "!If" || len(expr.Content) != 3 {
		t.Fatalf("ScheduleExpression %v, want !If [ReconcileEveryMinute, rate(1 minute), !Sub rate(${ReconcileMinutes} minutes)]", expr)
	}
	if c := expr.Content; c[0].Value != "ReconcileEveryMinute" || c[1].Value != "rate(1 minute)" ||
		c[2].Tag != "!Sub" || c[2].Value != "rate(${ReconcileMinutes} minutes)" {
		t.Errorf("ScheduleExpression %s %q %s %q", c[0].Value, c[1].Value, c[2].Tag, c[2].Value)
	}
	cond := Get(tpl.Root, "Conditions", "ReconcileEveryMinute")
	if cond == nil || cond.Tag != "!Equals" || len(cond.Content) != 2 || !isRef(cond.Content[0], "ReconcileMinutes") || cond.Content[1].Value != "1" {
		t.Errorf("ReconcileEveryMinute, want !Equals [!Ref ReconcileMinutes, \"1\"]")
	}
	param := Get(tpl.Root, "Parameters", "ReconcileMinutes")
	if d := Get(param, "Default"); d == nil || d.Value != "15" {
		t.Errorf("ReconcileMinutes default %v, want 15", d)
	}
	pat := Get(param, "AllowedPattern")
	if v := Get(param, "Type"); v == nil || v.Value != "String" || pat == nil {
		t.Fatal("ReconcileMinutes is not a String with an AllowedPattern (a Number would take 1.5)")
	}
	re := regexp.MustCompile(pat.Value)
	for _, ok := range []string{"1", "2", "15", "60", "1440"} {
		if !re.MatchString(ok) {
			t.Errorf("ReconcileMinutes refuses %q", ok)
		}
	}
	for _, bad := range []string{"", "0", "01", "1.5", "-1", "1441", "15 minutes"} {
		if re.MatchString(bad) {
			t.Errorf("ReconcileMinutes accepts %q", bad)
		}
	}
	if n := intValue(t, "RetryPolicy.MaximumRetryAttempts", Get(ev, "RetryPolicy", "MaximumRetryAttempts")); n < 1 {
		t.Errorf("RetryPolicy.MaximumRetryAttempts %d, want retries", n)
	}
	if !isGetAtt(Get(ev, "DeadLetterConfig", "Arn"), failed, "Arn") {
		t.Errorf("DeadLetterConfig.Arn, want !GetAtt %s.Arn", failed)
	}
	if v := Get(ev, "OmitName"); v == nil || v.Value != "true" {
		t.Error("OmitName is not true: SAM would name the schedule by its logical id, colliding between stacks")
	}
	if v := Get(ev, "State"); v != nil && v.Value != "ENABLED" {
		t.Errorf("the schedule's State is %s", v.Value)
	}
	// The asynchronous invocations (the schedule's) that fail go to the failed-events queue.
	dest := Get(tpl.Resource(indexerFn), "Properties", "EventInvokeConfig", "DestinationConfig", "OnFailure")
	if v := Get(dest, "Type"); v == nil || v.Value != "SQS" || !isGetAtt(Get(dest, "Destination"), failed, "Arn") {
		t.Errorf("the indexer's on-failure destination, want SQS !GetAtt %s.Arn", failed)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// statements returns the IAM statements of a function's inline policies.
func statements(tpl *Template, fn string) (out []*Node) {
	for _, pol := range Get(tpl.Resource(fn), "Properties", "Policies").Content {
		if st := Get(pol, "Statement"); st != nil {
			for _, s := range st.Content {
				// A conditional statement (!If [cond, a, b]) grants what either branch does.
				if s.Tag == "!If" && len(s.Content) == 3 {
					for _, b := range s.Content[1:] {
						if b.Kind == yaml.MappingNode {
							out = append(out, b)
						}
					}
					continue
				}
				out = append(out, s)
			}
		}
	}
	return out
}

// values returns a scalar's value or a sequence's items' values.
func values(n *Node) []string {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.ScalarNode {
		return []string{n.Value}
	}
	var out []string
	for _, c := range n.Content {
		out = append(out, c.Value)
	}
	return out
}

// grants returns a function's allowed actions, each with the resources it is
// allowed on as the template writes them (a !Sub string, or "!GetAtt Id.Attr").
func grants(tpl *Template, fn string) map[string][]string {
	g := map[string][]string{}
	for _, st := range statements(tpl, fn) {
		if Get(st, "Effect").Value != "Allow" {
			continue
		}
		res := Get(st, "Resource")
		var rs []string
		items := []*Node{res}
		if res != nil && len(res.Content) > 0 && res.Tag != "!GetAtt" {
			items = res.Content
		}
		for _, r := range items {
			if id, attr := GetAtt(r); id != "" {
				rs = append(rs, "!GetAtt "+id+"."+attr)
			} else if r != nil {
				rs = append(rs, r.Value)
			}
		}
		for _, a := range values(Get(st, "Action")) {
			g[a] = append(g[a], rs...)
		}
	}
	return g
}

func TestPermissions(t *testing.T) {
	tpl := load(t)
	ix := grants(tpl, indexerFn)
	if len(ix["s3:ListBucket"]) == 0 {
		t.Error("indexer: no s3:ListBucket (a missing key would read as 403, not 404)")
	}
	if got, want := slices.Sorted(slices.Values(ix["s3:PutObject"])),
		[]string{bucketArn + "/blobs/*", bucketArn + "/catalog/*", bucketArn + "/rendered/*"}; !slices.Equal(got, want) {
		t.Errorf("indexer PutObject on %q, want only %q", got, want)
	}
	if got := ix["s3:DeleteObject"]; !slices.Equal(got, []string{bucketArn + "/rendered/*"}) {
		t.Errorf("indexer DeleteObject on %q, want only rendered/*", got)
	}
	for a := range ix {
		if strings.HasPrefix(a, "kms:") && (a != "kms:Sign" && a != "kms:GetPublicKey" || !slices.Equal(ix[a], []string{"SigningKeyArn"})) {
			t.Errorf("indexer holds %s on %q: only Sign and GetPublicKey on the key given by parameter", a, ix[a])
		}
		if (strings.HasPrefix(a, "s3:Delete") && a != "s3:DeleteObject") || strings.Contains(a, "*") {
			t.Errorf("indexer holds %s", a)
		}
	}
	if got := ix["sqs:SendMessage"]; !slices.Contains(got, "!GetAtt "+queue+".Arn") {
		t.Errorf("indexer sqs:SendMessage on %q, want its own queue (a large re-index is fed there)", got)
	}
	ap := grants(tpl, apiFn)
	for a := range ap {
		if strings.HasPrefix(a, "kms:") {
			t.Errorf("api holds %s: the request path never signs", a)
		}
		if strings.HasPrefix(a, "s3:") && a != "s3:GetObject" && a != "s3:GetObjectVersion" && a != "s3:ListBucket" {
			t.Errorf("api holds %s; its bucket access is read-only", a)
		}
	}
	if got := ap["s3:GetObjectVersion"]; !slices.Equal(got, []string{bucketArn + "/*"}) {
		t.Errorf("api GetObjectVersion on %q, want the bucket's objects (presigned redirects pinned to a VersionId)", got)
	}
	if len(ap["cloudwatch:PutMetricData"]) == 0 || len(ix["cloudwatch:PutMetricData"]) == 0 {
		t.Error("a function cannot put its metrics")
	}
	ssm, session := false, false
	for _, pol := range Get(tpl.Resource(apiFn), "Properties", "Policies").Content {
		p := Get(pol, "SSMParameterWithSlashPrefixReadPolicy", "ParameterName")
		if isRef(p, "ApiKeyParameterName") {
			ssm = true
		}
		if p != nil && p.Tag == "!If" && len(p.Content) == 3 && p.Content[0].Value == "HasSessionSecret" && isRef(p.Content[1], "SessionSecretParameterName") {
			session = true
		}
	}
	if !session {
		t.Error("api cannot read the web catalog's session secret (SessionSecretParameterName)")
	}
	if !ssm {
		t.Error("api: no SSMParameterWithSlashPrefixReadPolicy on the API-key parameter")
	}
	if v := Get(tpl.Root, "Parameters", "ApiKeyParameterName", "Type"); v == nil || v.Value != "AWS::SSM::Parameter::Name" {
		t.Error("ApiKeyParameterName is not of type AWS::SSM::Parameter::Name")
	}
}

// TestSigningKey: the stack's signing key is an ECC_NIST_P256 SIGN_VERIFY
// key that only the indexer's role may sign with (the account administers
// it, never signs), retained; the indexer is told the key in use, the one
// created or the one given.
func TestSigningKey(t *testing.T) {
	tpl := load(t)
	key := tpl.Resource("SigningKey")
	if key == nil || Get(key, "Type").Value != "AWS::KMS::Key" || Get(key, "Condition").Value != "CreateSigningKey" {
		t.Fatal("no SigningKey (AWS::KMS::Key, created unless SigningKeyArn is given)")
	}
	for k, want := range map[string]string{"KeySpec": "ECC_NIST_P256", "KeyUsage": "SIGN_VERIFY"} {
		if v := Get(key, "Properties", k); v == nil || v.Value != want {
			t.Errorf("SigningKey %s = %v, want %s", k, v, want)
		}
	}
	for _, k := range []string{"DeletionPolicy", "UpdateReplacePolicy"} {
		if v := Get(key, k); v == nil || v.Value != "Retain" {
			t.Errorf("SigningKey %s is not Retain: clients pinned its public key", k)
		}
	}
	signers := map[string]bool{}
	for _, st := range Get(key, "Properties", "KeyPolicy", "Statement").Content {
		if Get(st, "Effect").Value != "Allow" {
			continue
		}
		principal := Get(st, "Principal", "AWS")
		who := principal.Value
		if id, attr := GetAtt(principal); id != "" {
			who = "!GetAtt " + id + "." + attr
		}
		for _, a := range values(Get(st, "Action")) {
			if a == "kms:*" || a == "*" || a == "kms:Sign" || a == "kms:Sign*" {
				signers[who] = true
			}
		}
	}
	if !signers["!GetAtt "+indexerFn+"Role.Arn"] || len(signers) != 1 {
		t.Errorf("principals that may sign: %v, want the indexer's role alone", signers)
	}
	env := Get(tpl.Resource(indexerFn), "Properties", "Environment", "Variables", "SKILLDROP_SIGNING_KEY")
	if env == nil || env.Tag != "!If" || env.Content[0].Value != "CreateSigningKey" || !isGetAtt(env.Content[1], "SigningKey", "Arn") ||
		!isRef(env.Content[2], "SigningKeyArn") {
		t.Errorf("SKILLDROP_SIGNING_KEY = %v, want !If [CreateSigningKey, !GetAtt SigningKey.Arn, !Ref SigningKeyArn]", env)
	}
	if Get(tpl.Resource(apiFn), "Properties", "Environment", "Variables", "SKILLDROP_SIGNING_KEY") != nil {
		t.Error("the API function is told the signing key: it never signs")
	}
	if p := Get(tpl.Root, "Parameters", "SigningKeyArn"); p == nil || Get(p, "Default").Value != "" {
		t.Error("no SigningKeyArn parameter defaulting to a key the stack creates")
	}
	for out, path := range map[string]string{"SigningKeyArn": "", "PublicKeyUrl": routes.SigningKey, "AICatalogUrl": routes.AICatalog} {
		v := Get(tpl.Root, "Outputs", out, "Value")
		if v == nil {
			t.Errorf("no output %s", out)
			continue
		}
		for _, c := range v.Content[1:] {
			if path != "" && !strings.HasSuffix(c.Value, path) {
				t.Errorf("output %s: %q is not the route %s", out, c.Value, path)
			}
		}
	}
}

func TestHTTPAPIRoutesEverythingToTheFunction(t *testing.T) {
	tpl := load(t)
	apis := tpl.ResourcesOfType("AWS::Serverless::HttpApi")
	if len(apis) != 1 {
		t.Fatalf("HTTP APIs %q, want one", apis)
	}
	props := Get(tpl.Resource(apis[0]), "Properties")
	if Get(props, "CorsConfiguration") != nil {
		t.Error("the HTTP API has a CorsConfiguration; CORS, 405 and the JSON 404 are the function's own")
	}
	if s := Get(props, "StageName"); s != nil && s.Value != "$default" {
		t.Errorf("stage %q: deploy at the origin root ($default)", s.Value)
	}
	if Get(props, "DefaultRouteSettings", "ThrottlingRateLimit") == nil {
		t.Error("no throttling")
	}
	var routes []string
	for _, k := range tpl.Events(apiFn, "HttpApi") {
		e := tpl.Event(apiFn, k)
		routes = append(routes, Get(e, "Method").Value+" "+Get(e, "Path").Value)
	}
	slices.Sort(routes)
	if !slices.Equal(routes, []string{"ANY /", "ANY /{proxy+}"}) {
		t.Errorf("routes %q, want ANY / and ANY /{proxy+}", routes)
	}
	rc := Get(tpl.Resource(apiFn), "Properties", "ReservedConcurrentExecutions")
	if rc == nil || rc.Tag != "!If" {
		t.Error("reserved concurrency is not a conditional parameter")
	}
	if d := Get(tpl.Root, "Parameters", "ApiReservedConcurrency", "Default"); d == nil || d.Value != "0" {
		t.Error("reserved concurrency is not off by default")
	}
}

func TestAlarmsWatchTheDimensionlessDatapoints(t *testing.T) {
	tpl := load(t)
	found := map[string]bool{}
	for _, id := range tpl.ResourcesOfType("AWS::CloudWatch::Alarm") {
		p := Get(tpl.Resource(id), "Properties")
		name := Get(p, "MetricName").Value
		if name != "DigestMismatch" && name != "UploadRejected" {
			continue
		}
		found[name] = true
		if Get(p, "Dimensions") != nil {
			t.Errorf("%s: alarm has dimensions; it must watch the datapoints without any", id)
		}
		if v := Get(p, "TreatMissingData"); v == nil || v.Value != "notBreaching" {
			t.Errorf("%s: TreatMissingData must be notBreaching", id)
		}
		if v := Get(p, "Namespace"); !isRef(v, "MetricNamespace") {
			t.Errorf("%s: namespace is not the MetricNamespace parameter", id)
		}
		if Get(p, "AlarmActions") == nil {
			t.Errorf("%s: no alarm action", id)
		}
	}
	if !found["DigestMismatch"] || !found["UploadRejected"] {
		t.Errorf("alarms found for %v, want DigestMismatch and UploadRejected", found)
	}
	if len(tpl.ResourcesOfType("AWS::SNS::Topic")) == 0 {
		t.Error("no SNS topic for the alarms")
	}
}

// sqsAlarm returns the Properties of the alarm on metric for the queue.
func sqsAlarm(tpl *Template, metric, q string) *Node {
	for _, id := range tpl.ResourcesOfType("AWS::CloudWatch::Alarm") {
		p := Get(tpl.Resource(id), "Properties")
		if v := Get(p, "Namespace"); v == nil || v.Value != "AWS/SQS" || Get(p, "MetricName").Value != metric {
			continue
		}
		dims := Get(p, "Dimensions")
		if dims != nil && len(dims.Content) == 1 && Get(dims.Content[0], "Name").Value == "QueueName" &&
			isGetAtt(Get(dims.Content[0], "Value"), q, "QueueName") {
			return p
		}
	}
	return nil
}

// TestQueueAlarms: a queue that stops draining and messages that reached the
// failed-events queue both notify.
func TestQueueAlarms(t *testing.T) {
	tpl := load(t)
	vis := intValue(t, "VisibilityTimeout", Get(tpl.Resource(queue), "Properties", "VisibilityTimeout"))
	for _, c := range []struct {
		metric, queue string
		max           int // the highest sensible threshold
	}{
		{"ApproximateAgeOfOldestMessage", queue, vis - 1}, // older than a visibility timeout: already redelivered
		{"ApproximateNumberOfMessagesVisible", failed, 1}, // one failed message is one too many
	} {
		p := sqsAlarm(tpl, c.metric, c.queue)
		if p == nil {
			t.Errorf("no alarm on %s of %s", c.metric, c.queue)
			continue
		}
		if th := intValue(t, c.metric+" threshold", Get(p, "Threshold")); th < 1 || th > c.max {
			t.Errorf("%s of %s: threshold %d, want 1 to %d", c.metric, c.queue, th, c.max)
		}
		if v := Get(p, "ComparisonOperator"); v == nil || v.Value != "GreaterThanOrEqualToThreshold" {
			t.Errorf("%s of %s: ComparisonOperator %v", c.metric, c.queue, v)
		}
		if v := Get(p, "Statistic"); v == nil || v.Value != "Maximum" {
			t.Errorf("%s of %s: Statistic %v, want Maximum", c.metric, c.queue, v)
		}
		if v := Get(p, "TreatMissingData"); v == nil || v.Value != "notBreaching" {
			t.Errorf("%s of %s: TreatMissingData must be notBreaching (an idle queue sends no datapoints)", c.metric, c.queue)
		}
		if a := Get(p, "AlarmActions"); a == nil || len(a.Content) == 0 {
			t.Errorf("%s of %s: no alarm action", c.metric, c.queue)
		}
	}
}

// TestDashboard: one dashboard names the stack's own metrics, queues,
// functions and API, with rejections broken down by reason and the content
// scan's blocks and warnings by rule.
func TestDashboard(t *testing.T) {
	tpl := load(t)
	ids := tpl.ResourcesOfType("AWS::CloudWatch::Dashboard")
	if len(ids) != 1 {
		t.Fatalf("dashboards %q, want one", ids)
	}
	body := Get(tpl.Resource(ids[0]), "Properties", "DashboardBody")
	if body == nil || body.Tag != "!Sub" {
		t.Fatal("DashboardBody is not a !Sub string")
	}
	// Every ${…} must be one CloudFormation can substitute.
	params := Keys(Get(tpl.Root, "Parameters"))
	for _, m := range regexp.MustCompile(`\$\{([^}!]+)\}`).FindAllStringSubmatch(body.Value, -1) {
		name, _, _ := strings.Cut(m[1], ".")
		if !slices.Contains(params, name) && tpl.Resource(name) == nil && !strings.HasPrefix(name, "AWS::") {
			t.Errorf("the dashboard substitutes ${%s}, which the template does not define", m[1])
		}
	}
	var doc struct {
		Widgets []struct {
			Properties struct {
				Region  string  `json:"region"`
				Metrics [][]any `json:"metrics"`
			} `json:"properties"`
		} `json:"widgets"`
	}
	if err := json.Unmarshal([]byte(body.Value), &doc); err != nil {
		t.Fatalf("DashboardBody is not JSON: %v", err)
	}
	// Each metric row as "namespace metric dim=value …"; expressions as themselves.
	var rows []string
	for i, w := range doc.Widgets {
		if w.Properties.Region != "${AWS::Region}" {
			t.Errorf("widget %d: region %q, want ${AWS::Region}", i, w.Properties.Region)
		}
		for _, m := range w.Properties.Metrics {
			var parts []string
			for j, v := range m {
				switch v := v.(type) {
				case string:
					if j >= 3 && j%2 == 1 {
						parts[len(parts)-1] += "=" + v
					} else {
						parts = append(parts, v)
					}
				case map[string]any:
					if e, ok := v["expression"].(string); ok {
						parts = append(parts, e)
					}
				}
			}
			rows = append(rows, strings.Join(parts, " "))
		}
	}
	want := []string{
		"${MetricNamespace} UploadPublished",
		"${MetricNamespace} UploadRejected",
		"${MetricNamespace} DigestMismatch",
		`SEARCH('{"${MetricNamespace}",Reason} MetricName="UploadRejected"', 'Sum', 300)`,
		"${MetricNamespace} ScanBlocked",
		"${MetricNamespace} ScanWarned",
		`SEARCH('{"${MetricNamespace}",Rule} MetricName="ScanBlocked"', 'Sum', 300)`,
		`SEARCH('{"${MetricNamespace}",Rule} MetricName="ScanWarned"', 'Sum', 300)`,
		"AWS/SQS ApproximateAgeOfOldestMessage QueueName=${" + queue + ".QueueName}",
		"AWS/SQS ApproximateNumberOfMessagesVisible QueueName=${" + queue + ".QueueName}",
		"AWS/SQS ApproximateNumberOfMessagesVisible QueueName=${" + failed + ".QueueName}",
		"AWS/ApiGateway 4xx ApiId=${" + httpAPI + "}",
		"AWS/ApiGateway 5xx ApiId=${" + httpAPI + "}",
		"AWS/ApiGateway Latency ApiId=${" + httpAPI + "}",
	}
	for _, fn := range functions {
		for _, m := range []string{"Errors", "Throttles", "Duration"} {
			want = append(want, "AWS/Lambda "+m+" FunctionName=${"+fn+"}")
		}
	}
	for _, w := range want {
		if !slices.Contains(rows, w) {
			t.Errorf("the dashboard shows no %s", w)
		}
	}
	if !t.Failed() {
		return
	}
	t.Logf("the dashboard's metrics:\n%s", strings.Join(rows, "\n"))
}

func TestOutputs(t *testing.T) {
	tpl := load(t)
	outs := Keys(Get(tpl.Root, "Outputs"))
	for _, want := range []string{"ApiUrl", "IndexUrl", "BucketName", "IndexerQueueUrl", "DashboardName", "DashboardUrl", "ReindexCommand", "ReconcileCommand"} {
		if !slices.Contains(outs, want) {
			t.Errorf("no output %s (have %q)", want, outs)
		}
	}
	for out, payload := range map[string]string{"ReindexCommand": indexer.ReindexPayload, "ReconcileCommand": indexer.ReconcilePayload} {
		if v := Get(tpl.Root, "Outputs", out, "Value"); v == nil || !strings.Contains(v.Value, "'"+payload+"'") {
			t.Errorf("%s does not send %s", out, payload)
		} else if !strings.Contains(v.Value, "--cli-read-timeout 0") {
			// The CLI gives up reading after 60 s and invokes again, while
			// the indexer may run for its whole Timeout.
			t.Errorf("%s would time out and invoke again before the indexer's timeout", out)
		}
	}
}

// TestLocalStackInitMirrorsTheNotifications: the LocalStack demo bucket
// notifies its queue for the template's prefixes and events.
func TestLocalStackInitMirrorsTheNotifications(t *testing.T) {
	tpl := load(t)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(Path()), "localstack", "init", "ready.d", "10-skilldrop.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^watched=\(([^)]*)\)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("the init script has no watched=(…) list")
	}
	got := slices.Sorted(slices.Values(strings.Fields(string(m[1]))))
	want := slices.Sorted(slices.Values(tpl.NotificationPrefixes(indexerFn)))
	if !slices.Equal(got, want) {
		t.Errorf("the init script watches %q, template.yaml %q", got, want)
	}
	if !strings.Contains(string(b), `"Events": ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"]`) {
		t.Error("the init script's notifications are not for s3:ObjectCreated:* and s3:ObjectRemoved:*")
	}
	if !strings.Contains(string(b), "SqsManagedSseEnabled=true") {
		t.Error("the init script's queue is not SSE-SQS, as IndexerQueue is")
	}
}

// TestDefaultVisibilityParameter: the deployment's default visibility is a
// parameter of the two values the indexer accepts, public unless chosen
// (a stack deployed before keeps its behaviour), handed to the indexer
// alone: the api serves what the catalog records.
func TestDefaultVisibilityParameter(t *testing.T) {
	tpl := load(t)
	p := Get(tpl.Root, "Parameters", "DefaultVisibility")
	if p == nil {
		t.Fatal("no DefaultVisibility parameter")
	}
	if d := Get(p, "Default"); d == nil || d.Value != string(catalog.Public) {
		t.Errorf("DefaultVisibility's default is %v, want public", d)
	}
	allowed := Get(p, "AllowedValues")
	var values []string
	for _, v := range allowed.Content {
		if _, err := catalog.ParseVisibility(v.Value); err != nil || v.Value == "" {
			t.Errorf("DefaultVisibility allows %q, which the indexer refuses", v.Value)
		}
		values = append(values, v.Value)
	}
	if !slices.Equal(values, []string{string(catalog.Public), string(catalog.Authenticated)}) {
		t.Errorf("DefaultVisibility allows %v, want public and authenticated", values)
	}
	if d := Get(p, "Description"); d == nil || !strings.Contains(d.Value, "the internet") {
		t.Error("DefaultVisibility's description does not say that public means the whole internet")
	}
	if !isRef(Get(tpl.Resource(indexerFn), "Properties", "Environment", "Variables", "SKILLDROP_DEFAULT_VISIBILITY"), "DefaultVisibility") {
		t.Error("the indexer's SKILLDROP_DEFAULT_VISIBILITY is not !Ref DefaultVisibility")
	}
	if Get(tpl.Resource(apiFn), "Properties", "Environment", "Variables", "SKILLDROP_DEFAULT_VISIBILITY") != nil {
		t.Error("the api is given a default visibility: only the indexer decides visibility")
	}
	var grouped bool
	for _, g := range Get(tpl.Root, "Metadata", "AWS::CloudFormation::Interface", "ParameterGroups").Content {
		for _, name := range Get(g, "Parameters").Content {
			grouped = grouped || name.Value == "DefaultVisibility"
		}
	}
	if !grouped {
		t.Error("DefaultVisibility is in no parameter group of the console's form")
	}
}

// TestBucketPolicyKeepsTheIndexersStateTheIndexers pins the statement that
// denies overwriting and deleting catalog/, blobs/ and rendered/ to every
// principal but the indexer's role and the optional break-glass role: a
// sync --delete to the bucket's root cannot remove the published state.
func TestBucketPolicyKeepsTheIndexersStateTheIndexers(t *testing.T) {
	tpl := load(t)
	var deny *Node
	for _, st := range Get(tpl.Resource("SkillBucketPolicy"), "Properties", "PolicyDocument", "Statement").Content {
		if v := Get(st, "Sid"); v != nil && v.Value == "DenyWritesToIndexerState" {
			deny = st
		}
	}
	if deny == nil {
		t.Fatal("the bucket policy has no DenyWritesToIndexerState statement")
	}
	if e := Get(deny, "Effect"); e == nil || e.Value != "Deny" || Get(deny, "Principal").Value != "*" {
		t.Errorf("want Effect Deny for Principal *")
	}
	if got, want := values(Get(deny, "Action")), []string{"s3:PutObject", "s3:DeleteObject", "s3:DeleteObjectVersion"}; !slices.Equal(got, want) {
		t.Errorf("Action %v, want %v", got, want)
	}
	var res []string
	for _, r := range Get(deny, "Resource").Content {
		res = append(res, r.Value)
	}
	if want := []string{bucketArn + "/catalog/*", bucketArn + "/blobs/*", bucketArn + "/rendered/*"}; !slices.Equal(res, want) {
		t.Errorf("Resource %v, want %v", res, want)
	}
	except := Get(deny, "Condition", "ArnNotEquals", "aws:PrincipalArn")
	if except == nil || len(except.Content) != 2 || !isGetAtt(except.Content[0], indexerFn+"Role", "Arn") {
		t.Fatalf("the exception is not the indexer's role first: %v", except)
	}
	// !If [HasBreakGlassRole, !Ref BreakGlassRoleArn, the indexer's role again]
	alt := except.Content[1]
	if alt.Tag != "!If" || len(alt.Content) != 3 || alt.Content[0].Value != "HasBreakGlassRole" ||
		!isRef(alt.Content[1], "BreakGlassRoleArn") || !isGetAtt(alt.Content[2], indexerFn+"Role", "Arn") {
		t.Errorf("the second exception is not the optional break-glass role: %v", alt)
	}
	if c := Get(tpl.Root, "Conditions", "HasBreakGlassRole"); c == nil {
		t.Error("no HasBreakGlassRole condition")
	}
	if Get(tpl.Root, "Parameters", "BreakGlassRoleArn", "Default").Value != "" {
		t.Error("BreakGlassRoleArn must default to none")
	}
}

// TestIndexerSizesTheCatalogForTheAPI pins that the indexer is told the
// api's memory from the very parameter the api's MemorySize is.
func TestIndexerSizesTheCatalogForTheAPI(t *testing.T) {
	tpl := load(t)
	if m := Get(tpl.Resource(apiFn), "Properties", "MemorySize"); !isRef(m, "ApiMemorySize") {
		t.Errorf("api MemorySize %v, want !Ref ApiMemorySize", m)
	}
	if v := Get(tpl.Resource(indexerFn), "Properties", "Environment", "Variables", "SKILLDROP_API_MEMORY_MB"); !isRef(v, "ApiMemorySize") {
		t.Errorf("indexer SKILLDROP_API_MEMORY_MB %v, want !Ref ApiMemorySize", v)
	}
	if d := intValue(t, "ApiMemorySize default", Get(tpl.Root, "Parameters", "ApiMemorySize", "Default")); d != 1024 {
		t.Errorf("ApiMemorySize default %d, want 1024", d)
	}
}
