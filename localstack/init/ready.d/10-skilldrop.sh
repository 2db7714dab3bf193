#!/bin/bash
# Creates skilldrop's demo resources in LocalStack once it is ready to serve requests:
#   - a versioned bucket (like the one template.yaml deploys),
#   - an SQS queue receiving the bucket's notifications for the keys the indexer watches, as template.yaml's
#     IndexerQueue does (the same prefixes and events, SSE-SQS, a policy admitting only this bucket of this
#     account), so the S3 event records can be read back and handed to the indexer,
#   - the SSM SecureString of API-key hashes, holding the SHA-256 of one demo key.
# Safe to run again: every step creates or overwrites to the same state.
# The test suite does not rely on any of this: its tests create uniquely named resources of their own.
set -euo pipefail

bucket=${SKILLDROP_DEMO_BUCKET:-skilldrop-demo}
queue=${SKILLDROP_DEMO_QUEUE:-skilldrop-demo-events}
parameter=${SKILLDROP_DEMO_API_KEY_PARAMETER:-/skilldrop/api-keys}
demo_key=${SKILLDROP_DEMO_API_KEY:-skilldrop-demo-key}
region=${AWS_DEFAULT_REGION:-us-east-1}
# The prefixes (and the config key) whose changes the indexer reconciles; blobs/, catalog/ and rendered/ are
# its own. internal/samtemplate checks that this list is template.yaml's.
watched=(skills/ listings/ subagents/ files/ agent-skills.yaml)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "skilldrop: bucket s3://$bucket"
if ! awslocal s3api head-bucket --bucket "$bucket" >/dev/null 2>&1; then
	if [ "$region" = us-east-1 ]; then
		awslocal s3api create-bucket --bucket "$bucket" >/dev/null
	else
		awslocal s3api create-bucket --bucket "$bucket" \
			--create-bucket-configuration "LocationConstraint=$region" >/dev/null
	fi
fi
awslocal s3api put-bucket-versioning --bucket "$bucket" --versioning-configuration Status=Enabled

echo "skilldrop: queue $queue"
queue_url=$(awslocal sqs create-queue --queue-name "$queue" --attributes SqsManagedSseEnabled=true \
	--query QueueUrl --output text)
queue_arn=$(awslocal sqs get-queue-attributes --queue-url "$queue_url" --attribute-names QueueArn \
	--query Attributes.QueueArn --output text)
account=$(awslocal sts get-caller-identity --query Account --output text)

# The queue policy real S3 needs before it accepts the notification configuration (template.yaml's
# IndexerQueuePolicy): this bucket, this account.
cat >"$tmp/queue-attributes.json" <<JSON
{
  "Policy": "{\"Version\":\"2012-10-17\",\"Statement\":[{\"Effect\":\"Allow\",\"Principal\":{\"Service\":\"s3.amazonaws.com\"},\"Action\":\"sqs:SendMessage\",\"Resource\":\"$queue_arn\",\"Condition\":{\"ArnEquals\":{\"aws:SourceArn\":\"arn:aws:s3:::$bucket\"},\"StringEquals\":{\"aws:SourceAccount\":\"$account\"}}}]}"
}
JSON
awslocal sqs set-queue-attributes --queue-url "$queue_url" --attributes "file://$tmp/queue-attributes.json"

# One configuration per watched prefix: S3 rejects overlapping filters for the same event type.
{
	printf '{"QueueConfigurations": ['
	sep=
	for prefix in "${watched[@]}"; do
		id=${prefix%/}
		printf '%s{"Id": "skilldrop-%s", "QueueArn": "%s", "Events": ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"], "Filter": {"Key": {"FilterRules": [{"Name": "prefix", "Value": "%s"}]}}}' \
			"$sep" "$id" "$queue_arn" "$prefix"
		sep=", "
	done
	printf ']}\n'
} >"$tmp/notification.json"
awslocal s3api put-bucket-notification-configuration --bucket "$bucket" \
	--notification-configuration "file://$tmp/notification.json"

# Keys are stored only as SHA-256 hashes (lowercase hex, comma-separated); the demo key itself is public.
echo "skilldrop: SecureString $parameter"
hash=$(printf %s "$demo_key" | sha256sum | cut -d' ' -f1)
awslocal ssm put-parameter --name "$parameter" --type SecureString --value "$hash" --overwrite >/dev/null

echo "skilldrop: ready (bucket $bucket, queue $queue_url, API key parameter $parameter)"
