package samtemplate

import (
	"slices"
	"strings"
	"testing"
)

// These tests pin what issue 6 and DESIGN.md require of template.yaml that
// cfn-lint does not check: a template can be lint-clean and still watch the
// wrong prefixes, grant the indexer too much, or alarm on missing data.

func load(t *testing.T) *Template {
	t.Helper()
	tpl, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

const bucketName = "${BucketNamePrefix}-${AWS::AccountId}-${AWS::Region}"

var functions = []string{"IndexerFunction", "ApiFunction"}

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

func TestBucket(t *testing.T) {
	tpl := load(t)
	b := tpl.Resource("SkillBucket")
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
	rules := Get(b, "Properties", "LifecycleConfiguration", "Rules")
	expires := false
	for _, r := range rules.Content {
		if Get(r, "NoncurrentVersionExpiration") != nil {
			expires = true
		}
	}
	if !expires {
		t.Error("no lifecycle rule expires noncurrent versions")
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

// TestNoReferenceToTheBucketCloseTheTriggerLoop: a function's policy or
// environment naming the bucket with !Ref/!GetAtt makes the S3 trigger a
// circular dependency; every mention is the same !Sub string.
func TestNoReferenceToTheBucketCloseTheTriggerLoop(t *testing.T) {
	tpl := load(t)
	check := func(where string, n *Node) {
		Walk(n, func(c *Node) {
			switch {
			case (c.Tag == "!Ref" || c.Tag == "!GetAtt") && strings.HasPrefix(c.Value, "SkillBucket"):
				t.Errorf("%s: %s %s", where, c.Tag, c.Value)
			case c.Tag == "!GetAtt" && len(c.Content) > 0 && c.Content[0].Value == "SkillBucket":
				t.Errorf("%s: !GetAtt SkillBucket", where)
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
	env := Get(tpl.Root, "Globals", "Function", "Environment", "Variables", "SKILLDROP_BUCKET")
	if env == nil || env.Tag != "!Sub" || env.Value != bucketName {
		t.Errorf("SKILLDROP_BUCKET = %v, want !Sub %s", env, bucketName)
	}
}

func TestIndexerTriggersOnTheContractPrefixesOnly(t *testing.T) {
	tpl := load(t)
	want := []string{"skills/", "listings/", "subagents/", "files/", "agent-skills.yaml"}
	got := tpl.NotificationPrefixes("IndexerFunction")
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Errorf("prefixes %q, want %q (never blobs/ or catalog/, which the indexer writes)", got, want)
	}
	for _, f := range tpl.S3Filters("IndexerFunction") {
		if !slices.Equal(f.Events, []string{"s3:ObjectCreated:*", "s3:ObjectRemoved:*"}) {
			t.Errorf("prefix %s: events %q", f.Prefix, f.Events)
		}
	}
	dest := Get(tpl.Resource("IndexerFunction"), "Properties", "EventInvokeConfig", "DestinationConfig", "OnFailure", "Type")
	if dest == nil || dest.Value != "SQS" {
		t.Error("the indexer has no SQS on-failure destination")
	}
}

// statements returns the IAM statements of a function's inline policies.
func statements(tpl *Template, fn string) (out []*Node) {
	for _, pol := range Get(tpl.Resource(fn), "Properties", "Policies").Content {
		if st := Get(pol, "Statement"); st != nil {
			out = append(out, st.Content...)
		}
	}
	return out
}

func values(n *Node) []string {
	if n == nil {
		return nil
	}
	if len(n.Content) == 0 {
		return []string{n.Value}
	}
	var out []string
	for _, c := range n.Content {
		out = append(out, c.Value)
	}
	return out
}

func TestPermissions(t *testing.T) {
	tpl := load(t)
	grants := func(fn string) map[string][]string {
		g := map[string][]string{}
		for _, st := range statements(tpl, fn) {
			if Get(st, "Effect").Value != "Allow" {
				continue
			}
			for _, a := range values(Get(st, "Action")) {
				g[a] = append(g[a], values(Get(st, "Resource"))...)
			}
		}
		return g
	}
	ix := grants("IndexerFunction")
	if len(ix["s3:ListBucket"]) == 0 {
		t.Error("indexer: no s3:ListBucket (a missing key would read as 403, not 404)")
	}
	for _, r := range ix["s3:PutObject"] {
		if !strings.HasSuffix(r, "/blobs/*") && !strings.HasSuffix(r, "/catalog/*") {
			t.Errorf("indexer may write %s; only blobs/* and catalog/*", r)
		}
	}
	if len(ix["s3:PutObject"]) != 2 {
		t.Errorf("indexer PutObject on %q, want blobs/* and catalog/*", ix["s3:PutObject"])
	}
	for a := range ix {
		if strings.HasPrefix(a, "s3:Delete") || a == "s3:*" {
			t.Errorf("indexer holds %s", a)
		}
	}
	api := grants("ApiFunction")
	for a := range api {
		if strings.HasPrefix(a, "s3:") && a != "s3:GetObject" && a != "s3:ListBucket" {
			t.Errorf("api holds %s; its bucket access is read-only", a)
		}
	}
	if len(api["cloudwatch:PutMetricData"]) == 0 || len(ix["cloudwatch:PutMetricData"]) == 0 {
		t.Error("a function cannot put its metrics")
	}
	ssm := false
	for _, pol := range Get(tpl.Resource("ApiFunction"), "Properties", "Policies").Content {
		if p := Get(pol, "SSMParameterWithSlashPrefixReadPolicy", "ParameterName"); p != nil && p.Tag == "!Ref" && p.Value == "ApiKeyParameterName" {
			ssm = true
		}
	}
	if !ssm {
		t.Error("api: no SSMParameterWithSlashPrefixReadPolicy on the API-key parameter")
	}
	if v := Get(tpl.Root, "Parameters", "ApiKeyParameterName", "Type"); v == nil || v.Value != "AWS::SSM::Parameter::Name" {
		t.Error("ApiKeyParameterName is not of type AWS::SSM::Parameter::Name")
	}
}

func TestHTTPAPIRoutesEverythingToTheFunction(t *testing.T) {
	tpl := load(t)
	apis := tpl.ResourcesOfType("AWS::Serverless::HttpApi")
	if len(apis) != 1 {
		t.Fatalf("HTTP APIs %q, want one", apis)
	}
	api := Get(tpl.Resource(apis[0]), "Properties")
	if Get(api, "CorsConfiguration") != nil {
		t.Error("the HTTP API has a CorsConfiguration; CORS, 405 and the JSON 404 are the function's own")
	}
	if s := Get(api, "StageName"); s != nil && s.Value != "$default" {
		t.Errorf("stage %q: deploy at the origin root ($default)", s.Value)
	}
	if Get(api, "DefaultRouteSettings", "ThrottlingRateLimit") == nil {
		t.Error("no throttling")
	}
	var routes []string
	events := Get(tpl.Resource("ApiFunction"), "Properties", "Events")
	for _, k := range Keys(events) {
		e := Get(events, k)
		if Get(e, "Type").Value == "HttpApi" {
			routes = append(routes, Get(e, "Properties", "Method").Value+" "+Get(e, "Properties", "Path").Value)
		}
	}
	slices.Sort(routes)
	if !slices.Equal(routes, []string{"ANY /", "ANY /{proxy+}"}) {
		t.Errorf("routes %q, want ANY / and ANY /{proxy+}", routes)
	}
	rc := Get(tpl.Resource("ApiFunction"), "Properties", "ReservedConcurrentExecutions")
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
		if v := Get(p, "Namespace"); v == nil || v.Tag != "!Ref" || v.Value != "MetricNamespace" {
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

func TestOutputs(t *testing.T) {
	tpl := load(t)
	outs := Keys(Get(tpl.Root, "Outputs"))
	for _, want := range []string{"ApiUrl", "IndexUrl", "BucketName"} {
		if !slices.Contains(outs, want) {
			t.Errorf("no output %s (have %q)", want, outs)
		}
	}
}
